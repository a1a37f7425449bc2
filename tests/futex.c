/* SPDX-License-Identifier: MIT */
/* The futex layer (hotlock/futex.h), black box.
 *
 * Asserts:
 *  - hl_futex_interface() is "futex" (the call glibc makes, which any
 *    sandbox that lets glibc lock allows) unless HOTLOCK_FUTEX=futex2 asks
 *    for futex2, and then "futex2" on a Linux 6.7 or later kernel (this
 *    machine runs 6.18) (ctest runs this file all three ways);
 *  - wait with a value that does not match returns EAGAIN and counts exactly
 *    one wait in the calling thread (and nothing else);
 *  - a timed wait times out with ETIMEDOUT on CLOCK_MONOTONIC and on
 *    CLOCK_REALTIME: the clock reads at least the deadline on return, the
 *    wait lasted at least the requested time minus 1 ms and less than the
 *    requested time plus 2 s; a deadline already past times out at once;
 *  - EINVAL for a bad clock or a tv_nsec outside [0, 1e9);
 *  - a deadline far in the future (tv_sec 1.9e10, INT64_MAX) waits;
 *  - wake returns the number of threads woken: 0 with no waiter, 2 then 1
 *    with three parked waiters (parked = the thread sleeps, seen in /proc),
 *    and the wake/woken counters match;
 *  - counters are per thread: a new thread starts at zero, its calls are not
 *    counted in another thread, the process total includes a live thread's
 *    calls and still includes them after the thread exits (exact deltas);
 *  - the total never decreases between two readings while threads exit;
 *  - hl_cpu_node() is 0 on a one-node machine (and agrees with getcpu), in
 *    every thread; hl_cpu_node_source() is "rseq" when glibc registered rseq
 *    and the kernel (6.3+) provides node_id. */
#include "common.h"

#include <hotlock/hotlock.h>

#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/auxv.h>
#include <sys/utsname.h>

#if __has_include(<sys/rseq.h>)
#include <sys/rseq.h>
#define HAVE_GLIBC_RSEQ 1
#endif
#ifndef AT_RSEQ_FEATURE_SIZE
#define AT_RSEQ_FEATURE_SIZE 27
#endif

static int kernel_at_least(int major, int minor)
{
	struct utsname u;
	int ma = 0, mi = 0;
	if (uname(&u) != 0 || sscanf(u.release, "%d.%d", &ma, &mi) != 2)
		return 0;
	return ma > major || (ma == major && mi >= minor);
}

static hl_futex_stats_t stats_delta(const hl_futex_stats_t *a, const hl_futex_stats_t *b)
{
	hl_futex_stats_t d = {
		.wait = b->wait - a->wait,
		.wake = b->wake - a->wake,
		.woken = b->woken - a->woken,
		.other = b->other - a->other,
	};
	return d;
}

#define CHECK_STATS(d, w, k, n, o, what)                                           \
	CHECK((d).wait == (w) && (d).wake == (k) && (d).woken == (n) && (d).other == (o), \
	      "%s: counted wait %llu wake %llu woken %llu other %llu, expected %d %d %d %d", \
	      what, (unsigned long long)(d).wait, (unsigned long long)(d).wake,      \
	      (unsigned long long)(d).woken, (unsigned long long)(d).other, (w), (k), (n), (o))

static void test_interface(void)
{
	const char *i = hl_futex_interface();
	printf("futex interface: %s\n", i);
	CHECK(strcmp(i, "futex2") == 0 || strcmp(i, "futex") == 0, "unknown interface %s", i);
	const char *force = getenv("HOTLOCK_FUTEX");
	if (force && strcmp(force, "futex2") == 0 && kernel_at_least(6, 7))
		CHECK(strcmp(i, "futex2") == 0, "HOTLOCK_FUTEX=futex2 on a kernel with futex2, "
		      "the library uses %s", i);
	else if (!force || strcmp(force, "futex2") != 0)
		CHECK(strcmp(i, "futex") == 0, "HOTLOCK_FUTEX=%s, the library uses %s",
		      force ? force : "(unset)", i);
}

static void test_eagain_timeout_einval(void)
{
	const clockid_t clocks[] = { CLOCK_MONOTONIC, CLOCK_REALTIME };
	uint32_t word = 1;
	hl_futex_stats_t a, b, d;
	struct timespec ts;
	int rc;

	hl_futex_stats_thread(&a);
	rc = hl_futex_wait(&word, 0, CLOCK_MONOTONIC, NULL);
	hl_futex_stats_thread(&b);
	d = stats_delta(&a, &b);
	CHECK(rc == EAGAIN, "wait on a mismatched value returned %d (%s)", rc, strerror(rc));
	CHECK_STATS(d, 1, 0, 0, 0, "mismatched wait");

	for (int c = 0; c < 2; c++) {
		clockid_t clk = clocks[c];
		const char *cn = c ? "CLOCK_REALTIME" : "CLOCK_MONOTONIC";
		const int64_t wait = 50 * NSEC_PER_MSEC;
		int64_t t0, t1, dl;

		ts = deadline_in(clk, NSEC_PER_SEC);
		CHECK_RC(hl_futex_wait(&word, 0, clk, &ts), EAGAIN);

		word = 0;
		dl = clock_ns(clk) + wait;
		ts = ns_to_ts(dl);
		hl_futex_stats_thread(&a);
		t0 = now_ns();
		rc = hl_futex_wait(&word, 0, clk, &ts);
		t1 = now_ns();
		hl_futex_stats_thread(&b);
		d = stats_delta(&a, &b);
		CHECK(rc == ETIMEDOUT, "%s: timed wait returned %d (%s)", cn, rc, strerror(rc));
		CHECK(clock_ns(clk) >= dl, "%s: returned before the deadline", cn);
		CHECK(t1 - t0 >= wait - NSEC_PER_MSEC, "%s: waited only %.3f ms of 50", cn,
		      (t1 - t0) / 1e6);
		CHECK(t1 - t0 < wait + 2 * NSEC_PER_SEC, "%s: waited %.3f ms for 50", cn,
		      (t1 - t0) / 1e6);
		CHECK_STATS(d, 1, 0, 0, 0, cn);
		printf("timed wait %s: ETIMEDOUT after %.3f ms (requested 50)\n", cn, (t1 - t0) / 1e6);

		ts = ns_to_ts(clock_ns(clk) - NSEC_PER_MSEC);
		t0 = now_ns();
		CHECK_RC(hl_futex_wait(&word, 0, clk, &ts), ETIMEDOUT);
		CHECK(now_ns() - t0 < NSEC_PER_SEC, "%s: a past deadline did not time out at once", cn);

		/* EINVAL: bad tv_nsec, matching value or not. */
		ts = deadline_in(clk, NSEC_PER_SEC);
		ts.tv_nsec = -1;
		CHECK_RC(hl_futex_wait(&word, 0, clk, &ts), EINVAL);
		CHECK_RC(hl_futex_wait(&word, 7, clk, &ts), EINVAL);
		ts.tv_nsec = 1000000000;
		CHECK_RC(hl_futex_wait(&word, 0, clk, &ts), EINVAL);
		word = 1;
	}
	ts = deadline_in(CLOCK_MONOTONIC, NSEC_PER_SEC);
	word = 0;
	CHECK_RC(hl_futex_wait(&word, 0, CLOCK_PROCESS_CPUTIME_ID, &ts), EINVAL);
	CHECK_RC(hl_futex_wait(&word, 0, CLOCK_BOOTTIME, &ts), EINVAL);
	CHECK_RC(hl_futex_wait(&word, 0, 42, &ts), EINVAL);
	CHECK_RC(hl_futex_wait(&word, 0, 42, NULL), EINVAL);
}

/* ---- wake counts ---- */

#define NWAITERS 3

static _Alignas(64) uint32_t wake_word;
static atomic_int ready;

struct waiter {
	pthread_t th;
	atomic_uint tid;
	hl_futex_stats_t mine;
};

static void *waiter_main(void *p)
{
	struct waiter *w = p;
	uint32_t other = 1;
	/* Warm up (thread record, first syscall) so that nothing but the
	 * futex wait can put this thread to sleep after `ready`. */
	hl_futex_wait(&other, 0, CLOCK_MONOTONIC, NULL);
	atomic_store(&w->tid, test_gettid());
	atomic_fetch_add(&ready, 1);
	while (__atomic_load_n(&wake_word, __ATOMIC_ACQUIRE) == 0)
		hl_futex_wait(&wake_word, 0, CLOCK_MONOTONIC, NULL);
	hl_futex_stats_thread(&w->mine);
	return NULL;
}

static void test_wake(void)
{
	struct waiter w[NWAITERS];
	hl_futex_stats_t a, b, d, ta, tb;
	int n1, n2, n3;

	hl_futex_stats_thread(&a);
	n1 = hl_futex_wake(&wake_word, 1);
	hl_futex_stats_thread(&b);
	d = stats_delta(&a, &b);
	CHECK(n1 == 0, "wake with no waiter returned %d", n1);
	CHECK_STATS(d, 0, 1, 0, 0, "wake of nobody");

	hl_futex_stats_total(&ta);
	memset(w, 0, sizeof(w));
	for (int i = 0; i < NWAITERS; i++)
		REQUIRE(pthread_create(&w[i].th, NULL, waiter_main, &w[i]) == 0, "pthread_create");
	/* Wait (polling /proc: no sleep is relied on) until all three sleep in
	 * the kernel. */
	{
		int64_t end = now_ns() + 10 * NSEC_PER_SEC;
		int parked = 0;
		while (parked < NWAITERS) {
			REQUIRE(now_ns() < end, "waiters did not park within 10 s");
			parked = 0;
			if (atomic_load(&ready) == NWAITERS)
				for (int i = 0; i < NWAITERS; i++)
					parked += thread_state(atomic_load(&w[i].tid)) == 'S';
			if (parked < NWAITERS)
				sleep_ns(NSEC_PER_MSEC);
		}
	}
	hl_futex_stats_thread(&a);
	__atomic_store_n(&wake_word, 1, __ATOMIC_RELEASE);
	n1 = hl_futex_wake(&wake_word, 2);
	n2 = hl_futex_wake(&wake_word, INT_MAX);
	n3 = hl_futex_wake(&wake_word, INT_MAX);
	hl_futex_stats_thread(&b);
	d = stats_delta(&a, &b);
	CHECK(n1 == 2 && n2 == 1 && n3 == 0, "wakes of 3 parked waiters returned %d, %d, %d; "
	      "expected 2, 1, 0", n1, n2, n3);
	CHECK_STATS(d, 0, 3, 3, 0, "three wakes");
	for (int i = 0; i < NWAITERS; i++) {
		pthread_join(w[i].th, NULL);
		CHECK_STATS(w[i].mine, 2, 0, 0, 0, "a waiter's own counters (warm-up + wait)");
	}
	hl_futex_stats_total(&tb);
	d = stats_delta(&ta, &tb);
	CHECK_STATS(d, 2 * NWAITERS, 3, 3, 0, "process total over the wake test");
	printf("wake: 0 with no waiter, then 2 and 1 of 3 parked waiters; counters exact\n");
}

/* ---- per-thread and total counters ---- */

static pthread_barrier_t bar;
static hl_futex_stats_t child_start, child_end;

static void *counting_main(void *p)
{
	uint32_t word = 5;
	hl_futex_stats_thread(&child_start);
	hl_futex_wait(&word, 4, CLOCK_MONOTONIC, NULL);         /* EAGAIN */
	hl_futex_wait(&word, 4, CLOCK_REALTIME, NULL);          /* EAGAIN */
	hl_futex_wake(&word, 1);
	hl_futex_stats_thread(&child_end);
	pthread_barrier_wait(&bar);     /* main reads the total now */
	pthread_barrier_wait(&bar);
	return NULL;
}

static void test_thread_vs_total(void)
{
	pthread_t th;
	hl_futex_stats_t t0, t1, t2, m0, m1, d;

	REQUIRE(pthread_barrier_init(&bar, NULL, 2) == 0, "barrier");
	hl_futex_stats_total(&t0);
	hl_futex_stats_thread(&m0);
	REQUIRE(pthread_create(&th, NULL, counting_main, NULL) == 0, "pthread_create");
	pthread_barrier_wait(&bar);
	hl_futex_stats_total(&t1);
	pthread_barrier_wait(&bar);
	pthread_join(th, NULL);
	hl_futex_stats_total(&t2);
	hl_futex_stats_thread(&m1);

	CHECK_STATS(child_start, 0, 0, 0, 0, "a new thread's counters");
	CHECK_STATS(child_end, 2, 1, 0, 0, "the thread's own counters");
	d = stats_delta(&m0, &m1);
	CHECK_STATS(d, 0, 0, 0, 0, "main's counters while another thread counted");
	d = stats_delta(&t0, &t1);
	CHECK_STATS(d, 2, 1, 0, 0, "total while the thread is alive");
	d = stats_delta(&t0, &t2);
	CHECK_STATS(d, 2, 1, 0, 0, "total after the thread exited");
	pthread_barrier_destroy(&bar);
	printf("counters: per thread, and in the total before and after the thread exits\n");
}

/* ---- far-future deadlines ---- */

struct far {
	uint32_t word;
	clockid_t clk;
	time_t sec;
	atomic_int done;
	int rc;
};

static void *far_waiter(void *p)
{
	struct far *f = p;
	struct timespec ts = { f->sec, 0 };
	int rc;
	do
		rc = hl_futex_wait(&f->word, 0, f->clk, &ts);
	while (rc == 0 && __atomic_load_n(&f->word, __ATOMIC_ACQUIRE) == 0);
	f->rc = rc;
	atomic_store(&f->done, 1);
	return NULL;
}

/* A deadline far in the future (the nanosecond count overflows 64 bits)
 * waits: still waiting 30 ms later, then woken normally. */
static void test_far_deadline(void)
{
	const time_t secs[] = { (time_t)19000000000ll, (time_t)INT64_MAX };
	for (int c = 0; c < 2; c++)
		for (int i = 0; i < 2; i++) {
			struct far f = { .word = 0, .clk = c ? CLOCK_REALTIME : CLOCK_MONOTONIC,
					 .sec = secs[i] };
			pthread_t th;
			REQUIRE(pthread_create(&th, NULL, far_waiter, &f) == 0, "pthread_create");
			sleep_ns(30 * NSEC_PER_MSEC); /* the test is about time */
			CHECK(!atomic_load(&f.done), "clock %d: wait with tv_sec %lld returned %d at once",
			      (int)f.clk, (long long)f.sec, f.rc);
			__atomic_store_n(&f.word, 1, __ATOMIC_RELEASE);
			hl_futex_wake(&f.word, 1);
			pthread_join(th, NULL);
		}
	printf("far-future deadlines: waited until woken\n");
}

/* ---- the total while threads exit ---- */

static atomic_int churn_stop;

static void *short_lived(void *p)
{
	uint32_t word = 1;
	for (int i = 0; i < 50; i++)
		hl_futex_wait(&word, 0, CLOCK_MONOTONIC, NULL); /* EAGAIN, counted */
	return NULL;
}

static void *churn(void *p)
{
	while (!atomic_load(&churn_stop)) {
		pthread_t t[4];
		for (int i = 0; i < 4; i++)
			REQUIRE(pthread_create(&t[i], NULL, short_lived, NULL) == 0, "pthread_create");
		for (int i = 0; i < 4; i++)
			pthread_join(t[i], NULL);
	}
	return NULL;
}

/* Counters only grow, so successive readings of the total must never
 * decrease, even while threads exit (their counts move from their record to
 * the retired sum: a reading must count them once, not twice, not zero). */
static void test_total_monotonic(void)
{
	pthread_t th;
	hl_futex_stats_t prev, cur;
	long samples = 0, drops = 0;
	uint64_t first_from = 0, first_to = 0;
	int64_t end;

	atomic_store(&churn_stop, 0);
	REQUIRE(pthread_create(&th, NULL, churn, NULL) == 0, "pthread_create");
	hl_futex_stats_total(&prev);
	end = now_ns() + 300 * NSEC_PER_MSEC;
	while (now_ns() < end) {
		hl_futex_stats_total(&cur);
		if (cur.wait < prev.wait) {
			if (!drops++) {
				first_from = prev.wait;
				first_to = cur.wait;
			}
		}
		prev = cur;
		samples++;
	}
	atomic_store(&churn_stop, 1);
	pthread_join(th, NULL);
	CHECK(drops == 0, "the process total of waits decreased %ld times in %ld readings while "
	      "threads exited (first: %llu then %llu): exiting threads are counted twice or not "
	      "at all for a moment", drops, samples, (unsigned long long)first_from,
	      (unsigned long long)first_to);
	printf("total while threads exit: %ld readings, %ld decreases\n", samples, drops);
}

/* ---- NUMA node ---- */

static int one_node_machine(void)
{
	char buf[64] = "";
	FILE *f = fopen("/sys/devices/system/node/online", "r");
	if (!f)
		return 1; /* no NUMA support in the kernel: one node */
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	return strcmp(buf, "0\n") == 0 || strcmp(buf, "0") == 0;
}

static void *node_thread(void *p)
{
	*(int *)p = hl_cpu_node();
	return NULL;
}

static void test_node(void)
{
	const char *src = hl_cpu_node_source();
	int node = hl_cpu_node(), tnode = -1;
	unsigned cpu = 0, gnode = 0;
	pthread_t th;
	bool rseq_expected = false;

	printf("cpu node: %d, source %s", node, src);
#ifdef HAVE_GLIBC_RSEQ
	printf(" (glibc __rseq_size %u, kernel rseq feature size %lu)", (unsigned)__rseq_size,
	       getauxval(AT_RSEQ_FEATURE_SIZE));
	rseq_expected = __rseq_size > 0 && getauxval(AT_RSEQ_FEATURE_SIZE) >= 24 &&
		kernel_at_least(6, 3);
#endif
	printf("\n");
	CHECK(strcmp(src, "rseq") == 0 || strcmp(src, "getcpu") == 0, "unknown source %s", src);
	if (rseq_expected)
		CHECK(strcmp(src, "rseq") == 0, "rseq is registered and has node_id, "
		      "but the source is %s", src);
	REQUIRE(pthread_create(&th, NULL, node_thread, &tnode) == 0, "pthread_create");
	pthread_join(th, NULL);
	if (one_node_machine()) {
		CHECK(node == 0, "one-node machine, hl_cpu_node() = %d", node);
		CHECK(tnode == 0, "one-node machine, hl_cpu_node() in a thread = %d", tnode);
		CHECK(getcpu(&cpu, &gnode) == 0 && gnode == 0, "getcpu node %u", gnode);
	} else {
		CHECK(node >= 0 && tnode >= 0, "negative node %d / %d", node, tnode);
	}
}

int main(void)
{
	test_interface();
	test_eagain_timeout_einval();
	test_wake();
	test_thread_vs_total();
	test_far_deadline();
	test_total_monotonic();
	test_node();
	return test_finish("test_futex");
}
