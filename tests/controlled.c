/* SPDX-License-Identifier: MIT */
/* The controlled-schedule mode: a deterministic scheduler for the library's
 * real code (built only with -DHOTLOCK_SCHED; the interface is controlled.h).
 *
 * Threads are real pthreads, but only one runs at a time: the "current"
 * one.  Every scheduling point (each atomic of atomics.h, each pause or
 * yield in a spin loop, each futex call, each sleep, each hl__sched_yield of
 * the test) enters the scheduler, which advances virtual time by one step
 * and chooses the thread that runs next; if that is another thread, the
 * caller hands over and waits until it is chosen again.  The choice is the
 * only source of nondeterminism and it comes from the seed, so a seed
 * replays its schedule exactly (in a fresh process: the test forks one per
 * schedule).
 *
 *   state         meaning                              leaves it
 *   RUNNABLE      may be chosen                        futex_wait, sleep, end
 *   FUTEX         in futex_wait on addr, until the     a futex_wake of addr, the
 *                 deadline (0: none)                   deadline, a spurious wake
 *   SLEEP         in a sleep until the deadline        the deadline
 *   DONE          ended; waits for the others          the end of the schedule
 *
 * Time: CLOCK_MONOTONIC is virtual, step_ns per step (CLOCK_REALTIME the
 * same plus an offset, which the test may change: hl__sched_set_realtime).
 * When no thread can run, time jumps to the earliest deadline (with jumps
 * on, it may also jump there at any step: the running thread preempted
 * that long); with no deadline either, every
 * thread is blocked for good: a deadlock or a lost wake-up, reported with
 * the schedule.  A schedule longer than max_steps is reported as a
 * livelock.  Memory the test frees (hl__sched_free: a lock destroyed by its
 * last user) is watched: a scheduling point on it is a use after free.
 * Signals (hl__sched_set_signal): at a scheduling point a thread may run the
 * test's handler before its step, as a signal arriving between two
 * instructions would; the draw comes from the seed like every choice.
 *
 * Futexes are simulated: futex_wait compares the word and blocks the
 * thread in the scheduler (atomically, as the kernel does), futex_wake makes
 * the oldest waiters of that word runnable.  The library's spinner slots
 * see `cpus` CPUs and its random choices (CNA's SRO) are seeded from the
 * schedule's seed, so nothing depends on the machine.
 *
 * The scheduler's own synchronisation is a pthread mutex (`mu`) and a
 * condition variable per thread; it never uses the library.  Whatever the
 * library does outside a scheduled thread (the main thread, before and
 * after the schedule) passes through the hooks untouched.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "controlled.h"
#include "thread.h"

enum tstate { T_UNUSED, T_RUNNABLE, T_FUTEX, T_SLEEP, T_DONE };

struct sthread {
	enum tstate state;
	pthread_cond_t cv;
	const uint32_t *futex;          /* T_FUTEX: the word */
	uint64_t deadline;              /* T_FUTEX, T_SLEEP: virtual ns, 0: none */
	uint64_t realtime_abs;          /* T_FUTEX on CLOCK_REALTIME: its deadline on
					   that clock (the deadline moves with it) */
	uint64_t blocked_at;            /* step at which it blocked (wake order) */
	int result;                     /* of the wait: 0, ETIMEDOUT */
	int64_t prio;                   /* PCT */
	bool in_handler;                /* running the signal handler */
	/* For the report: the last scheduling point, and the last one in
	 * the code (a file and line). */
	int kind, line;
	const char *file;
	const volatile void *addr;
};

struct step {
	uint64_t step, now;
	int thread, kind, line;
	const char *file;
	const volatile void *addr;
};

#define TRACE_KEEP 96                  /* steps printed on failure */
#define MAX_NAMES 8
#define MAX_FREED 8
/* CLOCK_REALTIME less CLOCK_MONOTONIC at the start (hl__sched_set_realtime
 * moves it). */
#define REALTIME_OFFSET_NS (1700000000ull * HL_NSEC_PER_SEC)

static struct {
	pthread_mutex_t mu;
	pthread_cond_t end_cv;
	struct hl__sched_params p;
	struct sthread t[HL_SCHED_MAX_THREADS];
	int begun, ended;
	bool finished, failing;
	int current;                    /* -1: nobody yet */
	uint64_t rng;
	uint64_t change[8];             /* PCT change points */
	int nchange;
	int64_t low_prio;               /* next priority for a yielding thread */
	uint64_t realtime_offset;       /* CLOCK_REALTIME - CLOCK_MONOTONIC */
	struct hl__sched_stats st;
	struct step ring[TRACE_KEEP];
	struct named { const char *p; size_t size; const char *name; } names[MAX_NAMES];
	int nnames;
	/* Memory the test freed (hl__sched_free): who, and at which step. */
	struct freed { const char *p; size_t size; int by; uint64_t step; } freed[MAX_FREED];
	int nfreed;
	void (*on_failure)(void *);
	void *on_failure_arg;
	void (*sig_handler)(void);      /* hl__sched_set_signal */
	unsigned sig_per_64k;
} S = { .mu = PTHREAD_MUTEX_INITIALIZER, .end_cv = PTHREAD_COND_INITIALIZER, .current = -1 };

static __thread int self = -1;         /* this thread's index, -1: not scheduled */

static const char *const kind_names[] = {
	[HL_SP_LOAD] = "load", [HL_SP_STORE] = "store", [HL_SP_XCHG] = "xchg",
	[HL_SP_CAS] = "cas", [HL_SP_RMW] = "rmw", [HL_SP_PAUSE] = "pause",
	[HL_SP_YIELD] = "yield", [HL_SP_FUTEX_WAIT] = "futex_wait",
	[HL_SP_FUTEX_WAKE] = "futex_wake", [HL_SP_SLEEP] = "sleep",
	[HL_SP_TEST] = "test",
};

/* splitmix64: the schedule's random numbers. */
static uint64_t rnd(void)
{
	uint64_t z = (S.rng += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t rnd_below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

/* ---- set-up ------------------------------------------------------------ */

void hl__sched_init(const struct hl__sched_params *p)
{
	if (p->threads < 1 || p->threads > HL_SCHED_MAX_THREADS || p->pct_depth < 1 ||
	    p->pct_depth > 9 || !p->max_steps || !p->step_ns) {
		fprintf(stderr, "hotlock-sched: bad parameters\n");
		_exit(HL_SCHED_EXIT_FAIL);
	}
	S.p = *p;
	S.rng = p->seed;
	S.st.now_ns = HL_NSEC_PER_SEC;         /* virtual time starts at 1 s */
	S.realtime_offset = REALTIME_OFFSET_NS;
	S.st.trace_hash = 0xcbf29ce484222325ull;
	for (int i = 0; i < HL_SCHED_MAX_THREADS; i++)
		pthread_cond_init(&S.t[i].cv, NULL);
	/* PCT: priorities pct_depth .. pct_depth + n - 1 in random order;
	 * the change points lower the running thread to 1 .. d - 1. */
	int order[HL_SCHED_MAX_THREADS];
	for (int i = 0; i < p->threads; i++)
		order[i] = i;
	for (int i = p->threads - 1; i > 0; i--) {
		int j = (int)rnd_below((uint64_t)i + 1), x = order[i];
		order[i] = order[j];
		order[j] = x;
	}
	for (int i = 0; i < p->threads; i++)
		S.t[order[i]].prio = p->pct_depth + i;
	S.nchange = p->pct_depth - 1;
	for (int j = 0; j < S.nchange; j++)
		S.change[j] = 1 + rnd_below(p->pct_steps ? p->pct_steps : 1);
	S.low_prio = 0;
}

void hl__sched_on_failure(void (*fn)(void *arg), void *arg)
{
	S.on_failure = fn;
	S.on_failure_arg = arg;
}

void hl__sched_name(const void *obj, size_t size, const char *name)
{
	if (S.nnames < MAX_NAMES)
		S.names[S.nnames++] = (struct named){ obj, size, name };
}

void hl__sched_free(const void *obj, size_t size)
{
	pthread_mutex_lock(&S.mu);
	if (S.nfreed == MAX_FREED) {
		fprintf(stderr, "hotlock-sched: more than %d freed objects\n", MAX_FREED);
		_exit(HL_SCHED_EXIT_FAIL);
	}
	S.freed[S.nfreed++] = (struct freed){ obj, size, self, S.st.steps };
	pthread_mutex_unlock(&S.mu);
}

/* ---- the report --------------------------------------------------------- */

static void name_addr(const volatile void *a, char *buf, size_t len)
{
	const char *p = (const char *)a;
	if (!a) {
		snprintf(buf, len, "-");
		return;
	}
	for (int i = 0; i < S.nnames; i++)
		if (p >= S.names[i].p && p < S.names[i].p + S.names[i].size) {
			snprintf(buf, len, "%s+%zu", S.names[i].name, (size_t)(p - S.names[i].p));
			return;
		}
	uint32_t index;
	size_t off;
	if (hl__node_index_of(p, &index, &off)) {
		snprintf(buf, len, "node%u+%zu", index, off);
		return;
	}
	snprintf(buf, len, "%p", (const void *)a);
}

static const char *base(const char *file)
{
	const char *s = file ? strrchr(file, '/') : NULL;
	return s ? s + 1 : file ? file : "?";
}

static void print_step(const struct step *s)
{
	char a[48];
	name_addr(s->addr, a, sizeof(a));
	fprintf(stderr, "  %8llu %11.3f us  t%-2d %-10s %-18s ", (unsigned long long)s->step,
		(double)(s->now - HL_NSEC_PER_SEC) / 1e3, s->thread, kind_names[s->kind], a);
	if (s->line)
		fprintf(stderr, "%s:%d\n", base(s->file), s->line);
	else
		fprintf(stderr, "%s\n", s->file ? s->file : "");
}

static const char *state_name(const struct sthread *t)
{
	switch (t->state) {
	case T_RUNNABLE: return "runnable";
	case T_FUTEX: return "in futex_wait";
	case T_SLEEP: return "sleeping";
	case T_DONE: return "done";
	default: return "not started";
	}
}

/* Called with mu held, by the current thread (or the one that failed). */
static _Noreturn void fail_locked(const char *fmt, va_list ap)
{
	S.failing = true;
	fprintf(stderr, "hotlock-sched: FAILED at step %llu (virtual time %.3f us): ",
		(unsigned long long)S.st.steps,
		(double)(S.st.now_ns - HL_NSEC_PER_SEC) / 1e3);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\nhotlock-sched: seed 0x%llx, ", (unsigned long long)S.p.seed);
	if (S.p.strategy == HL_SCHED_PCT)
		fprintf(stderr, "pct depth %d over %llu steps", S.p.pct_depth,
			(unsigned long long)S.p.pct_steps);
	else
		fprintf(stderr, "random");
	fprintf(stderr, ", %d threads\n", S.p.threads);
	for (int i = 0; i < S.p.threads; i++) {
		const struct sthread *t = &S.t[i];
		char a[48];
		name_addr(t->state == T_FUTEX ? (const volatile void *)t->futex : t->addr, a, sizeof(a));
		fprintf(stderr, "  t%-2d %-14s %s%s, last step %s, last code %s:%d", i,
			state_name(t), t->state == T_FUTEX ? "on " : "", a,
			t->kind >= 0 ? kind_names[t->kind] : "-", base(t->file), t->line);
		if ((t->state == T_FUTEX || t->state == T_SLEEP) && t->deadline)
			fprintf(stderr, " until %.3f us",
				(double)(t->deadline - HL_NSEC_PER_SEC) / 1e3);
		fputc('\n', stderr);
	}
	uint64_t n = S.st.steps < TRACE_KEEP ? S.st.steps : TRACE_KEEP;
	fprintf(stderr, "hotlock-sched: the last %llu steps:\n", (unsigned long long)n);
	for (uint64_t s = S.st.steps - n; s < S.st.steps; s++)
		print_step(&S.ring[s % TRACE_KEEP]);
	if (S.on_failure) {
		/* The test's report reads the lock: with `failing` set, its
		 * atomics pass through the hooks. */
		S.on_failure(S.on_failure_arg);
	}
	if (S.p.replay)
		fprintf(stderr, "hotlock-sched: replay: %s\n", S.p.replay);
	fflush(stderr);
	fflush(stdout);
	_exit(HL_SCHED_EXIT_FAIL);
}

static _Noreturn void failf_locked(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fail_locked(fmt, ap);
}

void hl__sched_fail(const char *fmt, ...)
{
	va_list ap;
	pthread_mutex_lock(&S.mu);
	va_start(ap, fmt);
	fail_locked(fmt, ap);
}

void hl__sched_bug(const char *what, unsigned long value)
{
	if (self < 0 || S.failing)
		return;                 /* hl__bug prints and aborts */
	pthread_mutex_lock(&S.mu);
	failf_locked("hotlock internal error in t%d: %s (0x%lx)", self, what, value);
}

/* ---- choosing the next thread ------------------------------------------ */

/* Deadlines that have passed make their threads runnable. */
static void expire(void)
{
	for (int i = 0; i < S.p.threads; i++) {
		struct sthread *t = &S.t[i];
		if ((t->state == T_FUTEX || t->state == T_SLEEP) && t->deadline &&
		    t->deadline <= S.st.now_ns) {
			t->result = t->state == T_FUTEX ? ETIMEDOUT : 0;
			t->state = T_RUNNABLE;
			S.st.timeouts++;
		}
	}
}

/* Now and then, with spurious wakes on, a thread in futex_wait returns for
 * nothing (as the kernel allows). */
static void maybe_spurious(void)
{
	if (!S.p.spurious_per_64k || rnd_below(65536) >= S.p.spurious_per_64k)
		return;
	int cand[HL_SCHED_MAX_THREADS], n = 0;
	for (int i = 0; i < S.p.threads; i++)
		if (S.t[i].state == T_FUTEX)
			cand[n++] = i;
	if (!n)
		return;
	struct sthread *t = &S.t[cand[rnd_below((uint64_t)n)]];
	t->state = T_RUNNABLE;
	t->result = 0;
	S.st.spurious++;
}

/* The earliest deadline of a blocked thread, 0: none. */
static uint64_t next_deadline(void)
{
	uint64_t next = 0;
	for (int i = 0; i < S.p.threads; i++) {
		const struct sthread *t = &S.t[i];
		if ((t->state == T_FUTEX || t->state == T_SLEEP) && t->deadline &&
		    (!next || t->deadline < next))
			next = t->deadline;
	}
	return next;
}

/* Now and then, with jumps on, time moves on to the next deadline at once,
 * as if the running thread had been preempted that long. */
static void maybe_jump(void)
{
	if (!S.p.jump_per_64k || rnd_below(65536) >= S.p.jump_per_64k)
		return;
	uint64_t next = next_deadline();
	if (next > S.st.now_ns) {
		S.st.now_ns = next;
		S.st.jumps++;
	}
}

static int choose(void)
{
	int cand[HL_SCHED_MAX_THREADS], n;
	for (;;) {
		expire();
		n = 0;
		for (int i = 0; i < S.p.threads; i++)
			if (S.t[i].state == T_RUNNABLE)
				cand[n++] = i;
		if (n)
			break;
		/* Nobody can run: jump to the earliest deadline. */
		uint64_t next = next_deadline();
		if (!next)
			failf_locked("deadlock: every thread that has not ended is blocked for good "
				     "(a lost wake-up, or a lock never released)");
		S.st.now_ns = next;
	}
	if (S.p.strategy == HL_SCHED_RANDOM)
		return cand[rnd_below((uint64_t)n)];
	int best = cand[0];
	for (int k = 1; k < n; k++)
		if (S.t[cand[k]].prio > S.t[best].prio)
			best = cand[k];
	return best;
}

/* Makes `next` the current thread and, unless that is the caller, waits
 * until the caller is chosen again (or the schedule ends, for one that
 * ended). */
static void hand_over(int next)
{
	if (next != S.current)
		S.st.switches++;
	S.current = next;
	if (next == self)
		return;
	pthread_cond_signal(&S.t[next].cv);
	if (S.t[self].state == T_DONE)
		return;
	while (S.current != self)
		pthread_cond_wait(&S.t[self].cv, &S.mu);
}

/* One step: record it, advance time, choose who runs next. */
static void step_locked(int kind, const volatile void *addr, const char *file, int line)
{
	struct sthread *me = &S.t[self];
	struct step *s = &S.ring[S.st.steps % TRACE_KEEP];
	*s = (struct step){ S.st.steps, S.st.now_ns, self, kind, line, file, addr };
	me->kind = kind;
	me->addr = addr;
	if (line) {                     /* the last step in the library's code */
		me->file = file;
		me->line = line;
	}
	for (int i = 0; i < S.nfreed && addr; i++) {
		const struct freed *f = &S.freed[i];
		const char *p = (const char *)addr;
		if (p >= f->p && p < f->p + f->size) {
			char a[48];
			name_addr(addr, a, sizeof(a));
			S.st.steps++;   /* the step is printed with the others */
			failf_locked("use after free: t%d's %s of %s at %s:%d, after t%d freed it "
				     "at step %llu (a release touched the lock after the store "
				     "that let another thread take it)", self, kind_names[kind], a,
				     base(file), line, f->by, (unsigned long long)f->step);
		}
	}
	/* FNV-1a of (thread, kind, file name, line): equal for equal
	 * schedules, in any process. */
	uint64_t h = S.st.trace_hash;
	uint32_t v[3] = { (uint32_t)self, (uint32_t)kind, (uint32_t)line };
	for (size_t i = 0; i < sizeof(v); i++)
		h = (h ^ ((const unsigned char *)v)[i]) * 0x100000001b3ull;
	for (const char *c = base(file); *c; c++)
		h = (h ^ (unsigned char)*c) * 0x100000001b3ull;
	S.st.trace_hash = h;
	if (S.p.trace) {
		print_step(s);
		fflush(stderr);
	}
	S.st.steps++;
	S.st.now_ns += S.p.step_ns;
	if (S.st.steps > S.p.max_steps)
		failf_locked("livelock: the schedule did not end within %llu steps",
			     (unsigned long long)S.p.max_steps);
	if (S.p.strategy == HL_SCHED_PCT) {
		for (int j = 0; j < S.nchange; j++)
			if (S.change[j] == S.st.steps)
				me->prio = j + 1;
		if (kind == HL_SP_PAUSE || kind == HL_SP_YIELD)
			me->prio = --S.low_prio;
	}
	maybe_spurious();
	maybe_jump();
}

void hl__sched_point(int kind, const volatile void *addr, const char *file, int line)
{
	if (self < 0 || S.failing)
		return;
	pthread_mutex_lock(&S.mu);
	step_locked(kind, addr, file, line);
	hand_over(choose());
	/* Chosen to run again: a signal may arrive first (drawn now, when
	 * this thread runs, so that a seed replays it). */
	struct sthread *me = &S.t[self];
	bool signal = S.sig_handler && !me->in_handler && rnd_below(65536) < S.sig_per_64k;
	if (signal) {
		me->in_handler = true;
		S.st.signals++;
	}
	pthread_mutex_unlock(&S.mu);
	if (signal) {
		S.sig_handler();
		me->in_handler = false;         /* only this thread reads it */
	}
}

void hl__sched_set_signal(void (*handler)(void), unsigned per_64k)
{
	pthread_mutex_lock(&S.mu);
	S.sig_handler = handler;
	S.sig_per_64k = per_64k;
	pthread_mutex_unlock(&S.mu);
}

/* ---- threads ------------------------------------------------------------ */

void hl__sched_thread_begin(int index)
{
	pthread_mutex_lock(&S.mu);
	if (index < 0 || index >= S.p.threads || S.t[index].state != T_UNUSED) {
		fprintf(stderr, "hotlock-sched: bad thread index %d\n", index);
		_exit(HL_SCHED_EXIT_FAIL);
	}
	self = index;
	S.t[index].state = T_RUNNABLE;
	S.t[index].kind = -1;
	if (++S.begun == S.p.threads) {
		hand_over(choose());
	} else {
		while (S.current != self)
			pthread_cond_wait(&S.t[self].cv, &S.mu);
	}
	pthread_mutex_unlock(&S.mu);
}

void hl__sched_thread_end(void)
{
	pthread_mutex_lock(&S.mu);
	S.t[self].state = T_DONE;
	S.t[self].kind = -1;
	if (++S.ended == S.p.threads) {
		S.finished = true;
		S.current = -1;
		pthread_cond_broadcast(&S.end_cv);
	} else {
		hand_over(choose());
		/* What this thread does from here on (its exit, the library's
		 * thread-exit hooks) must not run beside scheduled threads. */
		while (!S.finished)
			pthread_cond_wait(&S.end_cv, &S.mu);
	}
	self = -1;
	pthread_mutex_unlock(&S.mu);
}

void hl__sched_stats(struct hl__sched_stats *out)
{
	pthread_mutex_lock(&S.mu);
	*out = S.st;
	pthread_mutex_unlock(&S.mu);
}

/* ---- blocking ------------------------------------------------------------ */

/* Blocks the calling thread (its state and deadline set) until chosen. */
static int block_locked(void)
{
	S.t[self].blocked_at = S.st.steps;
	hand_over(choose());
	return S.t[self].result;
}

/* A deadline at abs on CLOCK_REALTIME, in virtual (monotonic) time, as of
 * the clock's setting now. */
static uint64_t realtime_to_virtual(uint64_t abs)
{
	return abs > S.realtime_offset ? abs - S.realtime_offset : 1;
}

static uint64_t to_virtual(clockid_t clock, const struct timespec *abs)
{
	uint64_t ns = hl__ts_to_ns_sat(abs);
	if (clock == CLOCK_REALTIME)
		return realtime_to_virtual(ns);
	return ns ? ns : 1;
}

int hl__sched_futex_wait(uint32_t *addr, uint32_t val, clockid_t clock,
			 const struct timespec *abstime)
{
	if (self < 0 || S.failing) {
		fprintf(stderr, "hotlock-sched: futex_wait outside the schedule\n");
		_exit(HL_SCHED_EXIT_FAIL);
	}
	pthread_mutex_lock(&S.mu);
	step_locked(HL_SP_FUTEX_WAIT, addr, "(futex layer)", 0);
	/* The compare and the sleep are one step, as in the kernel. */
	int r;
	if (__atomic_load_n(addr, __ATOMIC_RELAXED) != val) {
		r = EAGAIN;
		hand_over(choose());
	} else {
		struct sthread *me = &S.t[self];
		me->state = T_FUTEX;
		me->futex = addr;
		me->deadline = abstime ? to_virtual(clock, abstime) : 0;
		me->realtime_abs = abstime && clock == CLOCK_REALTIME ?
				   hl__ts_to_ns_sat(abstime) : 0;
		S.st.futex_waits++;
		r = block_locked();
	}
	pthread_mutex_unlock(&S.mu);
	return r;
}

int hl__sched_futex_wake(uint32_t *addr, int n)
{
	if (self < 0 || S.failing)
		return 0;
	pthread_mutex_lock(&S.mu);
	step_locked(HL_SP_FUTEX_WAKE, addr, "(futex layer)", 0);
	int woken = 0;
	if (S.p.drop_wake_per_64k && rnd_below(65536) < S.p.drop_wake_per_64k)
		n = 0;                  /* the seeded fault: this wake is lost */
	while (woken < n) {
		struct sthread *oldest = NULL;
		for (int i = 0; i < S.p.threads; i++) {
			struct sthread *t = &S.t[i];
			if (t->state == T_FUTEX && t->futex == addr &&
			    (!oldest || t->blocked_at < oldest->blocked_at))
				oldest = t;
		}
		if (!oldest)
			break;
		oldest->state = T_RUNNABLE;
		oldest->result = 0;
		woken++;
	}
	hand_over(choose());
	pthread_mutex_unlock(&S.mu);
	return woken;
}

void hl__sched_sleep_ns(uint64_t ns)
{
	if (self < 0 || S.failing)
		return;
	pthread_mutex_lock(&S.mu);
	step_locked(HL_SP_SLEEP, NULL, "", 0);
	struct sthread *me = &S.t[self];
	me->state = T_SLEEP;
	me->deadline = S.st.now_ns + (ns ? ns : 1);
	block_locked();
	pthread_mutex_unlock(&S.mu);
}

void hl__sched_yield(void)
{
	hl__sched_point(HL_SP_TEST, NULL, "(the test)", 0);
}

/* ---- time, seeds, CPUs ----------------------------------------------------- */

void hl__sched_clock_gettime(clockid_t clock, struct timespec *ts)
{
	if (!S.p.threads) {
		clock_gettime(clock, ts);       /* before hl__sched_init */
		return;
	}
	/* Read without mu: only the current thread runs, and it is the one
	 * that advanced the time last (or the main thread after the end). */
	uint64_t ns = S.st.now_ns;
	if (clock == CLOCK_REALTIME)
		ns += S.realtime_offset;
	ts->tv_sec = (time_t)(ns / HL_NSEC_PER_SEC);
	ts->tv_nsec = (long)(ns % HL_NSEC_PER_SEC);
}

void hl__sched_set_realtime(int64_t delta_ns)
{
	if (self < 0 || S.failing)
		return;
	pthread_mutex_lock(&S.mu);
	step_locked(HL_SP_TEST, NULL, "(clock set)", 0);
	S.realtime_offset += (uint64_t)delta_ns;
	/* As the kernel's absolute CLOCK_REALTIME timers: a futex wait on
	 * that clock ends when the clock passes its deadline. */
	for (int i = 0; i < S.p.threads; i++) {
		struct sthread *t = &S.t[i];
		if (t->state == T_FUTEX && t->realtime_abs)
			t->deadline = realtime_to_virtual(t->realtime_abs);
	}
	hand_over(choose());
	pthread_mutex_unlock(&S.mu);
}

uint64_t hl__sched_now_ns(void)
{
	return S.st.now_ns;
}

uint32_t hl__sched_thread_seed(void)
{
	uint64_t z = S.p.seed ^ (0x9e3779b97f4a7c15ull * (uint64_t)(self + 2));
	z = (z ^ (z >> 31)) * 0xbf58476d1ce4e5b9ull;
	return (uint32_t)(z >> 32);
}

int hl__sched_cpus(void)
{
	return S.p.cpus > 0 ? S.p.cpus : 1;
}
