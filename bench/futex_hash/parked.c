/* SPDX-License-Identifier: MIT */
/* hotlock-bench-futex-hash --scenario parked, in the child: P threads parked
 * in hl_mutex_lock on ceil(P/4) mutexes the child's main thread holds (P
 * futex words in the hash), while H hot threads hand one hl_mutex back and
 * forth with spinning off, every FH_PROBE_EVERY-th iteration timing a
 * FUTEX_WAKE on a word nobody waits on. */
#include <errno.h>
#include <linux/futex.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <hotlock/config.h>
#include <hotlock/futex.h>
#include <hotlock/mutex.h>

#include "fh.h"

/* ---- the parked threads ------------------------------------------------ */

struct parked_thread {
	hl_mutex_t *m;
	_Atomic pid_t tid;      /* set before it locks */
	bool parked;            /* seen asleep in a futex wait (main thread) */
	int err;
};

/* The parked threads of one run and the mutexes they wait on. */
struct parking {
	const char *size;       /* the hash size's name, for messages */
	unsigned parked, nm;
	unsigned char *mutexes; /* [nm] on cache lines of their own */
	pthread_t *tids;
	struct parked_thread *pts;
};

static hl_mutex_t *parking_mutex(const struct parking *p, unsigned i)
{
	return (hl_mutex_t *)(p->mutexes + (size_t)i * BENCH_CACHELINE);
}

static void *parked_main(void *arg)
{
	struct parked_thread *pt = arg;

	atomic_store(&pt->tid, (pid_t)syscall(SYS_gettid));
	pt->err = hl_mutex_lock(pt->m);
	if (!pt->err)
		pt->err = hl_mutex_unlock(pt->m);
	return NULL;
}

/* Whether thread tid sleeps in a futex wait: its wchan names a futex
 * function (futex_wait_queue, futex_do_wait: hotlock counts a wait only
 * when it returns, so its counters cannot tell).  A kernel that hides
 * wchan ("0") gets the state instead: S, sleeping. */
static bool asleep_in_futex(pid_t tid)
{
	char path[64], buf[256];
	FILE *f;
	size_t n;

	snprintf(path, sizeof path, "/proc/self/task/%d/wchan", (int)tid);
	f = fopen(path, "r");
	if (f) {
		n = fread(buf, 1, sizeof buf - 1, f);
		fclose(f);
		buf[n] = 0;
		if (strstr(buf, "futex"))
			return true;
		if (n && strcmp(buf, "0") != 0)
			return false;
	}
	snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)tid);
	f = fopen(path, "r");
	if (!f)
		return false;
	n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	const char *rp = strrchr(buf, ')');

	return rp && rp[1] == ' ' && rp[2] == 'S';
}

/* Locks the mutexes here, starts the parked threads and waits (30 s at
 * most) until each sleeps in its futex wait; returns the time that took. */
static double park_all(struct parking *p)
{
	pthread_attr_t attr;
	double t0;

	p->mutexes = bench_alloc_lines((size_t)p->nm * BENCH_CACHELINE);
	for (unsigned i = 0; i < p->nm; i++)
		bench_check(hl_mutex_lock(parking_mutex(p, i)),
			    "hl_mutex_lock (a parking mutex, by the child's main thread)");
	p->tids = bench_xcalloc(p->parked, sizeof *p->tids);
	p->pts = bench_xcalloc(p->parked, sizeof *p->pts);
	bench_check(pthread_attr_init(&attr), "pthread_attr_init");
	bench_check(pthread_attr_setstacksize(&attr, FH_PARKED_STACK),
		    "pthread_attr_setstacksize");
	t0 = bench_now();
	for (unsigned i = 0; i < p->parked; i++) {
		int err;

		p->pts[i].m = parking_mutex(p, i % p->nm);
		err = pthread_create(&p->tids[i], &attr, parked_main, &p->pts[i]);
		if (err)
			bench_fatal("%s hash=%s parked=%u: pthread_create (parked thread %u "
				    "of %u, stack %u KiB): %s", FH_ME, p->size, p->parked, i + 1,
				    p->parked, FH_PARKED_STACK / 1024, strerror(err));
	}
	bench_check(pthread_attr_destroy(&attr), "pthread_attr_destroy");
	for (unsigned left = p->parked;;) {
		for (unsigned i = 0; i < p->parked; i++) {
			pid_t tid = atomic_load(&p->pts[i].tid);

			if (!p->pts[i].parked && tid && asleep_in_futex(tid)) {
				p->pts[i].parked = true;
				left--;
			}
		}
		if (!left)
			break;
		if (bench_now() - t0 > 30)
			bench_fatal("%s hash=%s parked=%u: only %u of %u threads asleep in a "
				    "futex wait within 30 s", FH_ME, p->size, p->parked,
				    p->parked - left, p->parked);
		usleep(2000);
	}
	return bench_now() - t0;
}

/* Unlocks the mutexes: each hands itself to its waiters in turn, and each
 * parked thread locks, unlocks and returns.  Joins them by a deadline (30
 * s); returns the time that took. */
static double release_all(struct parking *p)
{
	struct timespec dl;
	double t1 = bench_now();

	for (unsigned i = 0; i < p->nm; i++)
		bench_check(hl_mutex_unlock(parking_mutex(p, i)),
			    "hl_mutex_unlock (a parking mutex)");
	clock_gettime(CLOCK_MONOTONIC, &dl);
	dl.tv_sec += 30;
	for (unsigned i = 0; i < p->parked; i++) {
		int err = pthread_clockjoin_np(p->tids[i], NULL, CLOCK_MONOTONIC, &dl);

		if (err == ETIMEDOUT)
			bench_fatal("%s hash=%s parked=%u: parked thread %u not released "
				    "within 30 s of the unlocks", FH_ME, p->size, p->parked, i);
		bench_check(err, "pthread_clockjoin_np (a parked thread)");
		if (p->pts[i].err)
			bench_fatal("%s hash=%s parked=%u: parked thread %u: %s", FH_ME,
				    p->size, p->parked, i, strerror(p->pts[i].err));
	}
	return bench_now() - t1;
}

/* ---- the hot threads --------------------------------------------------- */

struct hot_thread {
	uint32_t *probe_words;  /* [FH_PROBE_WORDS], nobody waits on them */
	uint32_t *samples;      /* [FH_PROBE_CAP] ns */
	uint64_t nsamples;
	uint64_t handovers;
} __attribute__((aligned(BENCH_CACHELINE)));

struct hot_run {
	hl_mutex_t *hot;
	int cpus[CPU_SETSIZE];  /* the affinity mask's CPUs */
	unsigned ncpus;
	unsigned last;          /* the last holder's id + 1; under hot */
	struct hot_thread *ht;  /* [hot] */
};

static uint64_t ts_ns(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * 1000000000u + (uint64_t)ts->tv_nsec;
}

/* Times one FUTEX_WAKE on the next of h's probe words (k counts them). */
static void probe(struct hot_thread *h, unsigned *k)
{
	struct timespec a, b;
	uint32_t *word = &h->probe_words[(*k)++ % FH_PROBE_WORDS];

	clock_gettime(CLOCK_MONOTONIC, &a);
	syscall(SYS_futex, word, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, 1, NULL, NULL, 0);
	clock_gettime(CLOCK_MONOTONIC, &b);
	if (h->nsamples < FH_PROBE_CAP) {
		uint64_t d = ts_ns(&b) - ts_ns(&a);

		h->samples[h->nsamples++] = d > UINT32_MAX ? UINT32_MAX : (uint32_t)d;
	}
}

static uint64_t hot_body(struct bench_thread *t, void *arg)
{
	struct hot_run *r = arg;
	struct hot_thread *h = &r->ht[t->id];
	uint64_t ops = 0;
	unsigned k = 0;
	int err;

	/* Hot thread i on the i-th CPU: unpinned, two threads that share a CPU
	 * (the other one busy) take turns by time slice, and the one running
	 * takes the free mutex for a whole slice without a handover. */
	err = bench_pin_self(r->cpus[t->id % r->ncpus]);
	if (err) {
		bench_thread_fail(t, "pthread_setaffinity_np", err);
		return 0;
	}
	while (!bench_should_stop(t)) {
		err = hl_mutex_lock(r->hot);
		if (err) {
			bench_thread_fail(t, "hl_mutex_lock", err);
			break;
		}
		if (r->last != t->id + 1) {
			h->handovers += r->last != 0;
			r->last = t->id + 1;
		}
		err = hl_mutex_unlock(r->hot);
		if (err) {
			bench_thread_fail(t, "hl_mutex_unlock", err);
			break;
		}
		if (++ops % FH_PROBE_EVERY == 0)
			probe(h, &k);
	}
	return ops;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* The handovers of the hot threads, and their probes' mean and percentiles. */
static void hot_figures(const struct hot_run *r, unsigned hot, struct fh_parked *x)
{
	uint64_t n = 0, k = 0;
	double sum = 0;

	x->thr_handovers_min = UINT64_MAX;
	for (unsigned i = 0; i < hot; i++) {
		n += r->ht[i].nsamples;
		x->handovers += r->ht[i].handovers;
		if (r->ht[i].handovers < x->thr_handovers_min)
			x->thr_handovers_min = r->ht[i].handovers;
		if (r->ht[i].handovers > x->thr_handovers_max)
			x->thr_handovers_max = r->ht[i].handovers;
	}
	uint32_t *all = bench_xcalloc(n ? n : 1, sizeof *all);

	for (unsigned i = 0; i < hot; i++)
		for (uint64_t j = 0; j < r->ht[i].nsamples; j++) {
			all[k++] = r->ht[i].samples[j];
			sum += r->ht[i].samples[j];
		}
	qsort(all, n, sizeof *all, cmp_u32);
	x->probes = n;
	x->probe_mean_ns = n ? sum / (double)n : NAN;
	x->probe_p50_ns = n ? all[(n - 1) / 2] : NAN;
	x->probe_p99_ns = n ? all[(uint64_t)((double)(n - 1) * 0.99)] : NAN;
	x->probe_max_ns = n ? all[n - 1] : NAN;
}

static uint64_t total_futex_calls(void)
{
	hl_futex_stats_t st;

	hl_futex_stats_total(&st);
	return hl_futex_stats_calls(&st);
}

void fh_child_parked(const struct fh_opts *o, const struct fh_size *z, unsigned parked,
		     struct bench_sample *s, struct fh_parked *x)
{
	struct parking p = {
		.size = z->name, .parked = parked,
		.nm = (parked + FH_WAITERS_PER_MUTEX - 1) / FH_WAITERS_PER_MUTEX,
	};
	struct hot_run r = { .hot = bench_alloc_lines(sizeof(hl_mutex_t)) };
	hl_config_t cfg;
	char label[96];
	cpu_set_t set;
	uint64_t f0;

	/* No spinning, and no stealing: each unlock with a waiter hands the
	 * mutex to it (handoff_ns 0, FIFO), so every handover is a park and a
	 * futex wake.  With stealing the unlocker takes the mutex back at once
	 * and a handover waits for the handoff deadline (about 4 ms). */
	hl_config_get(&cfg);
	cfg.spin_ns = 0;
	cfg.handoff_ns = 0;
	bench_check(hl_config_set(&cfg), "hl_config_set(spin_ns = 0, handoff_ns = 0)");
	x->parked = parked;
	x->mutexes = p.nm;
	x->hot = o->hot;
	if (parked)
		x->park_s = park_all(&p);

	bench_check(sched_getaffinity(0, sizeof set, &set) ? errno : 0, "sched_getaffinity");
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set))
			r.cpus[r.ncpus++] = c;
	r.ht = aligned_alloc(BENCH_CACHELINE, o->hot * sizeof *r.ht);
	if (!r.ht)
		bench_fatal("out of memory");
	memset(r.ht, 0, o->hot * sizeof *r.ht);
	for (unsigned i = 0; i < o->hot; i++) {
		r.ht[i].probe_words = bench_xcalloc(FH_PROBE_WORDS, sizeof(uint32_t));
		r.ht[i].samples = bench_xcalloc(FH_PROBE_CAP, sizeof(uint32_t));
	}
	snprintf(label, sizeof label, "futex-hash parked hash=%s parked=%u", z->name, parked);
	f0 = total_futex_calls();
	bench_run(&(struct bench_run_spec){
			  .label = label,
			  .threads = o->hot,
			  .duration_s = o->duration_s,
			  .body = hot_body,
			  .arg = &r,
			  .futex_counted = true,
		  },
		  s);
	x->futex_calls = total_futex_calls() - f0;
	if (parked)
		x->release_s = release_all(&p);
	hot_figures(&r, o->hot, x);
}
