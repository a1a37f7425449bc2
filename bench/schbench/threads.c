/* SPDX-License-Identifier: MIT */
/* hotlock-bench-schbench: the threads of one run (schbench.c's model): the
 * workers' and the msg threads' loops, and the harness's hooks that end a
 * run (on_stop) and report a hung one (on_hang).  Where they post, wait or
 * wake, the run's mode does it (wake.c). */
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "schbench.h"

static const char *const phase_names[] = { "starting", "thinking", "posting", "waiting",
					   "recording", "waking", "sleeping", "done" };

uint64_t sb_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* schbench's usec_spin: wall-clock time, so a preempted worker thinks less. */
static void think(struct sb_worker *w, unsigned long us)
{
	uint64_t end;
	double c0;

	if (!us)
		return;
	c0 = bench_thread_cpu_s();
	end = sb_now_ns() + (uint64_t)us * 1000u;
	while (sb_now_ns() < end)
		bench_pause();
	w->think_cpu_s += bench_thread_cpu_s() - c0;
}

/* Worker step 3 and 4.  Returns the latency in usec, or -1 when the run
 * ended (no sample). */
static int64_t msg_and_wait(struct sb_run *r, struct sb_worker *w,
			    struct bench_thread *bt)
{
	struct sb_msg *msg = w->msg;
	struct sb_worker *old;

	sb_set_phase(&w->phase, PH_POST);
	sb_worker_ready(r, w);
	/* Relaxed: the msg thread overwrites it before its wake, whose
	 * release/acquire (or the futex word's seq_cst CAS) orders it. */
	atomic_store_explicit(&w->wake_ns, sb_now_ns(), memory_order_relaxed);
	old = atomic_load(&msg->head);
	do
		atomic_store_explicit(&w->next, old, memory_order_relaxed);
	while (!atomic_compare_exchange_weak(&msg->head, &old, w));

	if (sb_worker_post_wait(r, w, bt))
		return -1;
	uint64_t now = sb_now_ns();
	if (sb_stopping(r))
		return -1;
	uint64_t woke = atomic_load_explicit(&w->wake_ns, memory_order_relaxed);
	/* Truncated to usec before the difference, as gettimeofday's. */
	uint64_t a = woke / 1000u, b = now / 1000u;
	return b > a ? (int64_t)(b - a) : 0;
}

static uint64_t worker_body(struct sb_run *r, struct sb_worker *w,
			    struct bench_thread *bt)
{
	uint64_t served = 0;

	while (!sb_stopping(r) && !bt->err) {
		sb_set_phase(&w->phase, PH_THINK);
		think(w, r->o->cputime_us);
		int64_t us = msg_and_wait(r, w, bt);
		sb_set_phase(&w->phase, PH_RECORD);
		if (us >= 0) {
			sb_hist_add(&w->hist, (uint64_t)us);
			served++;
		}
	}
	sb_set_phase(&w->phase, PH_DONE);
	return served;
}

/* Msg thread steps 1-2.  swap: wake the last worker with hl_swap, which
 * also waits (step 4); returns true when it did. */
static bool wake_all(struct sb_run *r, struct sb_msg *msg, bool swap,
		     struct bench_thread *bt)
{
	struct sb_worker *list = atomic_exchange(&msg->head, NULL);
	uint64_t now = sb_now_ns();

	while (list) {
		/* Read before the wake: once woken, the worker pushes itself
		 * again.  Relaxed: its push's CAS, which our exchange read,
		 * published it. */
		struct sb_worker *next = atomic_load_explicit(&list->next, memory_order_relaxed);

		atomic_store_explicit(&list->next, NULL, memory_order_relaxed);
		atomic_store_explicit(&list->wake_ns, now, memory_order_relaxed);
		msg->wakes++;
		if (!next && swap) {
			sb_msg_swap(msg, list, bt);
			return true;
		}
		sb_wake_worker(r, list);
		list = next;
	}
	return false;
}

static uint64_t msg_body(struct sb_run *r, struct sb_msg *msg, struct bench_thread *bt)
{
	const unsigned long s = r->o->sleeptime_us;

	for (;;) {
		bool stop, waited;

		sb_msg_ready(r, msg);
		stop = sb_stopping(r) || bt->err;
		sb_set_phase(&msg->phase, PH_WAKE);
		waited = wake_all(r, msg, r->mode == MODE_SWAP && !stop, bt);
		if (stop) {
			wake_all(r, msg, false, bt);
			break;
		}
		if (!waited)
			sb_msg_wait(r, msg, bt);
		while (!sb_stopping(r) && !bt->err && !atomic_load(&msg->head))
			sb_msg_wait(r, msg, bt);
		if (sb_stopping(r) || bt->err)
			continue;       /* step 3 on the next pass */
		if (s) {
			unsigned long jitter = s >= 4 ? (unsigned long)rand_r(&msg->seed) % (s / 4) : 0;

			sb_set_phase(&msg->phase, PH_SLEEP);
			usleep((useconds_t)(s + jitter));
		}
	}
	for (unsigned i = 0; i < r->o->t; i++)
		sb_wake_worker(r, &msg->workers[i]);
	sb_set_phase(&msg->phase, PH_DONE);
	return msg->wakes;
}

uint64_t sb_body(struct bench_thread *bt, void *arg)
{
	struct sb_run *r = arg;

	if (bt->id < r->o->m)
		return msg_body(r, &r->msgs[bt->id], bt);
	return worker_body(r, &r->workers[bt->id - r->o->m], bt);
}

void sb_on_stop(void *arg)
{
	struct sb_run *r = arg;
	unsigned nw = r->o->m * r->o->t;

	atomic_store(&r->stopping, true);
	for (unsigned i = 0; i < r->o->m; i++)
		sb_wake_msg(r, &r->msgs[i]);
	for (unsigned i = 0; i < nw; i++)
		sb_wake_worker(r, &r->workers[i]);
}

void sb_on_hang(void *arg)
{
	struct sb_run *r = arg;
	unsigned nw = r->o->m * r->o->t;

	fprintf(stderr, "hotlock-bench schbench: mode %s, stopping=%d\n",
		sb_mode_names[r->mode], (int)atomic_load(&r->stopping));
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
				(unsigned long long)r->workers[i].hist.lat.n);
}
