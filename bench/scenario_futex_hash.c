/* SPDX-License-Identifier: MIT */
/* hotlock-bench futex-hash: the size of the kernel's futex hash (seed 002,
 * PR_FUTEX_HASH in Linux 6.16+), for perf's benchmark and for hotlock's
 * parked waiters.
 *
 * Two experiments (--scenario):
 *
 *   hash    the seed's benchmark, as `perf bench futex hash` does it: T
 *           threads, each with N private 32-bit futex words of its own (one
 *           calloc'd array, as perf's), each looping FUTEX_WAIT|PRIVATE on
 *           its words in turn with a value that never matches (1234 against
 *           0), so that every call hashes the address, takes the bucket's
 *           lock and returns EAGAIN.  One op is one syscall.  Thread i is
 *           pinned to the i-th CPU of the affinity mask, modulo their
 *           number, as perf pins its threads (--no-pin leaves them free).
 *           Reported as perf and the seed do: ops/s per thread, averaged
 *           over the threads ("Averaged N operations/sec").
 *
 *   parked  the lock-level question: P threads parked in hl_mutex_lock on
 *           ceil(P/4) hotlock mutexes that the child's main thread holds
 *           (4 waiters a mutex; hotlock parks each waiter on a futex word of
 *           its own, so P words sit in the hash), while H hot threads hand
 *           one hotlock mutex back and forth with spinning off (spin_ns 0:
 *           every handover parks the loser and the unlock wakes it with a
 *           FUTEX_WAKE).  Every 64th iteration a hot thread times one
 *           FUTEX_WAKE on a word of its own that nobody waits on (the next
 *           of 64 such words in turn, so that the probes see many buckets,
 *           not one): the kernel looks the bucket up, and where parked
 *           waiters hash there it takes the bucket lock and walks their
 *           chain.  The time is two clock_gettime(CLOCK_MONOTONIC) around
 *           the raw syscall, so it includes one clock read (about 20 ns).
 *
 * The hash sizes (--hash): global (hl_futex_hash_set(0): the kernel's one
 * table for the whole machine), default (nothing set: the kernel gives the
 * process a private table at its first thread, and hotlock's own policy,
 * HOTLOCK_FUTEX_HASH, unset = auto, may grow it with the threads hotlock
 * knows of; the slots before and after the run are printed), and N, a
 * power of two from 2 to 2^20 (hl_futex_hash_set(N), which also stops
 * hotlock's auto policy).
 *
 * Each (size, threads) run is made in a fresh child process: the switch to
 * the global table is one-way and a private table once made stays, so a
 * process cannot try two sizes honestly.  The parent never creates a thread
 * (it forks, collects, prints); the child sets the size before it has any
 * thread, creates and joins one thread (the point where the kernel makes
 * its default private table), reads the size back with hl_futex_hash_get
 * and refuses a mismatch (a line on stdout, and that size is skipped from
 * then on), runs, reads the size again, and writes its result into a pipe.
 * A child that does not answer within duration + 60 s is killed (exit 1).
 *
 * Repeats: for each threads (hash) or parked count (parked), the sizes are
 * interleaved within each repeat; the median run is shown (by ops/s, by
 * handovers/s), the JSON keeps them all. */
#include <errno.h>
#include <linux/futex.h>
#include <math.h>
#include <poll.h>
#include <stddef.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <hotlock/config.h>
#include <hotlock/futex.h>
#include <hotlock/mutex.h>

#include "harness.h"

static const char *const me = "futex-hash";

#define FH_MAX_SIZES    32u
#define FH_MAX_SLOTS    (1u << 20)
#define FH_MAX_FUTEXES  (1u << 20)
#define FH_MAX_PARKED   8192u
#define FH_MAX_HOT      64u
#define FH_PROBE_EVERY  64u
#define FH_PROBE_WORDS  64u
#define FH_PROBE_CAP    (1u << 20)      /* samples kept per hot thread */
#define FH_PARKED_STACK (64u * 1024u)
#define FH_WAITERS_PER_MUTEX 4u

enum fh_scenario { SC_HASH, SC_PARKED };
enum { SIZE_GLOBAL = -1, SIZE_DEFAULT = -2 };

struct fh_size {
	long slots;             /* SIZE_GLOBAL, SIZE_DEFAULT or a power of two */
	char name[24];          /* "global", "default", "256" */
	bool skipped;           /* the kernel refused it, or reported another size */
	char why[200];
};

struct fh_opts {
	enum fh_scenario scenario;
	unsigned threads[BENCH_MAX_THREAD_COUNTS];
	size_t nthreads;
	unsigned parked[BENCH_MAX_THREAD_COUNTS];
	size_t nparked;
	struct fh_size sizes[FH_MAX_SIZES];
	size_t nsizes;
	unsigned futexes;
	unsigned hot;
	double duration_s;
	unsigned repeat;
	const char *json;
	bool pin;
};

/* ---- the command line ------------------------------------------------------ */

static void fh_help(FILE *f)
{
	fprintf(f,
		"Usage: hotlock-bench futex-hash [--scenario hash|parked] [--threads LIST]\n"
		"                                [--futexes N] [--parked LIST] [--hot H]\n"
		"                                [--hash LIST] [--duration S] [--repeat R]\n"
		"                                [--no-pin] [--json FILE]\n"
		"\n"
		"Seed 002 (a futex hash per process; PR_FUTEX_HASH, Linux 6.16+): what the\n"
		"size of the kernel's futex hash table costs.  Each (hash size, threads) run\n"
		"is made in a fresh child process that sets the size before it has a thread\n"
		"and checks with hl_futex_hash_get that the kernel took it.\n"
		"\n"
		"  --scenario hash     perf bench futex hash: T threads, each FUTEX_WAITing\n"
		"                      with a value that never matches on its N private futex\n"
		"                      words in turn (EAGAIN every time; one op = one\n"
		"                      syscall, every one takes a bucket lock).  Prints the\n"
		"                      seed's tables: per-thread average ops/s (perf's\n"
		"                      'Averaged') by threads x hash size and the ratio to\n"
		"                      global; 'the full run' (threads = CPUs online, as perf's\n"
		"                      default and the seed's one process per node); then\n"
		"                      per threads: total ops/s, per-thread min/avg/max, CPU\n"
		"                      ns per op.  (default)\n"
		"  --scenario parked   P threads parked in hl_mutex_lock (4 on each of P/4\n"
		"                      held mutexes: P futex words in the hash) while H hot\n"
		"                      threads hand one hl_mutex back and forth, spinning off;\n"
		"                      every %u-th iteration a hot thread times a FUTEX_WAKE on\n"
		"                      a word nobody waits on (a bucket lookup past the parked\n"
		"                      waiters that hash there).  Prints handovers/s, futex\n"
		"                      calls per handover and the probe's mean/median/p99 ns.\n"
		"  --threads LIST      hash: threads per run (default 1,2,4,8,16; at most %u)\n"
		"  --futexes N         hash: futex words per thread (default 1024, perf's)\n"
		"  --parked LIST       parked: parked threads per run, 0 to %u (default\n"
		"                      256,1024)\n"
		"  --hot H             parked: hot threads, 1 to %u (default 2)\n"
		"  --hash LIST         of global (the kernel's shared table: hl_futex_hash_set\n"
		"                      (0)), default (nothing set: the kernel's own private\n"
		"                      table, and hotlock's HOTLOCK_FUTEX_HASH policy, auto\n"
		"                      unless set, which may grow it), and powers of two from 2\n"
		"                      to 2^20 (a private table of that many slots).  Default:\n"
		"                      hash: global,default,4,8,16,32,64,128,256,512,1024,2048\n"
		"                      parked: global,default,16,256,4096,65536\n"
		"  --duration S        seconds per run (default 1)\n"
		"  --repeat R          runs per (size, threads), sizes interleaved; the median\n"
		"                      run is shown, the JSON keeps all (default 3)\n"
		"  --no-pin            hash: leave the threads unpinned (perf pins thread i to\n"
		"                      CPU i mod CPUs; so does this by default)\n"
		"  --json FILE         also write the results as JSON to FILE\n"
		"  --help              this text\n"
		"\n"
		"The kernel's choice for a process that sets nothing: the global table until\n"
		"its first thread, then a private one of 16 slots (4 x min(threads, CPUs),\n"
		"at least 16).  The global table is shared with every process on the\n"
		"machine, so other load shows in its column.\n",
		FH_PROBE_EVERY, BENCH_MAX_THREADS, FH_MAX_PARKED, FH_MAX_HOT);
}

static void add_unique(unsigned *list, size_t *n, unsigned v, const char *opt)
{
	if (*n == BENCH_MAX_THREAD_COUNTS)
		bench_usage_error(me, "%s: more than %u entries", opt, BENCH_MAX_THREAD_COUNTS);
	for (size_t i = 0; i < *n; i++)
		if (list[i] == v)
			bench_usage_error(me, "%s: %u listed twice", opt, v);
	list[(*n)++] = v;
}

static void threads_item(void *ctx, const char *e)
{
	struct fh_opts *o = ctx;

	add_unique(o->threads, &o->nthreads,
		   (unsigned)bench_parse_ulong(me, "--threads", e, 1, BENCH_MAX_THREADS), "--threads");
}

static void parked_item(void *ctx, const char *e)
{
	struct fh_opts *o = ctx;

	add_unique(o->parked, &o->nparked,
		   (unsigned)bench_parse_ulong(me, "--parked", e, 0, FH_MAX_PARKED), "--parked");
}

static void hash_item(void *ctx, const char *e)
{
	struct fh_opts *o = ctx;
	struct fh_size s = { 0 };

	if (o->nsizes == FH_MAX_SIZES)
		bench_usage_error(me, "--hash: more than %u entries", FH_MAX_SIZES);
	if (strcmp(e, "global") == 0) {
		s.slots = SIZE_GLOBAL;
	} else if (strcmp(e, "default") == 0) {
		s.slots = SIZE_DEFAULT;
	} else if (e[0] >= '0' && e[0] <= '9') {
		unsigned long n = bench_parse_ulong(me, "--hash", e, 2, FH_MAX_SLOTS);

		if (n & (n - 1))
			bench_usage_error(me, "--hash: %lu is not a power of two", n);
		s.slots = (long)n;
	} else {
		bench_usage_error(me, "--hash: unknown size '%s'; valid: global, default, "
				  "or a power of two from 2 to %u", e, FH_MAX_SLOTS);
	}
	for (size_t i = 0; i < o->nsizes; i++)
		if (o->sizes[i].slots == s.slots)
			bench_usage_error(me, "--hash: '%s' listed twice", e);
	if (s.slots > 0)
		snprintf(s.name, sizeof s.name, "%ld", s.slots);
	else
		snprintf(s.name, sizeof s.name, "%s", e);
	o->sizes[o->nsizes++] = s;
}

/* The command line as parse reads it: the options, --hash as given and
 * which options were given. */
struct fh_parse {
	struct fh_opts *o;
	const char *hash;
	bool futexes_given, threads_given, parked_given, hot_given;
};

/* Consumes argv[*i] if it is one of futex-hash's options (bench_parse_args). */
static bool fh_option(void *ctx, int argc, char **argv, int *i)
{
	struct fh_parse *p = ctx;
	struct fh_opts *o = p->o;
	const char *v;

	if ((v = bench_opt_value(me, argc, argv, i, "--scenario"))) {
		if (strcmp(v, "hash") == 0)
			o->scenario = SC_HASH;
		else if (strcmp(v, "parked") == 0)
			o->scenario = SC_PARKED;
		else
			bench_usage_error(me, "--scenario: unknown '%s'; valid: hash, parked", v);
	} else if ((v = bench_opt_value(me, argc, argv, i, "--threads"))) {
		o->nthreads = 0;
		bench_list_each(me, "--threads", v, threads_item, o);
		p->threads_given = true;
	} else if ((v = bench_opt_value(me, argc, argv, i, "--parked"))) {
		o->nparked = 0;
		bench_list_each(me, "--parked", v, parked_item, o);
		p->parked_given = true;
	} else if ((v = bench_opt_value(me, argc, argv, i, "--futexes"))) {
		o->futexes = (unsigned)bench_parse_ulong(me, "--futexes", v, 1, FH_MAX_FUTEXES);
		p->futexes_given = true;
	} else if ((v = bench_opt_value(me, argc, argv, i, "--hot"))) {
		o->hot = (unsigned)bench_parse_ulong(me, "--hot", v, 1, FH_MAX_HOT);
		p->hot_given = true;
	} else if ((v = bench_opt_value(me, argc, argv, i, "--hash"))) {
		p->hash = v;
	} else if (strcmp(argv[*i], "--no-pin") == 0) {
		o->pin = false;
	} else {
		return bench_run_option(me, argc, argv, i, &o->duration_s, &o->repeat,
					&o->json);
	}
	return true;
}

static void parse(int argc, char **argv, struct fh_opts *o)
{
	struct fh_parse p = { .o = o };
	const char *hash;

	memset(o, 0, sizeof *o);
	o->scenario = SC_HASH;
	o->futexes = 1024;
	o->hot = 2;
	o->duration_s = 1;
	o->repeat = 3;
	o->pin = true;
	bench_parse_args(me, argc, argv, NULL, fh_help, fh_option, &p);
	hash = p.hash;
	if (o->scenario == SC_HASH && (p.parked_given || p.hot_given))
		bench_usage_error(me, "--parked and --hot are options of --scenario parked");
	if (o->scenario == SC_PARKED && (p.threads_given || p.futexes_given || !o->pin))
		bench_usage_error(me, "--threads, --futexes and --no-pin are options of --scenario hash");
	if (!hash)
		hash = o->scenario == SC_HASH ? "global,default,4,8,16,32,64,128,256,512,1024,2048"
					      : "global,default,16,256,4096,65536";
	bench_list_each(me, "--hash", hash, hash_item, o);
	if (!o->nthreads) {
		static const unsigned d[] = { 1, 2, 4, 8, 16 };

		memcpy(o->threads, d, sizeof d);
		o->nthreads = sizeof d / sizeof d[0];
	}
	if (!o->nparked) {
		o->parked[0] = 256;
		o->parked[1] = 1024;
		o->nparked = 2;
	}
	qsort(o->threads, o->nthreads, sizeof o->threads[0], bench_cmp_unsigned);
	qsort(o->parked, o->nparked, sizeof o->parked[0], bench_cmp_unsigned);
}

/* ---- what a child sends back ------------------------------------------------ */

/* The parked experiment's own figures for one run (a sample's extra). */
struct fh_parked {
	unsigned parked, mutexes, hot;
	uint64_t handovers;     /* acquisitions that followed the other thread's */
	uint64_t futex_calls;   /* hl_futex_stats_total over the run, all threads */
	uint64_t probes;        /* probe samples kept */
	double probe_mean_ns, probe_p50_ns, probe_p99_ns, probe_max_ns;
	uint64_t thr_handovers_min, thr_handovers_max;
	double park_s;          /* time for the P threads to park */
	double release_s;       /* time to release and join them */
};

/* The fixed part of a child's answer; thread_ops[threads] follow it. */
struct fh_wire {
	int status;             /* 0 ran; 1 skipped (why) */
	char why[200];
	int slots_first;        /* kernel's size after the first thread (-1: unknown) */
	int slots_after;        /* after the run */
	unsigned threads;
	uint64_t total_ops, futex_calls, csw;
	bool futex_counted;
	double cpu_s, wall_s, ops_per_sec, other_cpus;
	struct fh_parked parked;
};

struct fh_result {
	int slots_first, slots_after;
	struct bench_sample s;  /* extra: a struct fh_parked (parked) */
};

static void write_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t w = write(fd, c, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			_exit(3);
		c += w;
		n -= (size_t)w;
	}
}

/* ---- in the child: the size ------------------------------------------------ */

static void *noop_thread(void *arg)
{
	return arg;
}

/* Sets the size (before any thread), creates and joins one thread, reads the
 * size back.  Returns false (and fills why) when the kernel did not take it. */
static bool child_set_size(const struct fh_size *z, struct fh_wire *w)
{
	int err = 0;
	unsigned got = 0;
	pthread_t t;

	w->slots_first = -1;
	w->slots_after = -1;
	if (z->slots == SIZE_GLOBAL)
		err = hl_futex_hash_set(0);
	else if (z->slots > 0)
		err = hl_futex_hash_set((unsigned)z->slots);
	if (err) {
		snprintf(w->why, sizeof w->why, "hl_futex_hash_set(%ld): %s",
			 z->slots > 0 ? z->slots : 0, strerror(err));
		return false;
	}
	bench_check(pthread_create(&t, NULL, noop_thread, NULL), "pthread_create (first thread)");
	bench_check(pthread_join(t, NULL), "pthread_join (first thread)");
	err = hl_futex_hash_get(&got);
	if (err) {
		snprintf(w->why, sizeof w->why, "hl_futex_hash_get: %s", strerror(err));
		return false;
	}
	w->slots_first = (int)got;
	if (z->slots == SIZE_GLOBAL && got != 0) {
		snprintf(w->why, sizeof w->why, "asked for the global table, the kernel reports "
			 "a private one of %u slots", got);
		return false;
	}
	if (z->slots > 0 && got != (unsigned)z->slots) {
		snprintf(w->why, sizeof w->why, "asked for %ld slots, the kernel reports %u%s",
			 z->slots, got, got ? "" : " (global)");
		return false;
	}
	return true;
}

static void wire_sample(struct fh_wire *w, const struct bench_sample *s)
{
	w->threads = s->threads;
	w->total_ops = s->total_ops;
	w->futex_calls = s->futex_calls;
	w->futex_counted = s->futex_counted;
	w->csw = s->csw;
	w->cpu_s = s->cpu_s;
	w->wall_s = s->wall_s;
	w->ops_per_sec = s->ops_per_sec;
	w->other_cpus = s->other_cpus;
}

static void child_send(int fd, struct fh_wire *w, const uint64_t *thread_ops)
{
	unsigned got;

	if (w->status == 0 && hl_futex_hash_get(&got) == 0)
		w->slots_after = (int)got;
	write_all(fd, w, sizeof *w);
	if (w->status == 0)
		write_all(fd, thread_ops, w->threads * sizeof *thread_ops);
}

/* ---- in the child: perf's futex-hash ---------------------------------------- */

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

static void child_hash(const struct fh_opts *o, const struct fh_size *z, unsigned threads,
		       int fd)
{
	struct fh_wire w = { 0 };
	struct hash_run r = { .futexes = o->futexes, .pin = o->pin };
	struct bench_sample s;
	char label[96];
	cpu_set_t set;

	if (!child_set_size(z, &w)) {
		w.status = 1;
		child_send(fd, &w, NULL);
		return;
	}
	bench_check(sched_getaffinity(0, sizeof set, &set) ? errno : 0, "sched_getaffinity");
	r.cpus = bench_xcalloc(CPU_SETSIZE, sizeof *r.cpus);
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set))
			r.cpus[r.ncpus++] = c;
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
		  &s);
	wire_sample(&w, &s);
	/* Raw syscalls, not hotlock's: one per op. */
	w.futex_counted = true;
	w.futex_calls = s.total_ops;
	child_send(fd, &w, s.thread_ops);
}

/* ---- in the child: parked waiters and a hot handover ------------------------ */

struct parked_thread {
	hl_mutex_t *m;
	_Atomic pid_t tid;      /* set before it locks */
	bool parked;            /* seen asleep in a futex wait (main thread) */
	int err;
};

struct hot_thread {
	uint32_t *probe_words;  /* [FH_PROBE_WORDS], nobody waits on them */
	uint32_t *samples;      /* [FH_PROBE_CAP] ns */
	uint64_t nsamples;
	uint64_t handovers;
} __attribute__((aligned(BENCH_CACHELINE)));

struct parked_run {
	hl_mutex_t *hot;
	int cpus[CPU_SETSIZE];  /* the affinity mask's CPUs */
	unsigned ncpus;
	unsigned last;          /* the last holder's id + 1; under hot */
	struct hot_thread *ht;  /* [hot] */
};

static void *parked_main(void *p)
{
	struct parked_thread *pt = p;

	atomic_store(&pt->tid, (pid_t)syscall(SYS_gettid));
	pt->err = hl_mutex_lock(pt->m);
	if (!pt->err)
		pt->err = hl_mutex_unlock(pt->m);
	return NULL;
}

static uint64_t ts_ns(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * 1000000000u + (uint64_t)ts->tv_nsec;
}

static uint64_t hot_body(struct bench_thread *t, void *arg)
{
	struct parked_run *r = arg;
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
		if (++ops % FH_PROBE_EVERY == 0) {
			struct timespec a, b;
			uint32_t *word = &h->probe_words[k++ % FH_PROBE_WORDS];

			clock_gettime(CLOCK_MONOTONIC, &a);
			syscall(SYS_futex, word, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, 1, NULL, NULL, 0);
			clock_gettime(CLOCK_MONOTONIC, &b);
			if (h->nsamples < FH_PROBE_CAP) {
				uint64_t d = ts_ns(&b) - ts_ns(&a);

				h->samples[h->nsamples++] = d > UINT32_MAX ? UINT32_MAX : (uint32_t)d;
			}
		}
	}
	return ops;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

static uint64_t total_futex_calls(void)
{
	hl_futex_stats_t st;

	hl_futex_stats_total(&st);
	return hl_futex_stats_calls(&st);
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

static void child_parked(const struct fh_opts *o, const struct fh_size *z, unsigned parked,
			 int fd)
{
	struct fh_wire w = { 0 };
	struct fh_parked *x = &w.parked;
	const unsigned nm = (parked + FH_WAITERS_PER_MUTEX - 1) / FH_WAITERS_PER_MUTEX;
	hl_config_t cfg;
	char label[96];
	struct bench_sample s;
	pthread_attr_t attr;
	pthread_t *tids = NULL;
	struct parked_thread *pts = NULL;
	unsigned char *mutexes = NULL;
	uint64_t f0;
	double t0;

	if (!child_set_size(z, &w)) {
		w.status = 1;
		child_send(fd, &w, NULL);
		return;
	}
	/* No spinning, and no stealing: each unlock with a waiter hands the
	 * mutex to it (handoff_ns 0, FIFO), so every handover is a park and a
	 * futex wake.  With stealing the unlocker takes the mutex back at once
	 * and a handover waits for the handoff deadline (about 4 ms). */
	hl_config_get(&cfg);
	cfg.spin_ns = 0;
	cfg.handoff_ns = 0;
	bench_check(hl_config_set(&cfg), "hl_config_set(spin_ns = 0, handoff_ns = 0)");
	x->parked = parked;
	x->mutexes = nm;
	x->hot = o->hot;

	/* The parked threads: each mutex on a cache line of its own, held here. */
	if (parked) {
		mutexes = bench_alloc_lines((size_t)nm * BENCH_CACHELINE);
		for (unsigned i = 0; i < nm; i++)
			bench_check(hl_mutex_lock((hl_mutex_t *)(mutexes + (size_t)i * BENCH_CACHELINE)),
				    "hl_mutex_lock (a parking mutex, by the child's main thread)");
		tids = bench_xcalloc(parked, sizeof *tids);
		pts = bench_xcalloc(parked, sizeof *pts);
		bench_check(pthread_attr_init(&attr), "pthread_attr_init");
		bench_check(pthread_attr_setstacksize(&attr, FH_PARKED_STACK),
			    "pthread_attr_setstacksize");
		t0 = bench_now();
		for (unsigned i = 0; i < parked; i++) {
			int err;

			pts[i].m = (hl_mutex_t *)(mutexes + (size_t)(i % nm) * BENCH_CACHELINE);
			err = pthread_create(&tids[i], &attr, parked_main, &pts[i]);
			if (err)
				bench_fatal("%s hash=%s parked=%u: pthread_create (parked thread %u "
					    "of %u, stack %u KiB): %s", me, z->name, parked, i + 1,
					    parked, FH_PARKED_STACK / 1024, strerror(err));
		}
		bench_check(pthread_attr_destroy(&attr), "pthread_attr_destroy");
		/* Until every parked thread sleeps in its futex wait; 30 s. */
		for (unsigned left = parked;;) {
			for (unsigned i = 0; i < parked; i++) {
				pid_t tid = atomic_load(&pts[i].tid);

				if (!pts[i].parked && tid && asleep_in_futex(tid)) {
					pts[i].parked = true;
					left--;
				}
			}
			if (!left)
				break;
			if (bench_now() - t0 > 30)
				bench_fatal("%s hash=%s parked=%u: only %u of %u threads asleep in a "
					    "futex wait within 30 s", me, z->name, parked,
					    parked - left, parked);
			usleep(2000);
		}
		x->park_s = bench_now() - t0;
			}

	struct parked_run r = { .hot = bench_alloc_lines(sizeof(hl_mutex_t)) };
	cpu_set_t set;

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
		  &s);
	x->futex_calls = total_futex_calls() - f0;

	/* Release: every mutex unlocked hands it to its 4 waiters in turn;
	 * each parked thread locks, unlocks and returns.  Joined by a deadline. */
	if (parked) {
		struct timespec dl;
		double t1 = bench_now();

		for (unsigned i = 0; i < nm; i++)
			bench_check(hl_mutex_unlock((hl_mutex_t *)(mutexes + (size_t)i * BENCH_CACHELINE)),
				    "hl_mutex_unlock (a parking mutex)");
		clock_gettime(CLOCK_MONOTONIC, &dl);
		dl.tv_sec += 30;
		for (unsigned i = 0; i < parked; i++) {
			int err = pthread_clockjoin_np(tids[i], NULL, CLOCK_MONOTONIC, &dl);

			if (err == ETIMEDOUT)
				bench_fatal("%s hash=%s parked=%u: parked thread %u not released "
					    "within 30 s of the unlocks", me, z->name, parked, i);
			bench_check(err, "pthread_clockjoin_np (a parked thread)");
			if (pts[i].err)
				bench_fatal("%s hash=%s parked=%u: parked thread %u: %s", me,
					    z->name, parked, i, strerror(pts[i].err));
		}
		x->release_s = bench_now() - t1;
	}

	/* The probes of all hot threads, and the handovers. */
	uint64_t n = 0;

	x->thr_handovers_min = UINT64_MAX;
	for (unsigned i = 0; i < o->hot; i++) {
		n += r.ht[i].nsamples;
		x->handovers += r.ht[i].handovers;
		if (r.ht[i].handovers < x->thr_handovers_min)
			x->thr_handovers_min = r.ht[i].handovers;
		if (r.ht[i].handovers > x->thr_handovers_max)
			x->thr_handovers_max = r.ht[i].handovers;
	}
	uint32_t *all = bench_xcalloc(n ? n : 1, sizeof *all);
	uint64_t k = 0;
	double sum = 0;

	for (unsigned i = 0; i < o->hot; i++)
		for (uint64_t j = 0; j < r.ht[i].nsamples; j++) {
			all[k++] = r.ht[i].samples[j];
			sum += r.ht[i].samples[j];
		}
	qsort(all, n, sizeof *all, cmp_u32);
	x->probes = n;
	x->probe_mean_ns = n ? sum / (double)n : NAN;
	x->probe_p50_ns = n ? all[(n - 1) / 2] : NAN;
	x->probe_p99_ns = n ? all[(uint64_t)((double)(n - 1) * 0.99)] : NAN;
	x->probe_max_ns = n ? all[n - 1] : NAN;
	wire_sample(&w, &s);
	child_send(fd, &w, s.thread_ops);
}

/* ---- in the parent: one run in a child -------------------------------------- */

static bool read_all(int fd, void *p, size_t n, double deadline)
{
	char *c = p;

	while (n) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		double left = deadline - bench_now();
		int pr;

		if (left <= 0)
			return false;
		pr = poll(&pfd, 1, (int)(left * 1000) + 1);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr <= 0)
			return false;
		ssize_t r = read(fd, c, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return false;
		c += r;
		n -= (size_t)r;
	}
	return true;
}

/* Runs one (size, count) in a fresh child.  Returns false (with z marked
 * skipped) when the kernel did not take the size. */
static bool run_child(const struct fh_opts *o, struct fh_size *z, unsigned count,
		      struct fh_result *out)
{
	int pfd[2];
	pid_t pid;
	struct fh_wire w;
	int status;
	/* Setting up 1024 parked threads and joining them takes a while. */
	const double allowed = o->duration_s + 60 + (o->scenario == SC_PARKED ? 60 : 0);
	bool ok;

	bench_check(pipe(pfd) ? errno : 0, "pipe");
	fflush(NULL);   /* the child must not write what the parent buffered */
	pid = fork();
	if (pid < 0)
		bench_fatal("fork: %s", strerror(errno));
	if (pid == 0) {
		close(pfd[0]);
		if (o->scenario == SC_HASH)
			child_hash(o, z, count, pfd[1]);
		else
			child_parked(o, z, count, pfd[1]);
		_exit(0);
	}
	close(pfd[1]);
	ok = read_all(pfd[0], &w, sizeof w, bench_now() + allowed);
	uint64_t *ops = NULL;

	if (ok && w.status == 0) {
		ops = bench_xcalloc(w.threads, sizeof *ops);
		ok = read_all(pfd[0], ops, w.threads * sizeof *ops, bench_now() + 10);
	}
	close(pfd[0]);
	if (!ok) {
		kill(pid, SIGKILL);
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		if (WIFSIGNALED(status) && WTERMSIG(status) != SIGKILL)
			bench_fatal("%s hash=%s %s=%u: the child was killed by signal %d (%s)", me,
				    z->name, o->scenario == SC_HASH ? "threads" : "parked", count,
				    WTERMSIG(status), strsignal(WTERMSIG(status)));
		if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
			bench_fatal("%s hash=%s %s=%u: the child failed (exit %d; its message is "
				    "above)", me, z->name,
				    o->scenario == SC_HASH ? "threads" : "parked", count,
				    WEXITSTATUS(status));
		bench_fatal("%s hash=%s %s=%u: no answer from the child within %.0f s; killed",
			    me, z->name, o->scenario == SC_HASH ? "threads" : "parked", count,
			    allowed);
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		bench_fatal("%s hash=%s: the child ended badly (status 0x%x)", me, z->name, status);
	if (w.status != 0) {
		z->skipped = true;
		snprintf(z->why, sizeof z->why, "%s", w.why);
		return false;
	}
	memset(out, 0, sizeof *out);
	out->slots_first = w.slots_first;
	out->slots_after = w.slots_after;
	out->s.threads = w.threads;
	out->s.total_ops = w.total_ops;
	out->s.thread_ops = ops;
	out->s.futex_counted = w.futex_counted;
	out->s.futex_calls = w.futex_calls;
	out->s.csw = w.csw;
	out->s.cpu_s = w.cpu_s;
	out->s.wall_s = w.wall_s;
	out->s.ops_per_sec = w.ops_per_sec;
	out->s.other_cpus = w.other_cpus;
	out->s.cross_node_share = NAN;
	if (o->scenario == SC_PARKED) {
		struct fh_parked *x = bench_xcalloc(1, sizeof *x);

		*x = w.parked;
		out->s.extra = x;
	}
	return true;
}

/* ---- in the parent: tables --------------------------------------------------- */

/* All runs of one (size, count). */
struct fh_cell {
	struct fh_result *runs; /* [repeat] */
	unsigned n;             /* runs made */
	unsigned median;
};

static double per_thread_avg(const struct bench_sample *s)
{
	return s->threads && s->wall_s > 0 ? (double)s->total_ops / s->threads / s->wall_s : NAN;
}

static double handovers_per_s(const struct bench_sample *s)
{
	const struct fh_parked *x = s->extra;

	return s->wall_s > 0 ? (double)x->handovers / s->wall_s : NAN;
}

static const struct fh_result *cell_run(const struct fh_cell *c)
{
	return c->n ? &c->runs[c->median] : NULL;
}

static void finish_cell(struct fh_cell *c, double (*key)(const struct bench_sample *s))
{
	struct bench_sample tmp[100];

	if (!c->n)
		return;
	for (unsigned i = 0; i < c->n; i++)
		tmp[i] = c->runs[i].s;
	c->median = bench_median_run(tmp, c->n, key);
}

static void slots_text(char *buf, size_t len, const struct fh_result *r)
{
	if (r->slots_first == r->slots_after)
		snprintf(buf, len, "%d", r->slots_first);
	else
		snprintf(buf, len, "%d->%d", r->slots_first, r->slots_after);
}

static void print_skips(const struct fh_opts *o)
{
	for (size_t z = 0; z < o->nsizes; z++)
		if (o->sizes[z].skipped)
			printf("hash %s: skipped: %s\n", o->sizes[z].name, o->sizes[z].why);
}

/* The column heading of a size, as the seed writes them (G, P 16), with the
 * kernel's size for default. */
static void size_head(char *buf, size_t len, const struct fh_size *z, const struct fh_cell *c)
{
	if (z->slots == SIZE_GLOBAL)
		snprintf(buf, len, "G");
	else if (z->slots == SIZE_DEFAULT) {
		const struct fh_result *r = c ? cell_run(c) : NULL;

		if (r && r->slots_first == r->slots_after)
			snprintf(buf, len, "def(%d)", r->slots_first);
		else
			snprintf(buf, len, "default");
	} else
		snprintf(buf, len, "P %ld", z->slots);
}

/* The index of the global table's size where it was measured, else nsizes. */
static size_t global_size(const struct fh_opts *o)
{
	size_t g = o->nsizes;

	for (size_t z = 0; z < o->nsizes; z++)
		if (o->sizes[z].slots == SIZE_GLOBAL && !o->sizes[z].skipped)
			g = z;
	return g;
}

/* Whether count is one of --threads (the counts run also hold the full run's). */
static bool threads_listed(const struct fh_opts *o, unsigned count)
{
	for (size_t k = 0; k < o->nthreads; k++)
		if (o->threads[k] == count)
			return true;
	return false;
}

/* The heads of the sizes measured, " %10s" each, and a newline. */
static void print_size_heads(const struct fh_opts *o, const struct fh_cell *cells)
{
	char head[32];

	for (size_t z = 0; z < o->nsizes; z++) {
		if (o->sizes[z].skipped)
			continue;
		size_head(head, sizeof head, &o->sizes[z], &cells[z]);
		printf(" %10s", head);
	}
	printf("\n");
}

/* The cells of one thread count (row: its cell per size): each measured
 * size's ops/s per thread, or with base (a cell of row) its ratio to base's. */
static void print_avg_cells(const struct fh_opts *o, const struct fh_cell *row,
			    const struct fh_cell *base)
{
	const struct fh_result *rg = base ? cell_run(base) : NULL;

	for (size_t z = 0; z < o->nsizes; z++) {
		const struct fh_result *r = cell_run(&row[z]);

		if (o->sizes[z].skipped)
			continue;
		if (base)
			bench_print_cell(r && rg ? per_thread_avg(&r->s) / per_thread_avg(&rg->s)
					 : NAN, 10, 2);
		else
			bench_print_cell(r ? per_thread_avg(&r->s) : NAN, 10, 0);
	}
}

/* The ops/s per thread by --threads count (rows) and size measured (columns);
 * with g < nsizes, each over the same count's at size g (the global table). */
static void print_avg_table(const struct fh_opts *o, const unsigned *counts, size_t ncounts,
			    const struct fh_cell *cells, size_t g)
{
	const size_t nz = o->nsizes;

	printf("%7s", "Threads");
	print_size_heads(o, cells);
	for (size_t t = 0; t < ncounts; t++) {
		if (!threads_listed(o, counts[t]))
			continue;
		printf("%7u", counts[t]);
		print_avg_cells(o, &cells[t * nz], g < nz ? &cells[t * nz + g] : NULL);
		printf("\n");
	}
}

static void hash_tables(const struct fh_opts *o, const unsigned *counts, size_t ncounts,
			struct fh_cell *cells, unsigned full)
{
	const size_t nz = o->nsizes;
	const size_t g = global_size(o);        /* the global column, if measured */

	printf("\nops/s per thread (perf's 'Averaged'), %u futexes per thread, median of %u runs\n",
	       o->futexes, o->repeat);
	print_avg_table(o, counts, ncounts, cells, nz);
	if (g < nz) {
		printf("\nratio to G (the same threads)\n");
		print_avg_table(o, counts, ncounts, cells, g);
	}

	/* The full run: threads = CPUs online. */
	for (size_t t = 0; t < ncounts; t++) {
		if (counts[t] != full)
			continue;
		printf("\nthe full run: %u threads (the CPUs online, perf's default; the seed ran "
		       "one such process per node, this machine has one), %u futexes per thread\n",
		       full, o->futexes);
		print_size_heads(o, cells);
		print_avg_cells(o, &cells[t * nz], NULL);
		printf("\n");
		if (g < nz) {
			print_avg_cells(o, &cells[t * nz], &cells[t * nz + g]);
			printf("   (ratio to G)\n");
		}
	}

	/* The details: per threads, a row per size. */
	for (size_t t = 0; t < ncounts; t++) {
		const struct fh_result *rg = g < nz ? cell_run(&cells[t * nz + g]) : NULL;

		printf("\nthreads=%u, %u futexes per thread: median run of %u\n", counts[t],
		       o->futexes, o->repeat);
		printf("%-8s %11s %9s %9s %9s %9s %7s %9s %8s %7s %6s\n", "hash", "slots(kern)",
		       "Mops/s", "thr-min", "thr-avg", "thr-max", "min/max", "cpu-ns/op",
		       "csw/kop", "ratio", "other");
		for (size_t z = 0; z < nz; z++) {
			const struct fh_result *r = cell_run(&cells[t * nz + z]);
			char slots[32];

			if (!r)
				continue;
			const struct bench_sample *s = &r->s;
			uint64_t mn = UINT64_MAX, mx = 0;

			for (unsigned i = 0; i < s->threads; i++) {
				mn = s->thread_ops[i] < mn ? s->thread_ops[i] : mn;
				mx = s->thread_ops[i] > mx ? s->thread_ops[i] : mx;
			}
			slots_text(slots, sizeof slots, r);
			printf("%-8s %11s", o->sizes[z].name, slots);
			bench_print_cell(s->ops_per_sec / 1e6, 9, 3);
			bench_print_cell((double)mn / s->wall_s / 1e6, 9, 3);
			bench_print_cell(per_thread_avg(s) / 1e6, 9, 3);
			bench_print_cell((double)mx / s->wall_s / 1e6, 9, 3);
			bench_print_cell(mx ? (double)mn / (double)mx : NAN, 7, 2);
			bench_print_cell(s->total_ops ? s->cpu_s * 1e9 / (double)s->total_ops : NAN,
					 9, 0);
			bench_print_cell(s->total_ops ? (double)s->csw * 1e3 / (double)s->total_ops
					 : NAN, 8, 3);
			bench_print_cell(rg ? s->ops_per_sec / rg->s.ops_per_sec : NAN, 7, 2);
			bench_print_cell(s->other_cpus, 6, 2);
			printf("\n");
		}
	}
	printf("\nslots(kern): hl_futex_hash_get after the first thread (0 = global), ->"
	       " after the run where it changed.  Mops/s: all threads; thr-*: per thread,"
	       " Mops/s.  cpu-ns/op: CPU time of all threads per op.  ratio: Mops/s over G."
	       "  other: CPUs kept busy by other processes during the run.\n");
}

static void parked_tables(const struct fh_opts *o, struct fh_cell *cells)
{
	const size_t nz = o->nsizes;
	const size_t g = global_size(o);

	for (size_t p = 0; p < o->nparked; p++) {
		const struct fh_result *rg = g < nz ? cell_run(&cells[p * nz + g]) : NULL;

		printf("\nparked=%u (on %u hl_mutexes), hot=%u, spin_ns 0, handoff_ns 0: median run of %u "
		       "(by handovers/s)\n", o->parked[p],
		       (o->parked[p] + FH_WAITERS_PER_MUTEX - 1) / FH_WAITERS_PER_MUTEX, o->hot,
		       o->repeat);
		printf("%-8s %11s %10s %6s %9s %8s %8s %8s %10s %9s %7s %6s\n", "hash",
		       "slots(kern)", "handover/s", "ratio", "futex/ho", "probe-ns", "p50-ns",
		       "p99-ns", "cpu-us/ho", "thr-min/max", "park-s", "other");
		for (size_t z = 0; z < nz; z++) {
			const struct fh_result *r = cell_run(&cells[p * nz + z]);
			char slots[32];

			if (!r)
				continue;
			const struct bench_sample *s = &r->s;
			const struct fh_parked *x = s->extra;
			double ho = handovers_per_s(s);

			slots_text(slots, sizeof slots, r);
			printf("%-8s %11s", o->sizes[z].name, slots);
			bench_print_cell(ho, 10, 0);
			bench_print_cell(rg ? ho / handovers_per_s(&rg->s) : NAN, 6, 2);
			bench_print_cell(x->handovers ? (double)x->futex_calls /
					 (double)x->handovers : NAN, 9, 2);
			bench_print_cell(x->probe_mean_ns, 8, 0);
			bench_print_cell(x->probe_p50_ns, 8, 0);
			bench_print_cell(x->probe_p99_ns, 8, 0);
			bench_print_cell(x->handovers ? s->cpu_s * 1e6 / (double)x->handovers : NAN,
					 10, 2);
			bench_print_cell(x->thr_handovers_max ? (double)x->thr_handovers_min /
					 (double)x->thr_handovers_max : NAN, 11, 2);
			bench_print_cell(x->park_s, 7, 2);
			bench_print_cell(s->other_cpus, 6, 2);
			printf("\n");
		}
	}
	printf("\nhandover/s: acquisitions of the hot mutex that followed the other hot thread's."
	       "  futex/ho: futex syscalls of the whole process (hl_futex_stats_total; the"
	       " probes are not counted) per handover.  probe-ns: mean, median, p99 of a"
	       " FUTEX_WAKE on a word nobody waits on, one clock read included.  cpu-us/ho:"
	       " the hot threads' CPU time per handover.  thr-min/max: the hot threads'"
	       " handovers, fewest over most.  park-s: time for the parked threads to park.\n");
}

/* ---- JSON ------------------------------------------------------------------------ */

static void json_run(const void *ctx, struct bench_json *j, const struct bench_sample *s)
{
	const struct fh_result *r = (const struct fh_result *)((const char *)s -
							       offsetof(struct fh_result, s));
	(void)ctx;
	bench_json_sample(j, s);
	bench_json_number(j, "kernel_slots", r->slots_first);
	bench_json_number(j, "kernel_slots_after", r->slots_after);
	bench_json_number(j, "ops_per_sec_per_thread", per_thread_avg(s));
	if (s->extra) {
		const struct fh_parked *x = s->extra;

		bench_json_uint(j, "parked", x->parked);
		bench_json_uint(j, "mutexes", x->mutexes);
		bench_json_uint(j, "handovers", x->handovers);
		bench_json_number(j, "handovers_per_sec", handovers_per_s(s));
		bench_json_uint(j, "futex_calls_total", x->futex_calls);
		bench_json_number(j, "futex_calls_per_handover", x->handovers ?
				  (double)x->futex_calls / (double)x->handovers : NAN);
		bench_json_uint(j, "probes", x->probes);
		bench_json_number(j, "probe_mean_ns", x->probe_mean_ns);
		bench_json_number(j, "probe_p50_ns", x->probe_p50_ns);
		bench_json_number(j, "probe_p99_ns", x->probe_p99_ns);
		bench_json_number(j, "probe_max_ns", x->probe_max_ns);
		bench_json_number(j, "park_s", x->park_s);
		bench_json_number(j, "release_s", x->release_s);
	}
}

static void write_json(const struct fh_opts *o, const unsigned *counts, size_t ncounts,
		       struct fh_cell *cells)
{
	struct bench_json *j = bench_json_open(o->json);
	const size_t nz = o->nsizes;

	bench_json_object(j, NULL);
	bench_json_string(j, "bench", me);
	bench_json_object(j, "config");
	bench_json_string(j, "scenario", o->scenario == SC_HASH ? "hash" : "parked");
	bench_json_array(j, "hash");
	for (size_t z = 0; z < nz; z++)
		bench_json_string(j, NULL, o->sizes[z].name);
	bench_json_end(j);
	bench_json_uint_array(j, o->scenario == SC_HASH ? "threads" : "parked", counts, ncounts);
	if (o->scenario == SC_HASH) {
		bench_json_uint(j, "futexes", o->futexes);
		bench_json_bool(j, "pinned", o->pin);
	} else {
		bench_json_uint(j, "hot", o->hot);
		bench_json_uint(j, "probe_every", FH_PROBE_EVERY);
		bench_json_uint(j, "waiters_per_mutex", FH_WAITERS_PER_MUTEX);
	}
	bench_json_number(j, "duration_s", o->duration_s);
	bench_json_uint(j, "repeat", o->repeat);
	const char *env = getenv("HOTLOCK_FUTEX_HASH");

	if (env)
		bench_json_string(j, "HOTLOCK_FUTEX_HASH", env);
	else
		bench_json_null(j, "HOTLOCK_FUTEX_HASH");
	bench_json_environment(j);
	bench_json_end(j);
	bench_json_array(j, "skipped");
	for (size_t z = 0; z < nz; z++)
		if (o->sizes[z].skipped) {
			bench_json_object(j, NULL);
			bench_json_string(j, "hash", o->sizes[z].name);
			bench_json_string(j, "why", o->sizes[z].why);
			bench_json_end(j);
		}
	bench_json_end(j);
	bench_json_array(j, "results");
	for (size_t t = 0; t < ncounts; t++)
		for (size_t z = 0; z < nz; z++) {
			struct fh_cell *c = &cells[t * nz + z];

			if (!c->n)
				continue;
			bench_json_object(j, NULL);
			bench_json_string(j, "hash", o->sizes[z].name);
			if (o->sizes[z].slots > 0)
				bench_json_uint(j, "slots", (uint64_t)o->sizes[z].slots);
			else
				bench_json_null(j, "slots");
			bench_json_uint(j, o->scenario == SC_HASH ? "threads" : "parked", counts[t]);
			bench_json_uint(j, "median_run", c->median);
			bench_json_array(j, "runs");
			for (unsigned i = 0; i < c->n; i++) {
				bench_json_object(j, NULL);
				json_run(NULL, j, &c->runs[i].s);
				bench_json_end(j);
			}
			bench_json_end(j);
			bench_json_end(j);
		}
	bench_json_end(j);
	bench_json_end(j);
	bench_json_close(j);
}

/* ---- main -------------------------------------------------------------------------- */

static int fh_main(int argc, char **argv)
{
	struct fh_opts o;
	unsigned counts[BENCH_MAX_THREAD_COUNTS + 1];
	size_t ncounts = 0;
	unsigned full = (unsigned)sysconf(_SC_NPROCESSORS_ONLN);
	const char *env = getenv("HOTLOCK_FUTEX_HASH");

	parse(argc, argv, &o);
	if (o.scenario == SC_HASH) {
		bool have = false;

		for (size_t t = 0; t < o.nthreads; t++) {
			counts[ncounts++] = o.threads[t];
			have |= o.threads[t] == full;
		}
		/* The full run's threads, if --threads left them out. */
		if (!have && full >= 1 && full <= BENCH_MAX_THREADS) {
			counts[ncounts++] = full;
			qsort(counts, ncounts, sizeof counts[0], bench_cmp_unsigned);
		}
	} else {
		for (size_t p = 0; p < o.nparked; p++)
			counts[ncounts++] = o.parked[p];
	}

	const size_t nz = o.nsizes;
	struct fh_cell *cells = bench_xcalloc(ncounts * nz, sizeof *cells);

	for (size_t i = 0; i < ncounts * nz; i++)
		cells[i].runs = bench_xcalloc(o.repeat, sizeof *cells[i].runs);

	if (o.scenario == SC_HASH)
		printf("futex-hash hash: perf bench futex hash's loop (FUTEX_WAIT|PRIVATE, never"
		       " matching) on %u futexes per thread, %g s per run, median of %u, sizes"
		       " interleaved, threads %s, a fresh process per run (%u CPUs online,"
		       " HOTLOCK_FUTEX_HASH %s)\n", o.futexes, o.duration_s, o.repeat,
		       o.pin ? "pinned as perf's" : "not pinned", full, env ? env : "unset");
	else
		printf("futex-hash parked: P threads parked in hl_mutex_lock, %u hot threads"
		       " handing one hl_mutex over (spin_ns 0, handoff_ns 0, pinned), a FUTEX_WAKE probe every %u"
		       " iterations, %g s per run, median of %u, sizes interleaved, a fresh"
		       " process per run (%u CPUs online, HOTLOCK_FUTEX_HASH %s)\n", o.hot,
		       FH_PROBE_EVERY, o.duration_s, o.repeat, full, env ? env : "unset");
	fflush(stdout);

	bench_progress_start((unsigned)(ncounts * nz * o.repeat));
	for (size_t t = 0; t < ncounts; t++) {
		for (unsigned rep = 0; rep < o.repeat; rep++) {
			for (size_t z = 0; z < nz; z++) {
				struct fh_size *sz = &o.sizes[z];
				struct fh_cell *c = &cells[t * nz + z];
				struct fh_result *r = &c->runs[c->n];
				char result[96];

				bench_progress_begin("%s hash=%s %s=%u run %u/%u",
						     o.scenario == SC_HASH ? "hash" : "parked",
						     sz->name,
						     o.scenario == SC_HASH ? "threads" : "parked",
						     counts[t], rep + 1, o.repeat);
				if (sz->skipped) {
					bench_progress_end("skipped", NAN);
					continue;
				}
				if (!run_child(&o, sz, counts[t], r)) {
					bench_progress_end("skipped", NAN);
					bench_progress_clear();
					printf("hash %s: skipped from now on: %s\n", sz->name, sz->why);
					fflush(stdout);
					continue;
				}
				c->n++;
				if (o.scenario == SC_HASH)
					snprintf(result, sizeof result, "%.3f Mops/s (%.0f per thread), slots %d",
						 r->s.ops_per_sec / 1e6, per_thread_avg(&r->s),
						 r->slots_first);
				else
					snprintf(result, sizeof result, "%.0f handovers/s, probe %.0f ns, slots %d->%d",
						 handovers_per_s(&r->s),
						 ((const struct fh_parked *)r->s.extra)->probe_mean_ns,
						 r->slots_first, r->slots_after);
				bench_progress_end(result, r->s.other_cpus);
			}
		}
	}
	bench_progress_clear();
	for (size_t i = 0; i < ncounts * nz; i++)
		finish_cell(&cells[i], o.scenario == SC_HASH ? bench_sample_ops_per_sec
							       : handovers_per_s);
	print_skips(&o);
	if (o.scenario == SC_HASH)
		hash_tables(&o, counts, ncounts, cells, full);
	else
		parked_tables(&o, cells);
	fflush(stdout);
	if (o.json)
		write_json(&o, counts, ncounts, cells);
	for (size_t i = 0; i < ncounts * nz; i++) {
		for (unsigned k = 0; k < cells[i].n; k++)
			bench_sample_free(&cells[i].runs[k].s);
		free(cells[i].runs);
	}
	free(cells);
	return 0;
}

const struct bench_scenario bench_scenario_futex_hash = {
	.name = "futex-hash",
	.summary = "seed 002: the kernel's futex hash size (PR_FUTEX_HASH): perf's futex-hash loop, and a handover past parked hotlock waiters, a fresh process per size",
	.main = fh_main,
};
