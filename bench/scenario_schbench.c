/* SPDX-License-Identifier: MIT */
/* hotlock-bench schbench: Chris Mason's schbench (v1.0, as of 2016-2020),
 * the wake-up latency benchmark of seed 003, where Aaron Lu replaced the
 * worker's "wake the message thread, then wait" with one FUTEX_SWAP.  Here
 * FUTEX_SWAP is hl_swap, hotlock's user-space swap.
 *
 * The model (facts of schbench 2020-06, masoncl/schbench 99faedc; the
 * code is our own):
 *
 *   M message threads, each with T workers of its own.  The threads and
 *   what they own:
 *
 *   object                   written by             read by
 *   -----------------------  ---------------------  ----------------------
 *   msg list head (LIFO)     workers push (CAS),    -
 *                            its msg thread takes
 *                            it all (exchange)
 *   msg wait word / point    its workers wake it    the msg thread waits
 *   worker wake_ns           the worker (its own    the worker, after its
 *                            time, before posting), wait returns
 *                            the msg thread (the
 *                            time of the wake-up)
 *   worker wait word / point the msg thread wakes   the worker waits
 *   worker histogram         the worker only        the main thread, joined
 *
 *   A worker loops:
 *    1. stop if the run is over;
 *    2. "think": spin -c usec of wall-clock time (schbench's usec_spin);
 *    3. note the time in its wake_ns, push itself on its msg thread's list,
 *       wake the msg thread, and wait (unless the run is over);
 *    4. once woken, record now - wake_ns in its latency histogram: wake_ns
 *       is then the time the msg thread woke it, so this is the scheduler
 *       latency from the wake-up to the worker running again.
 *   A msg thread loops:
 *    1. take its whole list; read the clock once (schbench stamps every
 *       worker woken in one pass with the pass's start, so that a waker
 *       preempted in mid-pass shows up in the latencies);
 *    2. for each worker taken: store that time in its wake_ns, wake it;
 *    3. if the run is over: wake the list once more and leave the loop;
 *    4. wait until a worker wakes it;
 *    5. sleep -s usec plus a jitter drawn in [0, s/4) ("messages shouldn't
 *       be instant"), then loop.
 *   At the end each msg thread wakes all of its workers.
 *
 * Modes (--modes):
 *   wake+wait  schbench as it is: each thread's futex word is BLOCKED (0)
 *              or RUNNING (1).  Post: CAS BLOCKED->RUNNING and, if it
 *              succeeded, hl_futex_wake (fpost).  Wait: loop { CAS
 *              RUNNING->BLOCKED, done if it succeeds; hl_futex_wait(word,
 *              BLOCKED) } (fwait).  A worker stores BLOCKED in its own word
 *              before it posts (step 3), a msg thread in its own at the top
 *              of each pass, dropping the posts that came in during its sleep
 *              (the workers behind them are on the list it is about to take).
 *   hl_swap    each thread has an hl_swap_point_t.  Worker step 3 is
 *              hl_swap(msg thread's point, own point): Aaron Lu's change.
 *              The msg thread wakes with hl_wake and waits with
 *              hl_wait_self; but the last worker of a pass (the only one
 *              with -t 1) it wakes with hl_swap(worker's point, own point),
 *              since its step 4 follows that wake at once: with -t 1 the
 *              pair is a flipcall, as in Aaron's run.  Not when the run is
 *              over (step 3 returns without waiting).
 *
 * Where this differs from schbench, and why:
 *  - A wait that returns to a msg thread whose list is empty waits again
 *    (both modes).  A post that arrives after the list was taken but for a
 *    worker that was on it leaves a wake behind: schbench then sleeps a
 *    whole -s cycle for nothing; an hl_swap point, which keeps such a wake
 *    and has no way to drop it, would do it after every pass with T > 1.
 *  - Latencies of 0 usec are recorded; schbench drops them ("if (delta >
 *    0)"), which would drop exactly the fastest wake-ups of a spinning
 *    hl_swap.  The clock is CLOCK_MONOTONIC; the latency is the difference
 *    of the two times truncated to usec, as gettimeofday's would be.
 *  - min is the smallest latency recorded; schbench's min is always 0 (its
 *    stats start zeroed, and min only goes down).
 *  - A wait that returns because the run ends records nothing (schbench
 *    records the time since the worker's own post: a large bogus sample).
 *  - -s below 4 gets no jitter (schbench divides by s/4 = 0 there).
 *  - Percentiles: fio's histogram as in schbench (exact to 511 usec, then
 *    256 buckets per power of two, each reported as its middle), and the
 *    same walk: the p-th percentile is the first bucket where the running
 *    count reaches p/100 of the samples.
 *
 * Defaults are schbench's (its code: -m 2, -t 16, -r 30, -c 30000,
 * -s 30000; its --help says 10000 for -c and -s, its code has said 30000
 * since 2016), so a run takes repeat x modes x r seconds: 3 minutes.  On
 * this 2-CPU machine the default load is heavy: each worker wants about
 * c / (c + s + s/8) = 0.47 CPU, so -m 2 -t 16 asks for 15 CPUs, and -m 8
 * -t 1 for 3.8 (overloaded); -m 1 -t 1 for half of one (not overloaded).
 * With -c 0 -s 0 the msg thread replies at once: a ping-pong, where hl_swap
 * may spin.
 *
 * Besides the latencies, each run reports wake-ups (latency samples), CPU
 * time per wake-up (all threads' CPU time over the run / wake-ups), and the
 * part of it that is not the workers' think time (the synchronisation: the
 * wakes, the waits, any spinning in them), futex syscalls per wake-up
 * (hl_futex_stats_total), voluntary context switches per wake-up, and the
 * workers' wake-ups min/avg/max (fairness).
 *
 * Ending: the harness's stop hook sets the run's stopping flag (seq_cst;
 * every thread reads it seq_cst after its last post and before waiting, as
 * schbench does behind its full barriers) and wakes every msg thread and
 * every worker; a msg thread that sees it wakes its list and then all its
 * workers.  A wake is never lost: an hl_swap point keeps one; a futex word
 * that a worker sets BLOCKED after a post was missed is followed by its
 * read of the flag.  The harness's watchdog exits 1 (after printing what
 * each thread was doing) if the threads have not stopped 30 s later. */
#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <hotlock/futex.h>
#include <hotlock/swap.h>

#include "harness.h"

static const char *const me = "schbench";

/* ---- options -------------------------------------------------------------- */

enum sb_mode { MODE_WAKE_WAIT, MODE_SWAP, NMODES };
static const char *const mode_names[NMODES] = { "wake+wait", "hl_swap" };

struct sb_opts {
	unsigned m, t;                  /* message threads, workers per message thread */
	double runtime_s;
	unsigned long cputime_us, sleeptime_us;
	unsigned repeat;
	const char *json;
	enum sb_mode modes[NMODES];
	unsigned nmodes;
};

#define SB_MAX_USEC 10000000ul          /* -c, -s: at most 10 s */

/* ---- fio's latency histogram, as schbench keeps it ------------------------- */

#define PLAT_BITS 8
#define PLAT_VAL (1u << PLAT_BITS)
#define PLAT_GROUP_NR 19
#define PLAT_NR (PLAT_GROUP_NR * PLAT_VAL)

#define NPCT 7
#define PCT_P99 4                       /* the starred one */
static const double pct_list[NPCT] = { 50.0, 75.0, 90.0, 95.0, 99.0, 99.5, 99.9 };

struct sb_hist {
	uint32_t plat[PLAT_NR];
	uint64_t n;
	uint64_t zeros;                 /* samples of 0 usec (schbench drops them) */
	uint64_t min, max;
};

/* Values below 2 << PLAT_BITS have a bucket each; above, each power of two
 * is cut into PLAT_VAL buckets. */
static unsigned plat_idx(uint64_t us)
{
	unsigned msb, err_bits, idx;

	if (us < (2u << PLAT_BITS))
		return (unsigned)us;
	msb = 63u - (unsigned)__builtin_clzll(us);
	err_bits = msb - PLAT_BITS;
	idx = ((err_bits + 1) << PLAT_BITS) + (unsigned)((us >> err_bits) & (PLAT_VAL - 1));
	return idx < PLAT_NR - 1 ? idx : PLAT_NR - 1;
}

/* The value a bucket stands for: itself, or the middle of its range. */
static uint64_t plat_val(unsigned idx)
{
	unsigned err_bits;

	if (idx < (2u << PLAT_BITS))
		return idx;
	err_bits = (idx >> PLAT_BITS) - 1;
	return (1ull << (err_bits + PLAT_BITS)) +
	       (uint64_t)(((double)(idx % PLAT_VAL) + 0.5) * (double)(1ull << err_bits));
}

static void hist_add(struct sb_hist *h, uint64_t us)
{
	if (!h->n || us < h->min)
		h->min = us;
	if (us > h->max)
		h->max = us;
	h->zeros += us == 0;
	h->plat[plat_idx(us)]++;
	h->n++;
}

static void hist_merge(struct sb_hist *d, const struct sb_hist *s)
{
	if (!s->n)
		return;
	for (unsigned i = 0; i < PLAT_NR; i++)
		d->plat[i] += s->plat[i];
	if (!d->n || s->min < d->min)
		d->min = s->min;
	if (s->max > d->max)
		d->max = s->max;
	d->n += s->n;
	d->zeros += s->zeros;
}

/* schbench's walk: percentile j is the first bucket where the running count
 * reaches pct_list[j]% of the samples.  No samples: all 0. */
static void hist_percentiles(const struct sb_hist *h, uint64_t out[NPCT])
{
	uint64_t sum = 0;
	unsigned j = 0;

	memset(out, 0, NPCT * sizeof *out);
	if (!h->n)
		return;
	for (unsigned i = 0; i < PLAT_NR && j < NPCT; i++) {
		sum += h->plat[i];
		while (j < NPCT && (double)sum >= pct_list[j] / 100.0 * (double)h->n)
			out[j++] = plat_val(i);
	}
}

/* ---- one run: the threads ------------------------------------------------- */

enum { BLOCKED = 0, RUNNING = 1 };     /* schbench's futex word */

/* What a thread is doing, for the watchdog's report. */
enum { PH_START, PH_THINK, PH_POST, PH_WAIT, PH_RECORD, PH_WAKE, PH_SLEEP, PH_DONE };
static const char *const phase_names[] = { "starting", "thinking", "posting", "waiting",
					   "recording", "waking", "sleeping", "done" };

struct sb_msg;

struct sb_worker {
	/* schbench keeps the wait word and the wake time on one cache line,
	 * the one the msg thread writes before the wake. */
	_Alignas(BENCH_CACHELINE) _Atomic(struct sb_worker *) next; /* on the msg list */
	_Atomic uint64_t wake_ns;
	_Atomic uint32_t word;          /* wake+wait */
	hl_swap_point_t point;          /* hl_swap */
	struct sb_msg *msg;
	_Alignas(BENCH_CACHELINE) _Atomic int phase;
	double think_cpu_s;             /* thread CPU time spent thinking */
	struct sb_hist hist;
};

struct sb_msg {
	_Alignas(BENCH_CACHELINE) _Atomic(struct sb_worker *) head;
	_Atomic uint32_t word;
	hl_swap_point_t point;
	_Alignas(BENCH_CACHELINE) _Atomic int phase;
	struct sb_worker *workers;      /* its T workers */
	uint64_t wakes;
	unsigned seed;
};

struct sb_run {
	enum sb_mode mode;
	const struct sb_opts *o;
	_Alignas(BENCH_CACHELINE) _Atomic bool stopping;
	_Alignas(BENCH_CACHELINE) struct sb_msg *msgs;  /* [m] */
	struct sb_worker *workers;                      /* [m * t] */
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static bool stopping(struct sb_run *r)
{
	return atomic_load(&r->stopping);
}

static void set_phase(_Atomic int *p, int v)
{
	/* Relaxed: read only by the watchdog's report. */
	atomic_store_explicit(p, v, memory_order_relaxed);
}

/* schbench's fpost: wakes the word's thread if it is blocked (or about to
 * be: BLOCKED is stored before the thread posts and waits). */
static void fpost(_Atomic uint32_t *w)
{
	uint32_t e = BLOCKED;

	if (atomic_compare_exchange_strong(w, &e, RUNNING))
		hl_futex_wake((uint32_t *)w, 1);
}

/* schbench's fwait: until a post turns the word RUNNING, then BLOCKED again. */
static int fwait(_Atomic uint32_t *w)
{
	for (;;) {
		uint32_t e = RUNNING;
		int err;

		if (atomic_compare_exchange_strong(w, &e, BLOCKED))
			return 0;
		err = hl_futex_wait((uint32_t *)w, BLOCKED, CLOCK_MONOTONIC, NULL);
		if (err && err != EAGAIN && err != EINTR)
			return err;
	}
}

/* schbench's usec_spin: wall-clock time, so a preempted worker thinks less. */
static void think(struct sb_worker *w, unsigned long us)
{
	uint64_t end;
	double c0;

	if (!us)
		return;
	c0 = bench_thread_cpu_s();
	end = now_ns() + (uint64_t)us * 1000u;
	while (now_ns() < end)
		bench_pause();
	w->think_cpu_s += bench_thread_cpu_s() - c0;
}

static void wake_worker(struct sb_run *r, struct sb_worker *w)
{
	if (r->mode == MODE_SWAP)
		hl_wake(&w->point);
	else
		fpost(&w->word);
}

/* Worker step 3 and 4.  Returns the latency in usec, or -1 when the run
 * ended (no sample). */
static int64_t msg_and_wait(struct sb_run *r, struct sb_worker *w, struct bench_thread *bt)
{
	struct sb_msg *msg = w->msg;
	struct sb_worker *old;
	int err;

	set_phase(&w->phase, PH_POST);
	if (r->mode == MODE_WAKE_WAIT)
		atomic_store(&w->word, BLOCKED);
	/* Relaxed: the msg thread overwrites it before its wake, whose
	 * release/acquire (or the futex word's seq_cst CAS) orders it. */
	atomic_store_explicit(&w->wake_ns, now_ns(), memory_order_relaxed);
	old = atomic_load(&msg->head);
	do
		atomic_store_explicit(&w->next, old, memory_order_relaxed);
	while (!atomic_compare_exchange_weak(&msg->head, &old, w));

	if (r->mode == MODE_WAKE_WAIT) {
		fpost(&msg->word);
		if (stopping(r))
			return -1;
		set_phase(&w->phase, PH_WAIT);
		err = fwait(&w->word);
		if (err)
			bench_thread_fail(bt, "hl_futex_wait", err);
	} else {
		if (stopping(r)) {
			hl_wake(&msg->point);
			return -1;
		}
		set_phase(&w->phase, PH_WAIT);
		err = hl_swap(&msg->point, &w->point);
		if (err)
			bench_thread_fail(bt, "hl_swap", err);
	}
	uint64_t now = now_ns();
	if (err || stopping(r))
		return -1;
	uint64_t woke = atomic_load_explicit(&w->wake_ns, memory_order_relaxed);
	/* Truncated to usec before the difference, as gettimeofday's. */
	uint64_t a = woke / 1000u, b = now / 1000u;
	return b > a ? (int64_t)(b - a) : 0;
}

static uint64_t worker_body(struct sb_run *r, struct sb_worker *w, struct bench_thread *bt)
{
	uint64_t served = 0;

	while (!stopping(r) && !bt->err) {
		set_phase(&w->phase, PH_THINK);
		think(w, r->o->cputime_us);
		int64_t us = msg_and_wait(r, w, bt);
		set_phase(&w->phase, PH_RECORD);
		if (us >= 0) {
			hist_add(&w->hist, (uint64_t)us);
			served++;
		}
	}
	set_phase(&w->phase, PH_DONE);
	return served;
}

/* Msg thread steps 1-2.  swap: wake the last worker with hl_swap, which
 * also waits (step 4); returns true when it did. */
static bool wake_all(struct sb_run *r, struct sb_msg *msg, bool swap, struct bench_thread *bt)
{
	struct sb_worker *list = atomic_exchange(&msg->head, NULL);
	uint64_t now = now_ns();

	while (list) {
		/* Read before the wake: once woken, the worker pushes itself
		 * again.  Relaxed: its push's CAS, which our exchange read,
		 * published it. */
		struct sb_worker *next = atomic_load_explicit(&list->next, memory_order_relaxed);

		atomic_store_explicit(&list->next, NULL, memory_order_relaxed);
		atomic_store_explicit(&list->wake_ns, now, memory_order_relaxed);
		msg->wakes++;
		if (!next && swap) {
			int err = hl_swap(&list->point, &msg->point);

			if (err)
				bench_thread_fail(bt, "hl_swap", err);
			return true;
		}
		wake_worker(r, list);
		list = next;
	}
	return false;
}

static void msg_wait(struct sb_run *r, struct sb_msg *msg, struct bench_thread *bt)
{
	int err;

	set_phase(&msg->phase, PH_WAIT);
	if (r->mode == MODE_SWAP) {
		err = hl_wait_self(&msg->point);
		if (err)
			bench_thread_fail(bt, "hl_wait_self", err);
	} else {
		err = fwait(&msg->word);
		if (err)
			bench_thread_fail(bt, "hl_futex_wait", err);
	}
}

static uint64_t msg_body(struct sb_run *r, struct sb_msg *msg, struct bench_thread *bt)
{
	const unsigned long s = r->o->sleeptime_us;

	for (;;) {
		bool stop, waited;

		if (r->mode == MODE_WAKE_WAIT)
			atomic_store(&msg->word, BLOCKED);
		stop = stopping(r) || bt->err;
		set_phase(&msg->phase, PH_WAKE);
		waited = wake_all(r, msg, r->mode == MODE_SWAP && !stop, bt);
		if (stop) {
			wake_all(r, msg, false, bt);
			break;
		}
		if (!waited)
			msg_wait(r, msg, bt);
		while (!stopping(r) && !bt->err && !atomic_load(&msg->head))
			msg_wait(r, msg, bt);
		if (stopping(r) || bt->err)
			continue;       /* step 3 on the next pass */
		if (s) {
			unsigned long jitter = s >= 4 ? (unsigned long)rand_r(&msg->seed) % (s / 4) : 0;

			set_phase(&msg->phase, PH_SLEEP);
			usleep((useconds_t)(s + jitter));
		}
	}
	for (unsigned i = 0; i < r->o->t; i++)
		wake_worker(r, &msg->workers[i]);
	set_phase(&msg->phase, PH_DONE);
	return msg->wakes;
}

/* Threads 0 .. m-1 are the msg threads, the rest the workers, T per msg
 * thread in order. */
static uint64_t sb_body(struct bench_thread *bt, void *arg)
{
	struct sb_run *r = arg;

	if (bt->id < r->o->m)
		return msg_body(r, &r->msgs[bt->id], bt);
	return worker_body(r, &r->workers[bt->id - r->o->m], bt);
}

static void sb_on_stop(void *arg)
{
	struct sb_run *r = arg;
	unsigned nw = r->o->m * r->o->t;

	atomic_store(&r->stopping, true);
	for (unsigned i = 0; i < r->o->m; i++) {
		if (r->mode == MODE_SWAP)
			hl_wake(&r->msgs[i].point);
		else
			fpost(&r->msgs[i].word);
	}
	for (unsigned i = 0; i < nw; i++)
		wake_worker(r, &r->workers[i]);
}

static void sb_on_hang(void *arg)
{
	struct sb_run *r = arg;
	unsigned nw = r->o->m * r->o->t;

	fprintf(stderr, "hotlock-bench schbench: mode %s, stopping=%d\n", mode_names[r->mode],
		(int)atomic_load(&r->stopping));
	for (unsigned i = 0; i < r->o->m; i++)
		fprintf(stderr, "  msg %u: %s, list %s, wakes %llu\n", i,
			phase_names[atomic_load_explicit(&r->msgs[i].phase, memory_order_relaxed)],
			atomic_load(&r->msgs[i].head) ? "non-empty" : "empty",
			(unsigned long long)r->msgs[i].wakes);
	for (unsigned i = 0; i < nw; i++)
		if (atomic_load_explicit(&r->workers[i].phase, memory_order_relaxed) != PH_DONE)
			fprintf(stderr, "  worker %u (msg %u): %s, %llu samples\n", i, i / r->o->t,
				phase_names[atomic_load_explicit(&r->workers[i].phase,
								 memory_order_relaxed)],
				(unsigned long long)r->workers[i].hist.n);
}

/* ---- one run: its figures ------------------------------------------------- */

struct sb_result {
	uint64_t pct[NPCT];
	uint64_t min, max;
	uint64_t wakeups, zeros;
	double wall_s, cpu_s, think_cpu_s;
	uint64_t futex_calls, csw;
	uint64_t wk_min, wk_max;        /* per worker wake-ups */
	double wk_avg;
	double other_cpus;
};

static void run_once(const struct sb_opts *o, enum sb_mode mode, struct sb_result *res)
{
	unsigned nw = o->m * o->t;
	struct sb_run r = { .mode = mode, .o = o };
	struct bench_sample s;
	hl_futex_stats_t f0, f1;
	char label[96];
	struct sb_hist *all;

	r.msgs = bench_alloc_lines(o->m * sizeof *r.msgs);
	r.workers = bench_alloc_lines(nw * sizeof *r.workers);
	atomic_init(&r.stopping, false);
	for (unsigned i = 0; i < o->m; i++) {
		r.msgs[i].workers = &r.workers[i * o->t];
		r.msgs[i].seed = i + 1;
		bench_check(hl_swap_point_init(&r.msgs[i].point), "hl_swap_point_init");
	}
	for (unsigned i = 0; i < nw; i++) {
		r.workers[i].msg = &r.msgs[i / o->t];
		bench_check(hl_swap_point_init(&r.workers[i].point), "hl_swap_point_init");
	}
	snprintf(label, sizeof label, "schbench %s -m %u -t %u", mode_names[mode], o->m, o->t);
	struct bench_run_spec spec = {
		.label = label,
		.threads = o->m + nw,
		.duration_s = o->runtime_s,
		.body = sb_body,
		.arg = &r,
		.futex_counted = true,
		.on_hang = sb_on_hang,
		.on_stop = sb_on_stop,
	};
	hl_futex_stats_total(&f0);
	bench_run(&spec, &s);
	hl_futex_stats_total(&f1);

	all = bench_xcalloc(1, sizeof *all);
	memset(res, 0, sizeof *res);
	res->wk_min = UINT64_MAX;
	for (unsigned i = 0; i < nw; i++) {
		uint64_t n = s.thread_ops[o->m + i];

		hist_merge(all, &r.workers[i].hist);
		res->think_cpu_s += r.workers[i].think_cpu_s;
		res->wk_min = n < res->wk_min ? n : res->wk_min;
		res->wk_max = n > res->wk_max ? n : res->wk_max;
		res->wk_avg += (double)n / nw;
	}
	hist_percentiles(all, res->pct);
	res->min = all->min;
	res->max = all->max;
	res->wakeups = all->n;
	res->zeros = all->zeros;
	res->wall_s = s.wall_s;
	res->cpu_s = s.cpu_s;
	res->futex_calls = hl_futex_stats_calls(&f1) - hl_futex_stats_calls(&f0);
	res->csw = s.csw;
	res->other_cpus = s.other_cpus;
	for (unsigned i = 0; i < o->m; i++)
		bench_check(hl_swap_point_destroy(&r.msgs[i].point), "hl_swap_point_destroy");
	for (unsigned i = 0; i < nw; i++)
		bench_check(hl_swap_point_destroy(&r.workers[i].point), "hl_swap_point_destroy");
	free(all);
	free(r.msgs);
	free(r.workers);
	bench_sample_free(&s);
}

/* ---- figures across the repeats ------------------------------------------- */

static double per_wakeup(double x, uint64_t wakeups)
{
	return wakeups ? x / (double)wakeups : NAN;
}

static double fig_wakeups(const struct sb_result *r) { return (double)r->wakeups; }
static double fig_rate(const struct sb_result *r)
{
	return r->wall_s > 0 ? (double)r->wakeups / r->wall_s : NAN;
}
static double fig_cpu_us(const struct sb_result *r) { return per_wakeup(r->cpu_s * 1e6, r->wakeups); }
static double fig_sync_cpu_us(const struct sb_result *r)
{
	return per_wakeup((r->cpu_s - r->think_cpu_s) * 1e6, r->wakeups);
}
static double fig_futex(const struct sb_result *r) { return per_wakeup((double)r->futex_calls, r->wakeups); }
static double fig_csw(const struct sb_result *r) { return per_wakeup((double)r->csw, r->wakeups); }
static double fig_wk_min(const struct sb_result *r) { return (double)r->wk_min; }
static double fig_wk_avg(const struct sb_result *r) { return r->wk_avg; }
static double fig_wk_max(const struct sb_result *r) { return (double)r->wk_max; }
static double fig_fair(const struct sb_result *r)
{
	return r->wk_max ? (double)r->wk_min / (double)r->wk_max : NAN;
}
static double fig_other(const struct sb_result *r) { return r->other_cpus; }

struct sb_fig {
	const char *head, *json;
	int width, prec;
	double (*value)(const struct sb_result *r);
};

static const struct sb_fig figs[] = {
	{ "wakeups", "wakeups", 9, 0, fig_wakeups },
	{ "wakeups/s", "wakeups_per_sec", 10, 0, fig_rate },
	{ "cpu-us/wk", "cpu_us_per_wakeup", 10, 1, fig_cpu_us },
	{ "sync-us/wk", "sync_cpu_us_per_wakeup", 10, 2, fig_sync_cpu_us },
	{ "futex/wk", "futex_calls_per_wakeup", 9, 2, fig_futex },
	{ "csw/wk", "csw_per_wakeup", 7, 2, fig_csw },
	{ "thr-min", "worker_wakeups_min", 8, 0, fig_wk_min },
	{ "thr-avg", "worker_wakeups_avg", 8, 0, fig_wk_avg },
	{ "thr-max", "worker_wakeups_max", 8, 0, fig_wk_max },
	{ "min/max", "worker_fairness", 7, 2, fig_fair },
	{ "other", "other_cpus", 6, 2, fig_other },
};
#define NFIGS (sizeof figs / sizeof figs[0])

/* Median (the lower one for an even count: a value that happened) and
 * range of v[0..n), NANs left out; NAN when none. */
struct spread {
	double med, lo, hi;
};

static struct spread spread_of(const double *v, unsigned n)
{
	double *s = bench_xcalloc(n, sizeof *s);
	unsigned k = 0;
	struct spread out = { NAN, NAN, NAN };

	for (unsigned i = 0; i < n; i++)
		if (!isnan(v[i]))
			s[k++] = v[i];
	if (k) {
		out.med = bench_lower_median(s, k); /* sorts s */
		out.lo = s[0];
		out.hi = s[k - 1];
	}
	free(s);
	return out;
}

/* The latency rows: the percentiles, then min and max. */
#define NROWS (NPCT + 2)

static double row_value(const struct sb_result *r, unsigned row)
{
	if (row < NPCT)
		return (double)r->pct[row];
	return (double)(row == NPCT ? r->min : r->max);
}

static void row_name(unsigned row, char *buf, size_t len)
{
	if (row < NPCT)
		snprintf(buf, len, "%s%.1fth", row == PCT_P99 ? "*" : "", pct_list[row]);
	else
		snprintf(buf, len, "%s", row == NPCT ? "min" : "max");
}

static struct spread row_spread(const struct sb_result *runs, unsigned n, unsigned row)
{
	double *v = bench_xcalloc(n, sizeof *v);

	for (unsigned i = 0; i < n; i++)
		v[i] = runs[i].wakeups ? row_value(&runs[i], row) : NAN;
	struct spread s = spread_of(v, n);
	free(v);
	return s;
}

static struct spread fig_spread(const struct sb_result *runs, unsigned n, const struct sb_fig *f)
{
	double *v = bench_xcalloc(n, sizeof *v);

	for (unsigned i = 0; i < n; i++)
		v[i] = f->value(&runs[i]);
	struct spread s = spread_of(v, n);
	free(v);
	return s;
}

/* ---- output ---------------------------------------------------------------- */

/* The seed's shape, from the medians of the runs. */
static void print_latencies(const struct sb_result *runs, unsigned n)
{
	printf("Latency percentiles (usec)\n");
	for (unsigned row = 0; row < NPCT; row++)
		printf("\t%s%.1fth: %.0f\n", row == PCT_P99 ? "*" : "", pct_list[row],
		       row_spread(runs, n, row).med);
	printf("\tmin=%.0f, max=%.0f\n", row_spread(runs, n, NPCT).med,
	       row_spread(runs, n, NPCT + 1).med);
}

static void fmt_spread(char *buf, size_t len, struct spread s, int prec)
{
	if (isnan(s.med))
		snprintf(buf, len, "-");
	else if (s.lo == s.hi)
		snprintf(buf, len, "%.*f", prec, s.med);
	else
		snprintf(buf, len, "%.*f [%.*f-%.*f]", prec, s.med, prec, s.lo, prec, s.hi);
}

static void fmt_ratio(char *buf, size_t len, double a, double b)
{
	if (isnan(a) || isnan(b) || b == 0)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.2f", a / b);
}

static void print_tables(const struct sb_opts *o, struct sb_result *const *runs)
{
	int iww = -1, isw = -1;
	bool ratio;
	char cell[64], name[16];

	for (unsigned k = 0; k < o->nmodes; k++) {
		if (o->modes[k] == MODE_WAKE_WAIT)
			iww = (int)k;
		else
			isw = (int)k;
	}
	ratio = iww >= 0 && isw >= 0;

	printf("\nlatency (usec): median of %u run%s [min-max over the runs]\n", o->repeat,
	       o->repeat == 1 ? "" : "s");
	printf("%-10s", "");
	for (unsigned k = 0; k < o->nmodes; k++)
		printf(" %24s", mode_names[o->modes[k]]);
	if (ratio)
		printf(" %19s", "wake+wait/hl_swap");
	printf("\n");
	for (unsigned row = 0; row < NROWS; row++) {
		row_name(row, name, sizeof name);
		printf("%-10s", name);
		for (unsigned k = 0; k < o->nmodes; k++) {
			fmt_spread(cell, sizeof cell, row_spread(runs[k], o->repeat, row), 0);
			printf(" %24s", cell);
		}
		if (ratio) {
			fmt_ratio(cell, sizeof cell, row_spread(runs[iww], o->repeat, row).med,
				  row_spread(runs[isw], o->repeat, row).med);
			printf(" %19s", cell);
		}
		printf("\n");
	}

	printf("\ncost and fairness per wake-up: median of %u run%s [min-max]\n", o->repeat,
	       o->repeat == 1 ? "" : "s");
	printf("  wakeups     latency samples (worker wake-ups), wakeups/s over the run's wall time\n"
	       "  cpu-us/wk   all threads' CPU time / wake-ups, the workers' -c think time included\n"
	       "  sync-us/wk  the same less the think time: waking, waiting, spinning\n"
	       "  futex/wk    futex syscalls (hl_futex_stats_total) / wake-ups\n"
	       "  csw/wk      voluntary context switches / wake-ups\n"
	       "  thr-*       wake-ups per worker: min, avg, max; min/max their ratio\n"
	       "  other       CPUs kept busy by other processes during the run\n");
	for (size_t f = 0; f < NFIGS; f++) {
		printf("%-11s", figs[f].head);
		for (unsigned k = 0; k < o->nmodes; k++) {
			fmt_spread(cell, sizeof cell, fig_spread(runs[k], o->repeat, &figs[f]),
				   figs[f].prec);
			printf(" %24s", cell);
		}
		if (ratio) {
			fmt_ratio(cell, sizeof cell, fig_spread(runs[iww], o->repeat, &figs[f]).med,
				  fig_spread(runs[isw], o->repeat, &figs[f]).med);
			printf(" %19s", cell);
		}
		printf("\n");
	}
	for (unsigned k = 0; k < o->nmodes; k++) {
		uint64_t zeros = 0, n = 0;

		for (unsigned i = 0; i < o->repeat; i++) {
			zeros += runs[k][i].zeros;
			n += runs[k][i].wakeups;
		}
		if (zeros)
			printf("%s: %llu of %llu latencies were 0 usec (recorded; schbench drops them)\n",
			       mode_names[o->modes[k]], (unsigned long long)zeros,
			       (unsigned long long)n);
	}
}

/* {"median", "min", "max"} of a spread (null where NAN). */
static void json_spread(struct bench_json *j, const char *key, struct spread s)
{
	bench_json_object(j, key);
	bench_json_number(j, "median", s.med);
	bench_json_number(j, "min", s.lo);
	bench_json_number(j, "max", s.hi);
	bench_json_end(j);
}

static void write_json(const struct sb_opts *o, struct sb_result *const *runs)
{
	struct bench_json *j = bench_json_open(o->json);
	char name[16];

	bench_json_object(j, NULL);
	bench_json_string(j, "bench", me);
	bench_json_object(j, "config");
	bench_json_uint(j, "message_threads", o->m);
	bench_json_uint(j, "workers_per_message_thread", o->t);
	bench_json_number(j, "runtime_s", o->runtime_s);
	bench_json_uint(j, "cputime_us", o->cputime_us);
	bench_json_uint(j, "sleeptime_us", o->sleeptime_us);
	bench_json_uint(j, "repeat", o->repeat);
	bench_json_array(j, "modes");
	for (unsigned k = 0; k < o->nmodes; k++)
		bench_json_string(j, NULL, mode_names[o->modes[k]]);
	bench_json_end(j);
	bench_json_environment(j);
	bench_json_end(j);              /* config */

	bench_json_array(j, "results");
	for (unsigned k = 0; k < o->nmodes; k++) {
		const struct sb_result *rr = runs[k];

		bench_json_object(j, NULL);
		bench_json_string(j, "mode", mode_names[o->modes[k]]);
		bench_json_object(j, "latency_usec");
		for (unsigned row = 0; row < NROWS; row++) {
			row_name(row, name, sizeof name);
			json_spread(j, name[0] == '*' ? name + 1 : name,
				    row_spread(rr, o->repeat, row));
		}
		bench_json_end(j);
		for (size_t f = 0; f < NFIGS; f++)
			json_spread(j, figs[f].json, fig_spread(rr, o->repeat, &figs[f]));
		bench_json_array(j, "runs");
		for (unsigned i = 0; i < o->repeat; i++) {
			const struct sb_result *r = &rr[i];

			bench_json_object(j, NULL);
			bench_json_object(j, "latency_usec");
			for (unsigned row = 0; row < NROWS; row++) {
				row_name(row, name, sizeof name);
				bench_json_number(j, name[0] == '*' ? name + 1 : name,
						  row_value(r, row));
			}
			bench_json_end(j);
			bench_json_uint(j, "zero_usec_samples", r->zeros);
			bench_json_number(j, "wall_s", r->wall_s);
			bench_json_number(j, "cpu_s", r->cpu_s);
			bench_json_number(j, "think_cpu_s", r->think_cpu_s);
			bench_json_uint(j, "futex_calls", r->futex_calls);
			bench_json_uint(j, "csw", r->csw);
			for (size_t f = 0; f < NFIGS; f++)
				bench_json_number(j, figs[f].json, figs[f].value(r));
			bench_json_end(j);
		}
		bench_json_end(j);      /* runs */
		bench_json_end(j);
	}
	bench_json_end(j);              /* results */
	bench_json_end(j);              /* the top-level object */
	bench_json_close(j);
}

/* ---- command line ------------------------------------------------------------ */

static void schbench_help(FILE *f)
{
	fprintf(f,
		"Usage: hotlock-bench schbench [-m N] [-t N] [-r S] [-c US] [-s US]\n"
		"                              [--modes LIST] [--repeat R] [--json FILE]\n"
		"\n"
		"Chris Mason's schbench (seed 003): M message threads, each with T workers.\n"
		"A worker spins -c usec, then wakes its message thread and waits; the\n"
		"message thread sleeps -s usec (+ up to 25%% jitter), then wakes the\n"
		"workers that wait, stamping the time.  The latency is from that wake-up\n"
		"to the worker running again, printed as schbench does (usec percentiles\n"
		"of fio's histogram).  Modes:\n"
		"  wake+wait   futex words: hl_futex_wake, then hl_futex_wait (schbench)\n"
		"  hl_swap     the worker's wake-and-wait is one hl_swap (Aaron Lu's\n"
		"              FUTEX_SWAP change); the message thread wakes with hl_wake\n"
		"              and waits with hl_wait_self, its last wake of a pass (-t 1:\n"
		"              its only one) and wait being one hl_swap\n"
		"The runs of the modes are interleaved; each figure is the median of the\n"
		"repeats with their range; then the ratio wake+wait / hl_swap.\n"
		"\n"
		"  -m, --message-threads N  message threads (default 2, as schbench)\n"
		"  -t, --threads N          workers per message thread (default 16)\n"
		"  -r, --runtime S          seconds per run (default 30)\n"
		"  -c, --cputime US         worker think time per loop, usec (default 30000)\n"
		"  -s, --sleeptime US       message thread sleep per pass, usec (default 30000)\n"
		"  --modes LIST             wake+wait,hl_swap (default both)\n"
		"  --repeat R               runs per mode (default 3)\n"
		"  --json FILE              also write the results as JSON\n"
		"\n"
		"On 2 CPUs: -m 8 -t 1 (16 threads) is overloaded, -m 1 -t 1 is not.\n");
}

static void mode_item(void *ctx, const char *entry)
{
	struct sb_opts *o = ctx;
	int m = -1;

	for (int k = 0; k < NMODES; k++)
		if (strcmp(entry, mode_names[k]) == 0)
			m = k;
	if (m < 0)
		bench_usage_error(me, "--modes: unknown mode '%s' (wake+wait, hl_swap)", entry);
	for (unsigned k = 0; k < o->nmodes; k++)
		if (o->modes[k] == (enum sb_mode)m)
			bench_usage_error(me, "--modes: '%s' given twice", entry);
	o->modes[o->nmodes++] = (enum sb_mode)m;
}

static const char *opt2(int argc, char **argv, int *i, const char *shrt, const char *lng)
{
	const char *v = bench_opt_value(me, argc, argv, i, shrt);

	return v ? v : bench_opt_value(me, argc, argv, i, lng);
}

/* The command line as parse reads it: the options, and --modes as given. */
struct sb_parse {
	struct sb_opts *o;
	const char *modes;
};

/* Consumes argv[*i] if it is one of schbench's options (bench_parse_args). */
static bool sb_option(void *ctx, int argc, char **argv, int *i)
{
	struct sb_parse *p = ctx;
	struct sb_opts *o = p->o;
	const char *v;

	if ((v = opt2(argc, argv, i, "-m", "--message-threads")))
		o->m = (unsigned)bench_parse_ulong(me, "--message-threads", v, 1,
						   BENCH_MAX_THREADS / 2);
	else if ((v = opt2(argc, argv, i, "-t", "--threads")))
		o->t = (unsigned)bench_parse_ulong(me, "--threads", v, 1,
						   BENCH_MAX_THREADS - 1);
	else if ((v = opt2(argc, argv, i, "-r", "--runtime")))
		o->runtime_s = bench_parse_seconds(me, "--runtime", v, 86400);
	else if ((v = opt2(argc, argv, i, "-c", "--cputime")))
		o->cputime_us = bench_parse_ulong(me, "--cputime", v, 0, SB_MAX_USEC);
	else if ((v = opt2(argc, argv, i, "-s", "--sleeptime")))
		o->sleeptime_us = bench_parse_ulong(me, "--sleeptime", v, 0, SB_MAX_USEC);
	else if ((v = bench_opt_value(me, argc, argv, i, "--modes")))
		p->modes = v;
	else if ((v = bench_opt_value(me, argc, argv, i, "--repeat")))
		o->repeat = (unsigned)bench_parse_ulong(me, "--repeat", v, 1, 100);
	else if ((v = bench_opt_value(me, argc, argv, i, "--json")))
		o->json = v;
	else
		return false;
	return true;
}

static void parse(struct sb_opts *o, int argc, char **argv)
{
	struct sb_parse p = { .o = o };

	*o = (struct sb_opts){ .m = 2, .t = 16, .runtime_s = 30, .cputime_us = 30000,
			       .sleeptime_us = 30000, .repeat = 3 };
	bench_parse_args(me, argc, argv, NULL, schbench_help, sb_option, &p);
	if ((unsigned long)o->m * (o->t + 1ul) > BENCH_MAX_THREADS)
		bench_usage_error(me, "-m %u -t %u makes %lu threads; at most %u", o->m, o->t,
				  (unsigned long)o->m * (o->t + 1ul), BENCH_MAX_THREADS);
	bench_list_each(me, "--modes", p.modes ? p.modes : "wake+wait,hl_swap", mode_item, o);
}

static int schbench_main(int argc, char **argv)
{
	struct sb_opts o;
	struct sb_result *runs[NMODES];
	char result[96];

	parse(&o, argc, argv);
	for (unsigned k = 0; k < o.nmodes; k++)
		runs[k] = bench_xcalloc(o.repeat, sizeof *runs[k]);

	printf("schbench: -m %u -t %u -r %g -c %lu -s %lu: %u message threads, %u workers, "
	       "%u run%s per mode, interleaved (futex interface %s)\n",
	       o.m, o.t, o.runtime_s, o.cputime_us, o.sleeptime_us, o.m, o.m * o.t, o.repeat,
	       o.repeat == 1 ? "" : "s", hl_futex_interface());
	fflush(stdout);
	bench_progress_start(o.repeat * o.nmodes);
	for (unsigned i = 0; i < o.repeat; i++) {
		for (unsigned k = 0; k < o.nmodes; k++) {
			struct sb_result *r = &runs[k][i];

			bench_progress_begin("schbench %s -m %u -t %u, run %u/%u (%g s)",
					     mode_names[o.modes[k]], o.m, o.t, i + 1, o.repeat,
					     o.runtime_s);
			run_once(&o, o.modes[k], r);
			snprintf(result, sizeof result, "p50 %llu p99 %llu max %llu usec, %llu wake-ups",
				 (unsigned long long)r->pct[0],
				 (unsigned long long)r->pct[PCT_P99],
				 (unsigned long long)r->max, (unsigned long long)r->wakeups);
			bench_progress_end(result, r->other_cpus);
		}
	}
	bench_progress_clear();

	for (unsigned k = 0; k < o.nmodes; k++) {
		printf("\n%s (median of %u run%s)\n", mode_names[o.modes[k]], o.repeat,
		       o.repeat == 1 ? "" : "s");
		print_latencies(runs[k], o.repeat);
	}
	print_tables(&o, runs);
	if (o.json)
		write_json(&o, runs);
	for (unsigned k = 0; k < o.nmodes; k++)
		free(runs[k]);
	return 0;
}

const struct bench_scenario bench_scenario_schbench = {
	.name = "schbench",
	.summary = "Chris Mason's schbench: wake-up latency percentiles, futex wake+wait vs hl_swap (seed 003)",
	.main = schbench_main,
};
