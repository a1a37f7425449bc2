/* SPDX-License-Identifier: MIT */
/* hotlock-bench-schbench: the two wake modes (schbench.c's "Modes"), the
 * only code that wakes or waits: wake+wait on schbench's futex words,
 * hl_swap on swap points.  The thread bodies (threads.c) call these
 * wherever a thread posts, waits or wakes. */
#include <errno.h>
#include <time.h>

#include <hotlock/futex.h>
#include <hotlock/swap.h>

#include "schbench.h"

/* ---- wake+wait: schbench's futex word -------------------------------------- */

enum { BLOCKED = 0, RUNNING = 1 };

/* schbench's fpost: wakes the word's thread if it is blocked (or about to
 * be: BLOCKED is stored before the thread posts and waits). */
static void fpost(_Atomic uint32_t *w)
{
	uint32_t e = BLOCKED;

	if (atomic_compare_exchange_strong(w, &e, RUNNING))
		hl_futex_wake((uint32_t *)w, 1);
}

/* schbench's fwait: until a post turns the word RUNNING, then BLOCKED again;
 * records an error in bt. */
static void fwait(_Atomic uint32_t *w, struct bench_thread *bt)
{
	for (;;) {
		uint32_t e = RUNNING;
		int err;

		if (atomic_compare_exchange_strong(w, &e, BLOCKED))
			return;
		err = hl_futex_wait((uint32_t *)w, BLOCKED, CLOCK_MONOTONIC, NULL);
		if (err && err != EAGAIN && err != EINTR) {
			bench_thread_fail(bt, "hl_futex_wait", err);
			return;
		}
	}
}

/* ---- hl_swap: a swap point per thread ---------------------------------------- */

static void swap_check(struct bench_thread *bt, const char *what, int err)
{
	if (err)
		bench_thread_fail(bt, what, err);
}

/* ---- what the bodies call, in the run's mode ---------------------------------- */

/* Before the worker posts: a post that comes after this wakes it. */
void sb_worker_ready(struct sb_run *r, struct sb_worker *w)
{
	if (r->mode == MODE_WAKE_WAIT)
		atomic_store(&w->word, BLOCKED);
}

/* Worker step 3, once it is on its msg thread's list: wakes the msg thread
 * and, unless the run is over, waits (hl_swap: both in one call).  Returns
 * 0 once woken, -1 when the run ended before the wait or the wait failed
 * (recorded in bt). */
int sb_worker_post_wait(struct sb_run *r, struct sb_worker *w, struct bench_thread *bt)
{
	struct sb_msg *msg = w->msg;

	if (r->mode == MODE_WAKE_WAIT) {
		fpost(&msg->word);
		if (sb_stopping(r))
			return -1;
		sb_set_phase(&w->phase, PH_WAIT);
		fwait(&w->word, bt);
	} else {
		if (sb_stopping(r)) {
			hl_wake(&msg->point);
			return -1;
		}
		sb_set_phase(&w->phase, PH_WAIT);
		swap_check(bt, "hl_swap", hl_swap(&msg->point, &w->point));
	}
	return bt->err ? -1 : 0;
}

/* At the top of the msg thread's pass: drops the posts that came in during
 * its sleep (the workers behind them are on the list it is about to take). */
void sb_msg_ready(struct sb_run *r, struct sb_msg *msg)
{
	if (r->mode == MODE_WAKE_WAIT)
		atomic_store(&msg->word, BLOCKED);
}

/* Msg thread step 4: until a worker (or the end of the run) wakes it. */
void sb_msg_wait(struct sb_run *r, struct sb_msg *msg, struct bench_thread *bt)
{
	sb_set_phase(&msg->phase, PH_WAIT);
	if (r->mode == MODE_SWAP)
		swap_check(bt, "hl_wait_self", hl_wait_self(&msg->point));
	else
		fwait(&msg->word, bt);
}

/* hl_swap only: msg thread step 2 for its last worker and step 4, in one
 * hl_swap. */
void sb_msg_swap(struct sb_msg *msg, struct sb_worker *w, struct bench_thread *bt)
{
	swap_check(bt, "hl_swap", hl_swap(&w->point, &msg->point));
}

void sb_wake_worker(struct sb_run *r, struct sb_worker *w)
{
	if (r->mode == MODE_SWAP)
		hl_wake(&w->point);
	else
		fpost(&w->word);
}

void sb_wake_msg(struct sb_run *r, struct sb_msg *msg)
{
	if (r->mode == MODE_SWAP)
		hl_wake(&msg->point);
	else
		fpost(&msg->word);
}
