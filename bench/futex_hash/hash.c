/* SPDX-License-Identifier: MIT */
/* hotlock-bench-futex-hash --scenario hash, in the child: perf's futex-hash
 * loop.  T threads, each FUTEX_WAIT|PRIVATE on its own futex words in turn
 * with a value that never matches: one op is one syscall that hashes the
 * address, takes the bucket's lock and returns EAGAIN. */
#include <errno.h>
#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fh.h"

struct hash_run {
	unsigned futexes;
	bool pin;
	int *cpus;              /* the affinity mask's CPUs */
	unsigned ncpus;
	uint32_t **words;       /* [threads][futexes], each thread's own calloc */
};

static uint64_t hash_body(struct bench_thread *t, void *arg)
{
	struct hash_run *r = arg;
	uint32_t *f = r->words[t->id];
	const unsigned n = r->futexes;
	uint64_t ops = 0;

	if (r->pin) {
		int err = bench_pin_self(r->cpus[t->id % r->ncpus]);
		if (err) {
			bench_thread_fail(t, "pthread_setaffinity_np", err);
			return 0;
		}
	}
	while (!bench_should_stop(t)) {
		for (unsigned i = 0; i < n; i++, ops++) {
			/* 1234 never matches the word (0): the kernel hashes the
			 * address, locks the bucket, reads the word, answers EAGAIN. */
			long rc = syscall(SYS_futex, &f[i], FUTEX_WAIT | FUTEX_PRIVATE_FLAG,
					  1234, NULL, NULL, 0);
			if (rc != -1 || errno != EAGAIN) {
				bench_thread_fail(t, "FUTEX_WAIT (expected EAGAIN)",
						  rc == -1 ? errno : EPROTO);
				return ops;
			}
		}
	}
	return ops;
}

void fh_child_hash(const struct fh_opts *o, const struct fh_size *z, unsigned threads,
		   struct bench_sample *s)
{
	struct hash_run r = { .futexes = o->futexes, .pin = o->pin };
	char label[96];
	cpu_set_t set;

	bench_check(sched_getaffinity(0, sizeof set, &set) ? errno : 0, "sched_getaffinity");
	r.cpus = bench_xcalloc(CPU_SETSIZE, sizeof *r.cpus);
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set))
			r.cpus[r.ncpus++] = c;
	/* One calloc'd array a thread, as perf's. */
	r.words = bench_xcalloc(threads, sizeof *r.words);
	for (unsigned i = 0; i < threads; i++)
		r.words[i] = bench_xcalloc(o->futexes, sizeof *r.words[i]);
	snprintf(label, sizeof label, "futex-hash hash=%s threads=%u", z->name, threads);
	bench_run(&(struct bench_run_spec){
			  .label = label,
			  .threads = threads,
			  .duration_s = o->duration_s,
			  .body = hash_body,
			  .arg = &r,
		  },
		  s);
	/* Raw syscalls, not hotlock's: one per op. */
	s->futex_counted = true;
	s->futex_calls = s->total_ops;
}
