/* SPDX-License-Identifier: MIT */
/* White-box test of the waiting core (src/wait.h): a waiter node, spin then
 * park on the node's own futex word, signal a node.
 *
 * Asserts, with the futex counters of the waiting and the signalling thread:
 *  - signal before the waiter parks costs no syscall at all: a node
 *    signalled before hl__node_wait is called (even with a spin budget of 0)
 *    returns the signal with 0 futex waits and the signaller made 0 wakes;
 *  - a waiter that is spinning when signalled: over many rounds, every round
 *    in which the waiter did not park has 0 wake syscalls, and every round in
 *    which it parked has exactly 1 and had spent its spin budget first (the
 *    two cases are counted and printed);
 *  - signal after the waiter parked (state PARKED and the thread asleep in
 *    the kernel): exactly 1 wake syscall that wakes 1 thread, the waiter
 *    returns that signal after exactly 1 futex wait;
 *  - data written before the signal is seen by the waiter after it returns
 *    (a plain variable: ThreadSanitizer checks the release/acquire pair);
 *  - a deadline that passes abandons the node (HL_WAIT_TIMEDOUT, state
 *    ABANDONED), both while parked and while still spinning (then without
 *    any futex wait), and a later signal is refused without a syscall;
 *  - the two-step claim/post: claiming a spinning node reports not parked and
 *    posting costs no syscall; claiming a parked node reports parked and
 *    posting wakes it with one syscall; a claim of an abandoned node fails;
 *  - an interruptible wait (a deadline with an interrupt word, and no time)
 *    ends when another thread interrupts the waiter (hl__thread_interrupt,
 *    as the pthread shim's pthread_cancel does): parked, it is woken and
 *    abandons its node (HL_WAIT_TIMEDOUT); interrupted before it waits, it
 *    does not sleep at all; a wait with no time and no interrupt is not
 *    ended by another thread's interrupt (run once more with
 *    HOTLOCK_FUTEX=futex: the fallback without futex_waitv);
 *  - a fork child gets the spinner slots back: with 2 or more usable CPUs,
 *    a thread holds a slot (hl__spin_begin) while main forks, and in the
 *    child hl__spin_begin() returns a budget (the parent's spinner, which
 *    does not exist there, used to keep its slot for the child's life). */
#include "common.h"

#include <hotlock/config.h>
#include <hotlock/futex.h>

#include "thread.h"
#include "wait.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

enum mode {
	SIGNAL_FIRST,   /* main signals before the waiter calls hl__node_wait */
	SPINNING,       /* waiter spins (10 ms budget) while main signals */
	PARKED,         /* waiter parks at once; main signals once it sleeps */
	TIMEOUT_PARKED, /* parks, deadline passes */
	TIMEOUT_SPIN,   /* spins with a budget longer than the deadline */
	CLAIM_SPINNING,
	CLAIM_PARKED,
	KEEP_PARKED,    /* parks with a 30 ms deadline; main keeps the wait */
	KEEP_SPIN,      /* spins (10 ms budget) with a 5 ms deadline; kept */
	INTERRUPT_PARKED,       /* parks with an interrupt word; interrupted */
	INTERRUPT_FIRST,        /* interrupted before it waits */
};

struct round {
	enum mode mode;
	pthread_t th;
	_Atomic(struct hl__node *) node;  /* published by the waiter */
	atomic_uint tid;
	atomic_int go;                    /* SIGNAL_FIRST: main has signalled;
					   * INTERRUPT_FIRST: main has interrupted */
	uint64_t payload;                 /* plain: written before the signal */
	uint64_t seen;                    /* what the waiter read after it */
	uint32_t sig;
	hl_futex_stats_t wstats;          /* the waiter's counters over the wait */
	uint32_t state_after;
	int64_t t_wait;                   /* how long hl__node_wait took */
};

static void *waiter_main(void *p)
{
	struct round *r = p;
	struct hl__thread *self = hl__self();
	struct hl__node *n;
	hl_futex_stats_t a, b;
	struct hl__deadline dl;
	struct timespec ts;
	const struct hl__deadline *dlp = NULL;
	uint64_t spin = 0;

	REQUIRE(self, "no thread record");
	n = hl__thread_node_get(self);
	REQUIRE(n, "no node");
	hl__node_arm(n);
	atomic_store(&r->tid, test_gettid());
	switch (r->mode) {
	case SPINNING:
	case CLAIM_SPINNING:
		spin = HL_SPIN_NS_MAX;
		break;
	case TIMEOUT_PARKED:
	case KEEP_PARKED:
		ts = deadline_in(CLOCK_MONOTONIC, 30 * NSEC_PER_MSEC);
		REQUIRE(hl__deadline_init(&dl, CLOCK_MONOTONIC, &ts) == 0, "deadline");
		dlp = &dl;
		break;
	case TIMEOUT_SPIN:
	case KEEP_SPIN:
		spin = HL_SPIN_NS_MAX;
		ts = deadline_in(CLOCK_MONOTONIC, (r->mode == KEEP_SPIN ? 5 : 2) * NSEC_PER_MSEC);
		REQUIRE(hl__deadline_init(&dl, CLOCK_MONOTONIC, &ts) == 0, "deadline");
		dlp = &dl;
		break;
	case INTERRUPT_PARKED:
	case INTERRUPT_FIRST:
		dl.clock = CLOCK_MONOTONIC;
		dl.forever = true;
		dl.interrupt = &self->interrupt;
		dlp = &dl;
		break;
	default:
		break;
	}
	/* Release: main reads the armed node through this pointer. */
	atomic_store_explicit(&r->node, n, memory_order_release);
	if (r->mode == SIGNAL_FIRST || r->mode == INTERRUPT_FIRST)
		while (!atomic_load_explicit(&r->go, memory_order_acquire))
			sched_yield();

	hl_futex_stats_thread(&a);
	r->t_wait = now_ns();
	r->sig = hl__node_wait(n, dlp, spin);
	r->t_wait = now_ns() - r->t_wait;
	hl_futex_stats_thread(&b);
	r->wstats.wait = b.wait - a.wait;
	r->wstats.wake = b.wake - a.wake;
	r->wstats.woken = b.woken - a.woken;
	r->wstats.other = b.other - a.other;
	r->state_after = atomic_load(&n->state);
	if (r->sig == HL_WAIT_TIMEDOUT) {
		/* The node stays abandoned (main signals it, then recycles
		 * it); this thread takes a fresh one. */
		hl__thread_node_abandoned(self);
	} else {
		r->seen = r->payload;
		hl__thread_node_put(self);
	}
	return NULL;
}

/* Spins on the published node pointer: no sleep is relied on. */
static struct hl__node *wait_node(struct round *r)
{
	struct hl__node *n;
	int64_t end = now_ns() + 10 * NSEC_PER_SEC;
	while (!(n = atomic_load_explicit(&r->node, memory_order_acquire))) {
		REQUIRE(now_ns() < end, "waiter did not start");
		sched_yield();
	}
	return n;
}

/* Until the node is PARKED and its thread sleeps in the kernel. */
static void wait_parked(struct round *r, struct hl__node *n)
{
	int64_t end = now_ns() + 10 * NSEC_PER_SEC;
	while (atomic_load(&n->state) != HL_NODE_PARKED ||
	       thread_state(atomic_load(&r->tid)) != 'S') {
		REQUIRE(now_ns() < end, "waiter did not park within 10 s (state %u)",
			atomic_load(&n->state));
		sleep_ns(100 * NSEC_PER_USEC); /* polling a state, not a sync */
	}
}

static hl_futex_stats_t my_delta(const hl_futex_stats_t *a)
{
	hl_futex_stats_t b, d;
	hl_futex_stats_thread(&b);
	d.wait = b.wait - a->wait;
	d.wake = b.wake - a->wake;
	d.woken = b.woken - a->woken;
	d.other = b.other - a->other;
	return d;
}

static void start(struct round *r, enum mode m)
{
	memset(r, 0, sizeof(*r));
	r->mode = m;
	REQUIRE(pthread_create(&r->th, NULL, waiter_main, r) == 0, "pthread_create");
}

static void test_signal_first(void)
{
	for (int i = 0; i < 20; i++) {
		struct round r;
		hl_futex_stats_t a, d;
		struct hl__node *n;
		bool ok;

		start(&r, SIGNAL_FIRST);
		n = wait_node(&r);
		hl_futex_stats_thread(&a);
		r.payload = 1000 + (uint64_t)i;
		ok = hl__node_signal(n, HL_SIG_RELEASED);
		d = my_delta(&a);
		atomic_store_explicit(&r.go, 1, memory_order_release);
		pthread_join(r.th, NULL);
		CHECK(ok, "signal of a waiting node refused");
		CHECK(d.wake == 0 && d.wait == 0, "signal before the wait: %llu wake syscalls",
		      (unsigned long long)d.wake);
		CHECK(r.sig == HL_SIG_RELEASED, "waiter got %u", r.sig);
		CHECK(r.wstats.wait == 0, "waiter made %llu futex waits although signalled first",
		      (unsigned long long)r.wstats.wait);
		CHECK(r.seen == 1000 + (uint64_t)i, "payload %llu", (unsigned long long)r.seen);
	}
	printf("signal before the wait: no syscall on either side (20 rounds)\n");
}

static void test_spinning(void)
{
	int spun = 0, parked = 0;
	for (int i = 0; i < 200; i++) {
		struct round r;
		hl_futex_stats_t a, d;
		struct hl__node *n;
		bool ok;

		start(&r, SPINNING);
		n = wait_node(&r);
		hl_futex_stats_thread(&a);
		r.payload = (uint64_t)i;
		ok = hl__node_signal(n, HL_SIG_HEAD);
		d = my_delta(&a);
		pthread_join(r.th, NULL);
		CHECK(ok && r.sig == HL_SIG_HEAD, "round %d: signal %d, waiter got %u", i, ok, r.sig);
		CHECK(r.seen == (uint64_t)i, "round %d: payload %llu", i, (unsigned long long)r.seen);
		if (r.wstats.wait == 0) {
			spun++;
			CHECK(d.wake == 0, "round %d: the waiter never parked, yet %llu wake syscalls",
			      i, (unsigned long long)d.wake);
		} else {
			parked++;
			CHECK(d.wake == 1, "round %d: the waiter parked (%llu waits), %llu wake syscalls",
			      i, (unsigned long long)r.wstats.wait, (unsigned long long)d.wake);
			CHECK(r.t_wait >= (int64_t)HL_SPIN_NS_MAX, "round %d: the waiter parked after "
			      "%.3f ms, before its 10 ms spin budget was spent", i, r.t_wait / 1e6);
		}
	}
	printf("signal while spinning: %d rounds without any syscall, %d where the waiter had "
	       "parked (one wake each)\n", spun, parked);
}

static void test_parked(void)
{
	for (int i = 0; i < 20; i++) {
		struct round r;
		hl_futex_stats_t a, d;
		struct hl__node *n;
		bool ok;

		start(&r, PARKED);
		n = wait_node(&r);
		wait_parked(&r, n);
		hl_futex_stats_thread(&a);
		r.payload = 7 * (uint64_t)i;
		ok = hl__node_signal(n, HL_SIG_HANDED);
		d = my_delta(&a);
		pthread_join(r.th, NULL);
		CHECK(ok, "signal of a parked node refused");
		CHECK(d.wake == 1 && d.woken == 1, "signal after parking: %llu wakes, %llu woken; "
		      "expected 1 and 1", (unsigned long long)d.wake, (unsigned long long)d.woken);
		CHECK(r.sig == HL_SIG_HANDED, "waiter got %u", r.sig);
		CHECK(r.wstats.wait == 1, "parked waiter made %llu futex waits, expected 1",
		      (unsigned long long)r.wstats.wait);
		CHECK(r.seen == 7 * (uint64_t)i, "payload %llu", (unsigned long long)r.seen);
	}
	printf("signal after parking: exactly one wake syscall, the waiter returns (20 rounds)\n");
}

static void test_timeouts(void)
{
	for (int k = 0; k < 2; k++) {
		enum mode m = k ? TIMEOUT_SPIN : TIMEOUT_PARKED;
		const char *what = k ? "spinning" : "parked";
		struct round r;
		hl_futex_stats_t a, d;
		struct hl__node *n;
		bool ok, parked = true;

		start(&r, m);
		n = wait_node(&r);
		pthread_join(r.th, NULL);
		CHECK(r.sig == HL_WAIT_TIMEDOUT, "%s waiter: deadline passed, got %u", what, r.sig);
		CHECK(r.state_after == HL_NODE_ABANDONED, "%s waiter: node state %u after timeout",
		      what, r.state_after);
		/* Parking is allowed only once the 10 ms budget is spent (the
		 * waiter may have been preempted that long). */
		if (k)
			CHECK(r.wstats.wait == 0 || r.t_wait >= (int64_t)HL_SPIN_NS_MAX,
			      "waiter timed out while spinning (2 ms of a 10 ms budget) but made "
			      "%llu futex waits after %.3f ms", (unsigned long long)r.wstats.wait,
			      r.t_wait / 1e6);
		else
			CHECK(r.wstats.wait >= 1, "parked waiter made no futex wait");
		hl_futex_stats_thread(&a);
		ok = hl__node_signal(n, HL_SIG_RELEASED);
		d = my_delta(&a);
		CHECK(!ok, "%s: signal of an abandoned node accepted", what);
		CHECK(d.wake == 0, "%s: refused signal made %llu wake syscalls", what,
		      (unsigned long long)d.wake);
		CHECK(!hl__node_claim(n, &parked), "%s: claim of an abandoned node accepted", what);
		hl__node_recycle(n);
	}
	printf("timeouts: node abandoned (parked and spinning), signal and claim refused\n");
}

static void test_interrupt(void)
{
	for (int k = 0; k < 2; k++) {
		enum mode m = k ? INTERRUPT_FIRST : INTERRUPT_PARKED;
		const char *what = k ? "interrupted before the wait" : "interrupted while parked";
		struct round r;
		start(&r, m);
		struct hl__node *n = wait_node(&r);
		if (m == INTERRUPT_PARKED)
			wait_parked(&r, n);
		CHECK(hl__thread_interrupt((uintptr_t)r.th), "%s: thread record not found", what);
		if (m == INTERRUPT_FIRST)
			atomic_store_explicit(&r.go, 1, memory_order_release);
		pthread_join(r.th, NULL);
		CHECK(r.sig == HL_WAIT_TIMEDOUT, "%s: wait returned %u, not a timeout", what, r.sig);
		CHECK(r.state_after == HL_NODE_ABANDONED, "%s: node state %u", what, r.state_after);
		if (m == INTERRUPT_FIRST)
			CHECK(r.wstats.wait <= 1, "%s: %llu futex waits (the one that sees the "
			      "word set returns at once)", what, (unsigned long long)r.wstats.wait);
		hl__node_recycle(n);
	}
	/* A wait without an interrupt word is not ended by an interrupt:
	 * parked, interrupted, it still waits for its signal. */
	struct round r;
	start(&r, PARKED);
	struct hl__node *n = wait_node(&r);
	wait_parked(&r, n);
	CHECK(hl__thread_interrupt((uintptr_t)r.th), "plain wait: thread record not found");
	sleep_ns(20 * NSEC_PER_MSEC);
	CHECK(atomic_load(&n->state) == HL_NODE_PARKED, "plain wait ended by an interrupt (state %u)",
	      atomic_load(&n->state));
	hl__node_signal(n, HL_SIG_RELEASED);
	pthread_join(r.th, NULL);
	CHECK(r.sig == HL_SIG_RELEASED, "plain wait: got %u after the signal", r.sig);
	CHECK(!hl__thread_interrupt((uintptr_t)pthread_self() + 1), "a thread that does not exist found");
	printf("interrupts: an interruptible wait ends (parked, and interrupted first); "
	       "a plain one does not (futex interface %s)\n", hl_futex_interface());
}

static void test_claim_post(void)
{
	for (int k = 0; k < 2; k++) {
		bool parked_mode = k == 1;
		struct round r;
		hl_futex_stats_t a, d;
		struct hl__node *n;
		bool ok, was_parked = !parked_mode;

		start(&r, parked_mode ? PARKED : CLAIM_SPINNING);
		n = wait_node(&r);
		if (parked_mode)
			wait_parked(&r, n);
		hl_futex_stats_thread(&a);
		ok = hl__node_claim(n, &was_parked);
		r.payload = 42;
		hl__node_post(n, HL_SIG_HANDED, was_parked);
		d = my_delta(&a);
		pthread_join(r.th, NULL);
		CHECK(ok, "claim refused");
		CHECK(r.sig == HL_SIG_HANDED && r.seen == 42, "waiter got %u, payload %llu", r.sig,
		      (unsigned long long)r.seen);
		if (parked_mode) {
			CHECK(was_parked, "claim of a parked node reported not parked");
			CHECK(d.wake == 1, "post to a parked node: %llu wakes", (unsigned long long)d.wake);
		} else if (r.wstats.wait == 0) {
			CHECK(!was_parked, "claim reported parked, the waiter never parked");
			CHECK(d.wake == 0, "post to a spinning node: %llu wakes",
			      (unsigned long long)d.wake);
		} else {
			CHECK(was_parked == (d.wake == 1), "claim/post: parked %d, %llu wakes",
			      was_parked, (unsigned long long)d.wake);
		}
	}
	printf("claim/post: no syscall for a spinning node, one for a parked node\n");
}

/* A kept wait (hl__node_keep, for hl_cond) outlives its deadline and ends
 * with its signal; keeping costs no syscall; an abandoned wait cannot be
 * kept. */
static void test_keep(void)
{
	for (int k = 0; k < 2; k++) {
		bool parked_mode = k == 0;
		const char *what = parked_mode ? "parked" : "spinning";
		struct round r;
		hl_futex_stats_t a, d;
		struct hl__node *n;

		bool kept;
		for (int tries = 0;; tries++) {
			start(&r, parked_mode ? KEEP_PARKED : KEEP_SPIN);
			n = wait_node(&r);
			if (parked_mode)
				wait_parked(&r, n);
			hl_futex_stats_thread(&a);
			kept = hl__node_keep(n);
			d = my_delta(&a);
			/* The spinning waiter's 5 ms may pass before main gets
			 * here on a loaded machine: then it gave up, rightly. */
			if (kept || parked_mode || tries == 4)
				break;
			pthread_join(r.th, NULL);
			CHECK(r.sig == HL_WAIT_TIMEDOUT, "%s: keep refused, the waiter got %u", what,
			      r.sig);
			hl__node_recycle(n);
		}
		CHECK(kept, "%s: keep refused", what);
		CHECK(d.wake == 0 && d.wait == 0, "%s: keep made %llu futex calls", what,
		      (unsigned long long)(d.wake + d.wait));
		/* Well past the deadline (30 ms, or 5 ms): still waiting. */
		sleep_ns(80 * NSEC_PER_MSEC);
		uint32_t s = atomic_load(&n->state);
		CHECK(s == HL_NODE_PARKED_KEPT || s == HL_NODE_WAITING_KEPT,
		      "%s: kept wait in state %u 50 ms after its deadline", what, s);
		r.payload = 99;
		CHECK(hl__node_signal(n, HL_SIG_HANDED), "%s: signal of a kept wait refused", what);
		pthread_join(r.th, NULL);
		CHECK(r.sig == HL_SIG_HANDED && r.seen == 99, "%s: kept waiter got %u, payload %llu",
		      what, r.sig, (unsigned long long)r.seen);
		CHECK(r.t_wait >= 80 * (int64_t)NSEC_PER_MSEC, "%s: kept waiter returned after "
		      "%.3f ms, before its signal", what, r.t_wait / 1e6);
	}
	/* Given up first: the keep is refused and changes nothing. */
	struct round r;
	start(&r, TIMEOUT_PARKED);
	struct hl__node *n = wait_node(&r);
	pthread_join(r.th, NULL);
	CHECK(r.sig == HL_WAIT_TIMEDOUT, "timed-out waiter got %u", r.sig);
	CHECK(!hl__node_keep(n), "keep of an abandoned node accepted");
	CHECK(atomic_load(&n->state) == HL_NODE_ABANDONED, "a refused keep changed the state");
	hl__node_recycle(n);
	printf("keep: a kept wait (parked or spinning) outlives its deadline and returns its "
	       "signal; no syscall to keep; an abandoned one is not kept\n");
}

/* ---- spinner slots in a fork child ---- */

static atomic_int slot_taken, slot_release;
static uint64_t slot_budget;

static void *slot_holder(void *p)
{
	slot_budget = hl__spin_begin(0);
	atomic_store(&slot_taken, 1);
	while (!atomic_load(&slot_release))
		sleep_ns(NSEC_PER_MSEC); /* polling a flag; not a sync */
	if (slot_budget)
		hl__spin_end(HL_SPIN_CUT);
	return NULL;
}

static void test_fork_slots(void)
{
	cpu_set_t set;
	pthread_t th;
	int status;
	char buf[128];

	if (sched_getaffinity(0, sizeof(set), &set) != 0 || CPU_COUNT(&set) < 2) {
		printf("fork and spinner slots: SKIP, fewer than 2 usable CPUs\n");
		return;
	}
	REQUIRE(pthread_create(&th, NULL, slot_holder, NULL) == 0, "pthread_create");
	while (!atomic_load(&slot_taken))
		sched_yield();
	if (!slot_budget) {
		printf("fork and spinner slots: SKIP, the helper thread got no slot\n");
	} else {
		fflush(stdout);
		pid_t pid = fork();
		REQUIRE(pid >= 0, "fork: %s", strerror(errno));
		if (pid == 0) {
			/* The child: only this thread; no stdio (the parent's
			 * other thread may have held its lock at the fork). */
			uint64_t b = hl__spin_begin(0);
			if (b)
				hl__spin_end(HL_SPIN_CUT);
			_exit(b ? 0 : 3);
		}
		REQUIRE(reap_with_timeout(pid, 10000, &status) == 0, "fork child hung");
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "fork child: hl__spin_begin() gave no budget while the parent's spinner "
		      "(gone in the child) had the only slot: child %s",
		      describe_status(status, buf, sizeof(buf)));
		if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
			printf("fork and spinner slots: the child spins while the parent's "
			       "spinner holds its slot\n");
	}
	atomic_store(&slot_release, 1);
	pthread_join(th, NULL);
}

int main(void)
{
	hl_futex_stats_t s;
	/* The interface probe is counted as "other": do it before measuring. */
	printf("test_wait: futex interface %s\n", hl_futex_interface());
	hl_futex_stats_thread(&s);
	test_signal_first();
	test_spinning();
	test_parked();
	test_timeouts();
	test_interrupt();
	test_claim_post();
	test_keep();
	test_fork_slots();
	return test_finish("test_wait");
}
