/* SPDX-License-Identifier: MIT */
/* hl_swap API test: every call, every documented error, and the wake
 * semantics of include/hotlock/swap.h, with real threads.
 *
 * "Waiting" below means the test saw the point's state word (read
 * atomically, never written) leave 0 after the waiter began its wait: the
 * waiter is then spinning or parked on it (src/swap.c's states).
 *
 * Asserts:
 *  - HL_SWAP_POINT_INIT is all-zero bytes; static and automatic
 *    HL_SWAP_POINT_INIT, memset 0, calloc'd memory and hl_swap_point_init
 *    over 0xff bytes are points with no wake kept (a timed wait times out)
 *    on which a wake is taken (a wait returns 0);
 *  - EINVAL for every NULL point, for peer == self (hl_swap and
 *    hl_swap_timed), for 8 bad clocks and tv_nsec -1 and 1e9, and for a
 *    NULL abstime; checked before anything else: a bad timeout with a wake
 *    kept on self leaves the wake there, with a thread waiting on self gives
 *    EINVAL, not EBUSY, and an hl_swap[_timed] refused with EINVAL does not
 *    wake its peer;
 *  - EBUSY: a second wait (hl_wait_self, timed, hl_swap, hl_swap_timed) on
 *    a point another thread waits on, at once, and the first waiter is not
 *    disturbed (it returns 0 on one later wake); hl_swap's wake is made
 *    even though its wait is EBUSY; destroy EBUSY while a thread waits
 *    (untimed and timed), 0 once it has left; destroy drops a kept wake;
 *  - kept wakes: a wake before the wait makes the wait return at once
 *    (hl_wait_self, timed with a deadline already past, hl_swap); two wakes
 *    before a wait leave one: the second wait times out; a wake while the
 *    thread waits is taken by that wait, and leaves nothing kept;
 *  - timed waits on CLOCK_MONOTONIC and CLOCK_REALTIME (hl_wait_self_timed
 *    and hl_swap_timed): ETIMEDOUT, not before the deadline (the clock reads
 *    at least the deadline on return); a deadline already past ({0,0},
 *    {-1,0}, now - 1 ms): ETIMEDOUT at once; a wake that comes after the
 *    timeout is kept for the next wait, and only one;
 *  - ping-pong: two threads hand a plain (non-atomic) counter back and
 *    forth N times with hl_swap (and with hl_swap_timed with a far
 *    deadline): every value written before a wake is the value seen after
 *    the wait (acquire/release; ThreadSanitizer checks the ordering), both
 *    sides count exactly N round trips; with both threads pinned to one CPU
 *    and, with 2+ CPUs, on two CPUs (behaviour only, no timing);
 *  - lifetime: a point freed (heap, and on the stack of a thread that then
 *    exits) right after its wait returns, while the waker may still be in
 *    hl_wake or hl_swap: many rounds (ASan reports any later access);
 *  - fork: in the child of a process whose thread waits on a point, fresh
 *    points (and the parent's point after hl_swap_point_init) work: kept
 *    wake, timeout, a ping-pong between two threads of the child.
 * A thread that does not return is reported after 10 s; a main thread stuck
 * in a call, by the phase alarm (45 s).  Seed: HOTLOCK_SEED (printed). */
#include "call.h"
#include "common.h"

#include <hotlock/hotlock.h>

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#if TEST_TSAN
/* The fork test starts threads in the child of a multithreaded process. */
const char *__tsan_default_options(void);
const char *__tsan_default_options(void)
{
	return "die_after_fork=0";
}
#endif

#define HANG_MS 10000
#define SHORT_NS (20 * NSEC_PER_MSEC)
#define FAR_NS (60 * NSEC_PER_SEC)


static const char *clock_name(clockid_t c)
{
	return c == CLOCK_MONOTONIC ? "CLOCK_MONOTONIC" : "CLOCK_REALTIME";
}

/* The point's state word, read without touching it (0: idle). */
static uint32_t pstate(hl_swap_point_t *p)
{
	return __atomic_load_n(&p->state_, __ATOMIC_RELAXED);
}

/* Waits (polling, up to HANG_MS) until a thread waits on p. */
static void await_waiting(hl_swap_point_t *p, const char *what)
{
	int64_t end = now_ns() + HANG_MS * NSEC_PER_MSEC;
	while (pstate(p) != 2 && pstate(p) != 3) {
		REQUIRE(now_ns() < end, "%s: no thread began to wait on the point (state %u)",
			what, pstate(p));
		sleep_ns(100 * NSEC_PER_USEC); /* polling: not synchronisation */
	}
}

/* Whether a wake is kept on p: a timed wait with a deadline already past
 * returns 0 (and takes it) or ETIMEDOUT (none). */
static bool has_kept_wake(hl_swap_point_t *p)
{
	struct timespec past = { 0, 0 };
	int rc = hl_wait_self_timed(p, CLOCK_MONOTONIC, &past);
	CHECK(rc == 0 || rc == ETIMEDOUT, "probe wait returned %d (%s)", rc, strerror(rc));
	return rc == 0;
}

/* ---- a waiter on its own thread ---- */

enum wkind { W_WAIT, W_TIMED, W_SWAP, W_SWAP_TIMED };

struct waiter {
	struct call call;
	hl_swap_point_t *self, *peer;
	enum wkind kind;
	clockid_t clk;
	struct timespec abs;
	int64_t after_ns;       /* clk read after the return */
};

static int waiter_fn(void *arg)
{
	struct waiter *w = arg;
	int rc;
	switch (w->kind) {
	case W_WAIT:
		rc = hl_wait_self(w->self);
		break;
	case W_TIMED:
		rc = hl_wait_self_timed(w->self, w->clk, &w->abs);
		break;
	case W_SWAP:
		rc = hl_swap(w->peer, w->self);
		break;
	default:
		rc = hl_swap_timed(w->peer, w->self, w->clk, &w->abs);
		break;
	}
	w->after_ns = clock_ns(w->clk);
	return rc;
}

static void waiter_start(struct waiter *w, enum wkind kind, hl_swap_point_t *self,
			 hl_swap_point_t *peer, clockid_t clk, int64_t rel_ns)
{
	w->kind = kind;
	w->self = self;
	w->peer = peer;
	w->clk = clk;
	w->abs = deadline_in(clk, rel_ns);
	call_start(&w->call, waiter_fn, w);
}

/* ---- init forms ---- */

static hl_swap_point_t static_point = HL_SWAP_POINT_INIT;

static void check_fresh(hl_swap_point_t *p, const char *what)
{
	CHECK(!has_kept_wake(p), "%s: a fresh point has a wake kept", what);
	struct waiter w;
	waiter_start(&w, W_WAIT, p, NULL, CLOCK_MONOTONIC, 0);
	await_waiting(p, what);
	CHECK_RC(hl_wake(p), 0);
	CHECK(call_join(&w.call, HANG_MS, what) == 0, "%s: wait on a fresh point did not "
	      "return 0", what);
	CHECK(!has_kept_wake(p), "%s: the wake taken by the wait was kept too", what);
	CHECK_RC(hl_swap_point_destroy(p), 0);
}

static void test_init_forms(void)
{
	hl_swap_point_t zero;
	memset(&zero, 0, sizeof(zero));
	hl_swap_point_t init = HL_SWAP_POINT_INIT;
	CHECK(memcmp(&zero, &init, sizeof(zero)) == 0, "HL_SWAP_POINT_INIT is not all-zero bytes");
	check_fresh(&static_point, "static HL_SWAP_POINT_INIT");
	check_fresh(&init, "automatic HL_SWAP_POINT_INIT");
	check_fresh(&zero, "memset 0");
	hl_swap_point_t *heap = calloc(1, sizeof(*heap));
	REQUIRE(heap, "calloc");
	check_fresh(heap, "calloc");
	memset(heap, 0xff, sizeof(*heap));
	CHECK_RC(hl_swap_point_init(heap), 0);
	check_fresh(heap, "hl_swap_point_init over 0xff bytes");
	free(heap);
	printf("init forms: 5 kinds of fresh point: no wake kept, a wake taken\n");
}

/* ---- EINVAL ---- */

static void test_einval(void)
{
	hl_swap_point_t a = HL_SWAP_POINT_INIT, b = HL_SWAP_POINT_INIT;
	struct timespec ok = deadline_in(CLOCK_MONOTONIC, FAR_NS);
	const clockid_t bad_clocks[] = { CLOCK_PROCESS_CPUTIME_ID, CLOCK_THREAD_CPUTIME_ID,
					 CLOCK_MONOTONIC_RAW, CLOCK_BOOTTIME,
					 CLOCK_REALTIME_COARSE, CLOCK_MONOTONIC_COARSE,
					 12345, -1 };
	const long bad_nsec[] = { -1, 1000000000l };

	CHECK_RC(hl_swap_point_init(NULL), EINVAL);
	CHECK_RC(hl_swap_point_destroy(NULL), EINVAL);
	CHECK_RC(hl_wake(NULL), EINVAL);
	CHECK_RC(hl_wait_self(NULL), EINVAL);
	CHECK_RC(hl_wait_self_timed(NULL, CLOCK_MONOTONIC, &ok), EINVAL);
	CHECK_RC(hl_wait_self_timed(&a, CLOCK_MONOTONIC, NULL), EINVAL);
	CHECK_RC(hl_swap(NULL, &a), EINVAL);
	CHECK_RC(hl_swap(&a, NULL), EINVAL);
	CHECK_RC(hl_swap(NULL, NULL), EINVAL);
	CHECK_RC(hl_swap_timed(NULL, &a, CLOCK_MONOTONIC, &ok), EINVAL);
	CHECK_RC(hl_swap_timed(&a, NULL, CLOCK_MONOTONIC, &ok), EINVAL);
	CHECK_RC(hl_swap_timed(&b, &a, CLOCK_MONOTONIC, NULL), EINVAL);
	/* peer == self: refused, and nothing woken. */
	CHECK_RC(hl_swap(&a, &a), EINVAL);
	CHECK_RC(hl_swap_timed(&a, &a, CLOCK_MONOTONIC, &ok), EINVAL);
	CHECK(!has_kept_wake(&a), "hl_swap(a, a) refused with EINVAL woke a");
	/* A refused hl_swap wakes nobody. */
	CHECK_RC(hl_swap_timed(&b, &a, CLOCK_MONOTONIC, NULL), EINVAL);
	CHECK(!has_kept_wake(&b), "hl_swap_timed refused for a NULL abstime woke its peer");

	for (size_t i = 0; i < sizeof(bad_clocks) / sizeof(bad_clocks[0]); i++) {
		struct timespec ts = { ok.tv_sec, 0 };
		CHECK_RC(hl_wait_self_timed(&a, bad_clocks[i], &ts), EINVAL);
		CHECK_RC(hl_swap_timed(&b, &a, bad_clocks[i], &ts), EINVAL);
		CHECK_RC(hl_wait_self_timed(NULL, bad_clocks[i], &ts), EINVAL);
		CHECK_RC(hl_swap_timed(&a, &a, bad_clocks[i], &ts), EINVAL);
	}
	for (size_t i = 0; i < 2; i++) {
		struct timespec ts = { ok.tv_sec, bad_nsec[i] };
		for (int c = 0; c < 2; c++) {
			clockid_t clk = c ? CLOCK_REALTIME : CLOCK_MONOTONIC;
			CHECK_RC(hl_wait_self_timed(&a, clk, &ts), EINVAL);
			CHECK_RC(hl_swap_timed(&b, &a, clk, &ts), EINVAL);
		}
	}
	CHECK(!has_kept_wake(&b), "an hl_swap_timed refused with EINVAL woke its peer");

	/* Before anything else: a kept wake stays kept through refused waits. */
	CHECK_RC(hl_wake(&a), 0);
	struct timespec badns = { ok.tv_sec, -1 };
	CHECK_RC(hl_wait_self_timed(&a, CLOCK_MONOTONIC, &badns), EINVAL);
	CHECK_RC(hl_wait_self_timed(&a, CLOCK_BOOTTIME, &ok), EINVAL);
	CHECK_RC(hl_swap_timed(&b, &a, CLOCK_MONOTONIC, &badns), EINVAL);
	CHECK(has_kept_wake(&a), "a wake kept on a point was consumed by a refused wait");
	CHECK(!has_kept_wake(&b), "a refused hl_swap_timed woke its peer");

	/* Before anything else: with a thread waiting on a, EINVAL, not EBUSY. */
	struct waiter w;
	waiter_start(&w, W_WAIT, &a, NULL, CLOCK_MONOTONIC, 0);
	await_waiting(&a, "einval with a waiter");
	CHECK_RC(hl_wait_self_timed(&a, CLOCK_MONOTONIC, &badns), EINVAL);
	CHECK_RC(hl_wait_self_timed(&a, 12345, &ok), EINVAL);
	CHECK_RC(hl_swap_timed(&b, &a, CLOCK_REALTIME, &badns), EINVAL);
	CHECK_RC(hl_swap(&a, &a), EINVAL);
	CHECK(!call_done_within(&w.call, 0), "the waiter returned after refused calls");
	CHECK_RC(hl_wake(&a), 0);
	CHECK_RC(call_join(&w.call, HANG_MS, "waiter after EINVAL calls"), 0);
	CHECK(!has_kept_wake(&a) && !has_kept_wake(&b), "a wake left over");
	printf("EINVAL: NULLs, peer == self, 8 bad clocks, tv_nsec -1 and 1e9, NULL abstime; "
	       "before anything else (kept wake untouched, no EBUSY, no wake of the peer)\n");
}

/* ---- EBUSY ---- */

static void test_ebusy(void)
{
	hl_swap_point_t p = HL_SWAP_POINT_INIT, q = HL_SWAP_POINT_INIT;
	const enum wkind kinds[] = { W_WAIT, W_TIMED, W_SWAP, W_SWAP_TIMED };
	hl_swap_point_t r = HL_SWAP_POINT_INIT; /* the first waiter's peer in a swap */

	for (int k = 0; k < 4; k++) {
		struct waiter w;
		/* The first waiter: an untimed wait, or a timed one (far). */
		waiter_start(&w, k % 2 ? W_TIMED : W_WAIT, &p, NULL, CLOCK_MONOTONIC, FAR_NS);
		await_waiting(&p, "ebusy");
		struct timespec far = deadline_in(CLOCK_REALTIME, FAR_NS);
		int rc;
		switch (kinds[k]) {
		case W_WAIT:
			rc = hl_wait_self(&p);
			break;
		case W_TIMED:
			rc = hl_wait_self_timed(&p, CLOCK_REALTIME, &far);
			break;
		case W_SWAP:
			rc = hl_swap(&q, &p);
			break;
		default:
			rc = hl_swap_timed(&q, &p, CLOCK_REALTIME, &far);
			break;
		}
		CHECK(rc == EBUSY, "second wait (kind %d) on a waited-on point returned %d, "
		      "expected EBUSY", k, rc);
		if (kinds[k] == W_SWAP || kinds[k] == W_SWAP_TIMED)
			CHECK(has_kept_wake(&q), "hl_swap that got EBUSY did not wake its peer "
			      "(kind %d)", k);
		else
			CHECK(!has_kept_wake(&q), "a wake on q from nowhere");
		CHECK_RC(hl_swap_point_destroy(&p), EBUSY);
		CHECK(!call_done_within(&w.call, 0), "the first waiter returned after EBUSY (kind %d)",
		      k);
		CHECK_RC(hl_wake(&p), 0);
		CHECK_RC(call_join(&w.call, HANG_MS, "first waiter after EBUSY"), 0);
		CHECK(!has_kept_wake(&p), "one wake released the waiter and was kept as well");
		CHECK_RC(hl_swap_point_destroy(&p), 0);
	}
	/* A waiter inside hl_swap is a waiter too. */
	struct waiter w;
	waiter_start(&w, W_SWAP, &p, &r, CLOCK_MONOTONIC, 0);
	await_waiting(&p, "ebusy swap waiter");
	CHECK(has_kept_wake(&r), "hl_swap did not wake its peer before waiting");
	CHECK_RC(hl_wait_self(&p), EBUSY);
	CHECK_RC(hl_swap_point_destroy(&p), EBUSY);
	CHECK_RC(hl_wake(&p), 0);
	CHECK_RC(call_join(&w.call, HANG_MS, "swap waiter"), 0);
	CHECK_RC(hl_swap_point_destroy(&p), 0);

	/* destroy drops a kept wake. */
	CHECK_RC(hl_wake(&p), 0);
	CHECK_RC(hl_swap_point_destroy(&p), 0);
	CHECK(!has_kept_wake(&p), "destroy kept the wake");
	CHECK_RC(hl_swap_point_destroy(&q), 0);
	CHECK_RC(hl_swap_point_destroy(&r), 0);
	printf("EBUSY: second waiter (4 kinds) at once, hl_swap's wake made anyway, first "
	       "waiter undisturbed; destroy EBUSY while waited on, 0 after, drops a kept wake\n");
}

/* ---- kept wakes and timeouts ---- */

static void check_timeout(int rc, int64_t after, const struct timespec *abs, clockid_t clk,
			  const char *what)
{
	CHECK(rc == ETIMEDOUT, "%s on %s returned %d, expected ETIMEDOUT", what,
	      clock_name(clk), rc);
	CHECK(after >= ts_to_ns(abs), "%s on %s returned %lld ns before its deadline", what,
	      clock_name(clk), (long long)(ts_to_ns(abs) - after));
}

static void test_kept_and_timed(void)
{
	hl_swap_point_t p = HL_SWAP_POINT_INIT, q = HL_SWAP_POINT_INIT;

	/* A wake before the wait: the wait returns at once (a thread would
	 * hang here otherwise; the phase alarm reports it). */
	CHECK_RC(hl_wake(&p), 0);
	CHECK_RC(hl_wait_self(&p), 0);
	CHECK_RC(hl_wake(&p), 0);
	struct timespec past = { 0, 0 };
	CHECK_RC(hl_wait_self_timed(&p, CLOCK_REALTIME, &past), 0);
	CHECK_RC(hl_wake(&p), 0);
	CHECK_RC(hl_swap(&q, &p), 0);
	CHECK(has_kept_wake(&q), "hl_swap returned at once on a kept wake without waking peer");
	CHECK_RC(hl_wake(&p), 0);
	CHECK_RC(hl_swap_timed(&q, &p, CLOCK_MONOTONIC, &past), 0);
	CHECK(has_kept_wake(&q), "hl_swap_timed did not wake its peer");

	/* Two wakes leave one. */
	for (int c = 0; c < 2; c++) {
		clockid_t clk = c ? CLOCK_REALTIME : CLOCK_MONOTONIC;
		CHECK_RC(hl_wake(&p), 0);
		CHECK_RC(hl_wake(&p), 0);
		CHECK_RC(hl_wait_self(&p), 0);
		struct timespec abs = deadline_in(clk, SHORT_NS);
		int rc = hl_wait_self_timed(&p, clk, &abs);
		check_timeout(rc, clock_ns(clk), &abs, clk, "wait after two wakes and one wait");
	}

	/* Timed waits: ETIMEDOUT, not early; deadlines already past. */
	for (int c = 0; c < 2; c++) {
		clockid_t clk = c ? CLOCK_REALTIME : CLOCK_MONOTONIC;
		struct timespec abs = deadline_in(clk, SHORT_NS);
		int rc = hl_wait_self_timed(&p, clk, &abs);
		check_timeout(rc, clock_ns(clk), &abs, clk, "hl_wait_self_timed");
		abs = deadline_in(clk, SHORT_NS);
		rc = hl_swap_timed(&q, &p, clk, &abs);
		check_timeout(rc, clock_ns(clk), &abs, clk, "hl_swap_timed");
		CHECK(has_kept_wake(&q), "hl_swap_timed that timed out did not wake its peer");
		const struct timespec pasts[] = { { 0, 0 }, { -1, 0 },
						  ns_to_ts(clock_ns(clk) - NSEC_PER_MSEC) };
		for (int i = 0; i < 3; i++) {
			int64_t t0 = now_ns();
			CHECK_RC(hl_wait_self_timed(&p, clk, &pasts[i]), ETIMEDOUT);
			CHECK_RC(hl_swap_timed(&q, &p, clk, &pasts[i]), ETIMEDOUT);
			CHECK(has_kept_wake(&q), "hl_swap_timed (past deadline) did not wake peer");
			/* "At once": a generous bound, only to catch a wait that
			 * ignores a past deadline altogether. */
			CHECK(now_ns() - t0 < 5 * NSEC_PER_SEC, "a deadline already past was waited "
			      "for %lld ms", (long long)((now_ns() - t0) / NSEC_PER_MSEC));
		}
		/* Timed out in another thread, then woken: kept, and only once. */
		struct waiter w;
		waiter_start(&w, c ? W_SWAP_TIMED : W_TIMED, &p, &q, clk, SHORT_NS);
		rc = call_join(&w.call, HANG_MS, "timed waiter");
		check_timeout(rc, w.after_ns, &w.abs, clk, "timed wait in a thread");
		if (c)
			CHECK(has_kept_wake(&q), "hl_swap_timed did not wake its peer");
		CHECK_RC(hl_wake(&p), 0);
		struct timespec far = deadline_in(clk, FAR_NS);
		CHECK_RC(hl_wait_self_timed(&p, clk, &far), 0);
		abs = deadline_in(clk, SHORT_NS);
		rc = hl_wait_self_timed(&p, clk, &abs);
		check_timeout(rc, clock_ns(clk), &abs, clk, "second wait after one late wake");
		/* A wake while a timed wait waits is that wait's (0), not kept. */
		waiter_start(&w, W_TIMED, &p, NULL, clk, FAR_NS);
		await_waiting(&p, "timed waiter woken");
		CHECK_RC(hl_wake(&p), 0);
		CHECK_RC(call_join(&w.call, HANG_MS, "timed waiter woken"), 0);
		CHECK(!has_kept_wake(&p), "the wake that released a timed waiter was also kept");
	}
	printf("kept wakes: before the wait (4 calls), two wakes leave one; timed waits on both "
	       "clocks: ETIMEDOUT not early, past deadlines at once, a late wake kept once\n");
}

/* ---- ping-pong ---- */

struct pingpong {
	hl_swap_point_t a, b;
	long n;
	bool timed;
	int cpu_a, cpu_b;       /* -1: not pinned */
	long data;              /* plain: the swaps order it */
	long count_a, count_b;
	int bad_a, bad_b;
	int cpu_seen_a, cpu_seen_b;
};

static bool pin(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
}

static int swap_of(struct pingpong *pp, hl_swap_point_t *peer, hl_swap_point_t *self)
{
	if (!pp->timed)
		return hl_swap(peer, self);
	struct timespec far = deadline_in(CLOCK_MONOTONIC, FAR_NS);
	return hl_swap_timed(peer, self, CLOCK_MONOTONIC, &far);
}

static int pp_b(void *arg)
{
	struct pingpong *pp = arg;
	if (pp->cpu_b >= 0 && !pin(pp->cpu_b))
		return -1;
	pp->cpu_seen_b = sched_getcpu();
	int rc = hl_wait_self(&pp->b);
	if (rc)
		return rc;
	for (long i = 0; i < pp->n; i++) {
		if (pp->data != 2 * i + 1 && !pp->bad_b++)
			fprintf(stderr, "FAIL ping-pong: B saw %ld, expected %ld\n", pp->data, 2 * i + 1);
		pp->data = 2 * i + 2;
		pp->count_b++;
		rc = i + 1 < pp->n ? swap_of(pp, &pp->a, &pp->b) : hl_wake(&pp->a);
		if (rc)
			return rc;
	}
	return 0;
}

static void run_pingpong(long n, bool timed, int cpu_a, int cpu_b, const char *what)
{
	struct pingpong *pp = calloc(1, sizeof(*pp));
	REQUIRE(pp, "calloc");
	pp->n = n;
	pp->timed = timed;
	pp->cpu_a = cpu_a;
	pp->cpu_b = cpu_b;
	cpu_set_t old;
	REQUIRE(pthread_getaffinity_np(pthread_self(), sizeof(old), &old) == 0, "getaffinity");
	if (cpu_a >= 0)
		REQUIRE(pin(cpu_a), "pin to CPU %d", cpu_a);
	pp->cpu_seen_a = sched_getcpu();
	struct call b;
	call_start(&b, pp_b, pp);
	int rc = 0;
	for (long i = 0; i < n && !rc; i++) {
		pp->data = 2 * i + 1;
		rc = swap_of(pp, &pp->b, &pp->a);
		if (!rc && pp->data != 2 * i + 2 && !pp->bad_a++)
			fprintf(stderr, "FAIL ping-pong: A saw %ld, expected %ld\n", pp->data, 2 * i + 2);
		pp->count_a += !rc;
	}
	CHECK(rc == 0, "%s: A's swap returned %d", what, rc);
	CHECK_RC(call_join(&b, HANG_MS, what), 0);
	REQUIRE(pthread_setaffinity_np(pthread_self(), sizeof(old), &old) == 0, "setaffinity");
	CHECK(pp->count_a == n && pp->count_b == n, "%s: round trips counted A %ld, B %ld, "
	      "expected %ld", what, pp->count_a, pp->count_b, n);
	CHECK(pp->bad_a == 0 && pp->bad_b == 0, "%s: %d/%d values not handed over", what,
	      pp->bad_a, pp->bad_b);
	if (cpu_a >= 0)
		CHECK(pp->cpu_seen_a == cpu_a && pp->cpu_seen_b == cpu_b, "%s: ran on CPUs %d/%d, "
		      "pinned to %d/%d", what, pp->cpu_seen_a, pp->cpu_seen_b, cpu_a, cpu_b);
	CHECK(!has_kept_wake(&pp->a) && !has_kept_wake(&pp->b), "%s: a wake left over", what);
	CHECK_RC(hl_swap_point_destroy(&pp->a), 0);
	CHECK_RC(hl_swap_point_destroy(&pp->b), 0);
	free(pp);
}

/* The CPUs this thread may run on: the first two, or -1. */
static void allowed_cpus(int *c0, int *c1)
{
	cpu_set_t set;
	*c0 = *c1 = -1;
	if (pthread_getaffinity_np(pthread_self(), sizeof(set), &set))
		return;
	for (int c = 0; c < CPU_SETSIZE; c++) {
		if (!CPU_ISSET(c, &set))
			continue;
		if (*c0 < 0)
			*c0 = c;
		else if (*c1 < 0)
			*c1 = c;
	}
}

static void test_pingpong(void)
{
	long n = HOTLOCK_SANITIZED ? 8000 : 20000;
	int c0, c1;
	allowed_cpus(&c0, &c1);
	run_pingpong(n, false, -1, -1, "ping-pong hl_swap");
	run_pingpong(n / 2, true, -1, -1, "ping-pong hl_swap_timed");
	if (c0 >= 0) {
		run_pingpong(n / 2, false, c0, c0, "ping-pong on one CPU");
		run_pingpong(n / 4, true, c0, c0, "ping-pong timed on one CPU");
	}
	if (c1 >= 0) {
		run_pingpong(n, false, c0, c1, "ping-pong across CPUs");
		run_pingpong(n / 4, true, c0, c1, "ping-pong timed across CPUs");
	}
	printf("ping-pong: %ld round trips counted on both sides with data handed over; "
	       "pinned on CPU %d%s%s\n", n, c0, c1 >= 0 ? " and across CPUs " : "",
	       c1 >= 0 ? "(2 CPUs)" : " (one CPU allowed: across CPUs skipped)");
}

/* ---- lifetime: a point freed right after its wait ---- */

struct life {
	_Atomic(hl_swap_point_t *) published;
	hl_swap_point_t back;   /* the waker waits here (swap variant) */
	int mode;               /* 0: heap point + hl_wake; 1: heap + hl_swap; 2: stack */
};

static int life_waiter(void *arg)
{
	struct life *L = arg;
	hl_swap_point_t stackp = HL_SWAP_POINT_INIT;
	hl_swap_point_t *p = L->mode == 2 ? &stackp : calloc(1, sizeof(*p));
	if (!p)
		return ENOMEM;
	atomic_store(&L->published, p);
	int rc = hl_wait_self(p);
	if (L->mode != 2) {
		memset(p, 0xa5, sizeof(*p));
		free(p);
	}
	if (L->mode == 1)
		hl_wake(&L->back);
	return rc;
}

static void test_lifetime(test_rng_t *rng)
{
	int rounds = HOTLOCK_SANITIZED ? 1500 : 3000;
	struct life *L = calloc(1, sizeof(*L));
	REQUIRE(L, "calloc");
	int n[3] = { 0 };
	for (int i = 0; i < rounds; i++) {
		L->mode = (int)rng_below(rng, 3);
		atomic_store(&L->published, NULL);
		struct call w;
		call_start(&w, life_waiter, L);
		hl_swap_point_t *p;
		while (!(p = atomic_load(&L->published)))
			sched_yield();  /* the new thread may need this CPU */
		if (rng_below(rng, 2))
			sleep_ns((int64_t)rng_below(rng, 50) * NSEC_PER_USEC);
		if (L->mode == 1)
			CHECK_RC(hl_swap(p, &L->back), 0);
		else
			CHECK_RC(hl_wake(p), 0);
		CHECK_RC(call_join(&w, HANG_MS, "lifetime waiter"), 0);
		n[L->mode]++;
	}
	CHECK(!has_kept_wake(&L->back), "a wake left over on the swapper's point");
	free(L);
	printf("lifetime: %d points freed right after their wait returned (%d heap after "
	       "hl_wake, %d heap after hl_swap, %d on the stack of an exiting thread)\n", rounds,
	       n[0], n[1], n[2]);
}

/* ---- fork ---- */

static hl_swap_point_t fork_p = HL_SWAP_POINT_INIT;

static int child_main(void)
{
	int base = test_failures;
	hl_swap_point_t fresh = HL_SWAP_POINT_INIT;
	CHECK(!has_kept_wake(&fresh), "child: a fresh point has a wake");
	CHECK_RC(hl_wake(&fresh), 0);
	CHECK_RC(hl_wait_self(&fresh), 0);
	struct timespec abs = deadline_in(CLOCK_MONOTONIC, SHORT_NS);
	int rc = hl_wait_self_timed(&fresh, CLOCK_MONOTONIC, &abs);
	check_timeout(rc, clock_ns(CLOCK_MONOTONIC), &abs, CLOCK_MONOTONIC, "child timed wait");
	/* The parent's waiter does not exist here: init the point and use it. */
	CHECK_RC(hl_swap_point_init(&fork_p), 0);
	CHECK_RC(hl_wake(&fork_p), 0);
	CHECK_RC(hl_wait_self(&fork_p), 0);
	CHECK_RC(hl_swap_point_destroy(&fork_p), 0);
	run_pingpong(500, false, -1, -1, "ping-pong in the child");
	return test_failures != base;
}

static void test_fork(void)
{
	struct waiter w;
	waiter_start(&w, W_WAIT, &fork_p, NULL, CLOCK_MONOTONIC, 0);
	await_waiting(&fork_p, "fork");
	for (int i = 0; i < 3; i++) {
		fflush(stdout);
		fflush(stderr);
		pid_t pid = fork();
		REQUIRE(pid >= 0, "fork");
		if (pid == 0)
			_exit(child_main());
		int status;
		char sb[64];
		int r = reap_with_timeout(pid, HANG_MS, &status);
		CHECK(r == 0, "fork %d: the child hung (killed)", i);
		if (r == 0)
			CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "fork %d: the child %s",
			      i, describe_status(status, sb, sizeof(sb)));
	}
	CHECK(!call_done_within(&w.call, 0), "the parent's waiter returned during the forks");
	CHECK_RC(hl_wake(&fork_p), 0);
	CHECK_RC(call_join(&w.call, HANG_MS, "the parent's waiter"), 0);
	CHECK_RC(hl_swap_point_destroy(&fork_p), 0);
	printf("fork: 3 children, each with a fresh point, the parent's point re-initialised, and "
	       "a ping-pong, while the parent's thread waited\n");
}

int main(void)
{
	uint64_t seed = test_seed(0x5eedc0d5);
	test_rng_t rng;
	rng_seed(&rng, seed, 0);
	printf("test_swap: seed 0x%llx, %ld CPUs%s\n", (unsigned long long)seed, online_cpus(),
	       HOTLOCK_SANITIZED ? ", sanitizer build" : "");
	fflush(stdout);
	set_phase("test_init_forms");
	test_init_forms();
	set_phase("test_einval");
	test_einval();
	set_phase("test_ebusy");
	test_ebusy();
	set_phase("test_kept_and_timed");
	test_kept_and_timed();
	set_phase("test_pingpong");
	test_pingpong();
	set_phase("test_lifetime");
	test_lifetime(&rng);
	set_phase("test_fork");
	test_fork();
	alarm(0);
	return test_finish("test_swap");
}
