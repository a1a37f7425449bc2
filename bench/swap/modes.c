/* SPDX-License-Identifier: MIT */
/* hotlock-bench swap: one run (swap_run_once, see swap.h): two threads
 * ping-pong in one mode, threads 2.. busy-loop beside them (the load).
 *
 * Stopping: the harness sets the stop flag after --duration.  A thread that
 * sees it leaves its loop and wakes its peer once more (in spin mode a
 * spinner also gives up on the flag); the peer, woken by that wake, reads
 * the flag as set (read-read coherence: its waker read it before the
 * release that the peer's acquire saw) and leaves too.  No wake is added
 * from outside the pair, so a wake that hl_swap lost would leave the pair
 * stuck: the harness's watchdog (duration + 30 s) then prints both sides'
 * state and exits 1. */
#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <hotlock/futex.h>
#include <hotlock/swap.h>

#include "swap.h"
#include "uring.h"

const char *const swap_mode_names[NMODES] = { "wake+wait", "hl_swap", "spin", "uring" };
const char *const swap_placement_names[NPLACEMENTS] = { "cross", "same", "free" };


/* What one ping-pong thread waits on: its word (wake+wait, spin, uring) or
 * its swap point (hl_swap), on a cache line of their own.  Sequentially
 * consistent atomics on the words: this measures handovers, not memory
 * orders. */
struct side {
	_Alignas(BENCH_CACHELINE) _Atomic uint32_t word;
	hl_swap_point_t point;
};

/* What one ping-pong thread measured, written by it alone, read after the
 * join. */
struct side_stats {
	_Alignas(BENCH_CACHELINE) uint64_t rounds;
	uint64_t enters;        /* io_uring_enter calls (uring) */
	double t0, t1;          /* CLOCK_MONOTONIC around its loop */
	double cpu_s;           /* CLOCK_THREAD_CPUTIME_ID over the loop */
};

struct pingpong {
	struct side side[2];
	struct side_stats stats[2];
	enum swap_mode mode;
	int cpu[2];             /* the CPU each side is pinned to; -1: not pinned */
};

/* The handover primitives of each mode.  They return 0, an errno value
 * (the run fails), or -1: stop seen while spinning. */

static int spin_wait(struct bench_thread *t, _Atomic uint32_t *self)
{
	while (!atomic_load(self)) {
		if (bench_should_stop(t))
			return -1;
		bench_pause();
	}
	atomic_store(self, 0);
	return 0;
}

static int futex_await(_Atomic uint32_t *self)
{
	while (!atomic_load(self)) {
		int err = hl_futex_wait((uint32_t *)self, 0, CLOCK_MONOTONIC, NULL);
		if (err && err != EAGAIN && err != EINTR)
			return err;
	}
	atomic_store(self, 0);
	return 0;
}

static void futex_post(_Atomic uint32_t *peer)
{
	atomic_store(peer, 1);
	hl_futex_wake((uint32_t *)peer, 1);
}

struct side_ctx {
	struct bench_thread *t;
	struct pingpong *p;
	struct side *self, *peer;
	struct swap_ring *ring;
	const char *what;       /* the failed step */
};

static int handover(struct side_ctx *c)
{
	switch (c->p->mode) {
	case M_WAKE_WAIT:
		futex_post(&c->peer->word);
		c->what = "hl_futex_wait";
		return futex_await(&c->self->word);
	case M_HL_SWAP:
		c->what = "hl_swap";
		return hl_swap(&c->peer->point, &c->self->point);
	case M_SPIN:
		atomic_store(&c->peer->word, 1);
		return spin_wait(c->t, &c->self->word);
	case M_URING:
		return swap_ring_swap(c->ring, &c->peer->word, &c->self->word, &c->what);
	default:
		return EINVAL;
	}
}

static int first_wait(struct side_ctx *c)
{
	switch (c->p->mode) {
	case M_WAKE_WAIT:
		c->what = "hl_futex_wait";
		return futex_await(&c->self->word);
	case M_HL_SWAP:
		c->what = "hl_wait_self";
		return hl_wait_self(&c->self->point);
	case M_SPIN:
		return spin_wait(c->t, &c->self->word);
	case M_URING:
		return swap_ring_wait(c->ring, &c->self->word, &c->what);
	default:
		return EINVAL;
	}
}

/* The wake a thread leaves with, so that its peer sees the stop flag.  Not
 * through the ring (which may be what failed): one futex call, counted, per
 * run. */
static void last_wake(struct side_ctx *c)
{
	if (c->p->mode == M_HL_SWAP)
		hl_wake(&c->peer->point);
	else if (c->p->mode == M_SPIN)
		atomic_store(&c->peer->word, 1);
	else
		futex_post(&c->peer->word);
}

static uint64_t load_body(struct bench_thread *t)
{
	uint64_t n = 0;

	while (!bench_should_stop(t)) {
		for (int i = 0; i < 256; i++)
			bench_pause();
		n++;
	}
	return n;
}

/* Thread 0 starts each round trip and counts them; thread 1 answers;
 * threads 2.. are the load. */
static uint64_t swap_body(struct bench_thread *t, void *arg)
{
	struct pingpong *p = arg;

	if (t->id >= 2)
		return load_body(t);

	const unsigned id = t->id;
	struct side_ctx c = { .t = t, .p = p, .self = &p->side[id], .peer = &p->side[1 - id] };
	struct side_stats *st = &p->stats[id];
	int err = 0;

	if (p->cpu[id] >= 0 && (err = bench_pin_self(p->cpu[id])) != 0) {
		c.what = "pthread_setaffinity_np";
		goto out;
	}
	if (p->mode == M_URING) {
		char why[160];
		if ((err = swap_ring_open(&c.ring, why, sizeof why)) != 0) {
			c.what = "io_uring setup";
			goto out;
		}
	}
	double cpu0 = bench_thread_cpu_s();
	st->t0 = bench_now();
	if (id == 0) {
		while (!bench_should_stop(t) && (err = handover(&c)) == 0)
			st->rounds++;
	} else if ((err = first_wait(&c)) == 0) {
		while (!bench_should_stop(t) && (err = handover(&c)) == 0)
			;
	}
	st->t1 = bench_now();
	st->cpu_s = bench_thread_cpu_s() - cpu0;
out:
	last_wake(&c);
	if (c.ring) {
		st->enters = swap_ring_enters(c.ring);
		swap_ring_close(c.ring);
	}
	if (err > 0)
		bench_thread_fail(t, c.what ? c.what : "handover", err);
	return st->rounds;
}

static void swap_on_hang(void *arg)
{
	const struct pingpong *p = arg;

	for (int i = 0; i < 2; i++) {
		const struct side *s = &p->side[i];
		const uint32_t *pt = (const uint32_t *)&s->point;
		fprintf(stderr,
			"hotlock-bench: swap %s thread %d: word %u, swap point state %u cpu %u spin %#x\n",
			swap_mode_names[p->mode], i, (unsigned)atomic_load(&s->word), pt[0], pt[1], pt[2]);
	}
}

struct swap_run swap_run_once(enum swap_mode mode, enum placement pl, unsigned load,
			      const int cpus[2], double duration_s)
{
	struct pingpong *p = bench_alloc_lines(sizeof *p);
	struct bench_sample sample;
	hl_futex_stats_t f0, f1;
	char label[96];
	struct swap_run out;

	p->mode = mode;
	p->cpu[0] = pl == P_FREE ? -1 : cpus[0];
	p->cpu[1] = pl == P_FREE ? -1 : pl == P_SAME ? cpus[0] : cpus[1];
	snprintf(label, sizeof label, "swap %s load=%u %s", swap_placement_names[pl], load,
		 swap_mode_names[mode]);
	struct bench_run_spec spec = {
		.label = label,
		.threads = 2 + load,
		.duration_s = duration_s,
		.body = swap_body,
		.arg = p,
		.futex_counted = true,
		.on_hang = swap_on_hang,
	};
	hl_futex_stats_total(&f0);
	bench_run(&spec, &sample);
	hl_futex_stats_total(&f1);

	const struct side_stats *a = &p->stats[0], *b = &p->stats[1];
	double rounds = (double)a->rounds;
	out.rounds = a->rounds;
	out.loop_s = a->t1 - a->t0;
	out.ns_rt = a->rounds ? out.loop_s * 1e9 / rounds : NAN;
	out.cpu_ns_rt = a->rounds ? (a->cpu_s + b->cpu_s) * 1e9 / rounds : NAN;
	out.cpus = out.loop_s > 0 ? (a->cpu_s + b->cpu_s) / out.loop_s : NAN;
	out.futex_rt = a->rounds ? (double)(hl_futex_stats_calls(&f1) -
					    hl_futex_stats_calls(&f0)) / rounds : NAN;
	out.futex_wait_rt = a->rounds ? (double)(f1.wait - f0.wait) / rounds : NAN;
	out.futex_wake_rt = a->rounds ? (double)(f1.wake - f0.wake) / rounds : NAN;
	out.enters_rt = mode == M_URING && a->rounds ? (double)(a->enters + b->enters) / rounds
						     : NAN;
	out.other_cpus = sample.other_cpus;
	bench_sample_free(&sample);
	free(p);
	return out;
}
