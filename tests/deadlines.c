/* SPDX-License-Identifier: MIT */
/* Deadlines at the edges of time, through every timed call of the public
 * API (hl_mutex_timedlock, hl_rwlock_timedrdlock, hl_rwlock_timedwrlock),
 * on CLOCK_MONOTONIC and CLOCK_REALTIME.
 *
 * Asserts:
 *  - a far deadline (tv_nsec 999999999 and tv_sec 2e10, 18446744073 (the
 *    first tv_sec whose nanoseconds overflow 64 bits with that tv_nsec),
 *    18446744074, and INT64_MAX) on a lock another thread holds for 150 ms
 *    (a write hold; for timedwrlock also a read hold): the call returns 0
 *    after the release, never ETIMEDOUT, and the waiting thread uses less
 *    than MAX_CPU_MS of CPU and fewer than MAX_WAITS futex waits over the
 *    wait (a deadline whose nanoseconds wrapped around made the rwlock's
 *    waits time out at once, in a loop: the whole hold in CPU, thousands of
 *    futex calls);
 *  - the same far deadlines on a free lock: 0 at once;
 *  - a deadline in the past (tv_sec 0, and a negative tv_sec) on a held
 *    lock: ETIMEDOUT at once, without a futex wait. */
#include "common.h"

#include <hotlock/hotlock.h>

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>

#define HOLD_NS (150 * NSEC_PER_MSEC)
#define MAX_CPU_MS 40.0
#define MAX_WAITS 200
#define AT_ONCE_MS 100.0        /* "at once", with a shared machine's margin */

enum op { MUTEX, RD, WR_VS_WRITER, WR_VS_READER, OPS };
static const char *const op_names[OPS] = {
	"hl_mutex_timedlock", "hl_rwlock_timedrdlock (write hold)",
	"hl_rwlock_timedwrlock (write hold)", "hl_rwlock_timedwrlock (read hold)",
};

static hl_mutex_t mutex;
static hl_rwlock_t rwlock;

static int timed(enum op op, clockid_t clk, const struct timespec *ts)
{
	switch (op) {
	case MUTEX:
		return hl_mutex_timedlock(&mutex, clk, ts);
	case RD:
		return hl_rwlock_timedrdlock(&rwlock, clk, ts);
	default:
		return hl_rwlock_timedwrlock(&rwlock, clk, ts);
	}
}

static void unlock(enum op op)
{
	int rc = op == MUTEX ? hl_mutex_unlock(&mutex) : hl_rwlock_unlock(&rwlock);
	REQUIRE(rc == 0, "unlock: %d", rc);
}

/* ---- the holder ---- */

struct hold {
	enum op op;
	int64_t hold_ns;        /* > 0: release after that long; 0: when told */
	atomic_int held, release;
	atomic_llong released_ns;
};

static void *holder(void *p)
{
	struct hold *h = p;
	int rc;
	if (h->op == MUTEX)
		rc = hl_mutex_lock(&mutex);
	else if (h->op == WR_VS_READER)
		rc = hl_rwlock_rdlock(&rwlock);
	else
		rc = hl_rwlock_wrlock(&rwlock);
	REQUIRE(rc == 0, "holder: lock returned %d", rc);
	atomic_store(&h->held, 1);
	if (h->hold_ns)
		sleep_ns(h->hold_ns); /* the hold the waiter waits out */
	else
		while (!atomic_load(&h->release))
			sleep_ns(NSEC_PER_MSEC); /* polling a flag; not a sync */
	atomic_store(&h->released_ns, now_ns());
	unlock(h->op);
	return NULL;
}

static void start_holder(pthread_t *th, struct hold *h, enum op op, int64_t hold_ns)
{
	memset(h, 0, sizeof(*h));
	h->op = op;
	h->hold_ns = hold_ns;
	REQUIRE(pthread_create(th, NULL, holder, h) == 0, "pthread_create");
	while (!atomic_load(&h->held))
		sched_yield();
}

/* ---- one timed call, measured on the calling thread ---- */

struct cost {
	int rc;
	double wall_ms, cpu_ms;
	uint64_t waits;
};

static struct cost measure(enum op op, clockid_t clk, const struct timespec *ts)
{
	struct cost c;
	hl_futex_stats_t a, b;
	hl_futex_stats_thread(&a);
	int64_t cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID), t0 = now_ns();
	c.rc = timed(op, clk, ts);
	c.wall_ms = (double)(now_ns() - t0) / 1e6;
	c.cpu_ms = (double)(clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0) / 1e6;
	hl_futex_stats_thread(&b);
	c.waits = b.wait - a.wait;
	return c;
}

static const char *clock_name(clockid_t clk)
{
	return clk == CLOCK_MONOTONIC ? "CLOCK_MONOTONIC" : "CLOCK_REALTIME";
}

static const clockid_t clocks[] = { CLOCK_MONOTONIC, CLOCK_REALTIME };
static const time_t far_secs[] = {
	(time_t)20000000000ll, (time_t)18446744073ll, (time_t)18446744074ll, (time_t)INT64_MAX,
};
#define N_FAR (int)(sizeof(far_secs) / sizeof(far_secs[0]))

static void test_far_held(void)
{
	double worst_cpu = 0;
	uint64_t worst_waits = 0;
	for (int op = 0; op < OPS; op++)
		for (int c = 0; c < 2; c++)
			for (int i = 0; i < N_FAR; i++) {
				struct timespec ts = { far_secs[i], 999999999 };
				struct hold h;
				pthread_t th;
				start_holder(&th, &h, (enum op)op, HOLD_NS);
				struct cost k = measure((enum op)op, clocks[c], &ts);
				int64_t got = now_ns();
				if (k.rc == 0)
					unlock((enum op)op);
				pthread_join(th, NULL);
				const char *what = op_names[op];
				CHECK(k.rc == 0, "%s, %s, tv_sec %lld: returned %d (%s) after %.1f ms",
				      what, clock_name(clocks[c]), (long long)ts.tv_sec, k.rc,
				      strerror(k.rc), k.wall_ms);
				CHECK(k.rc != 0 || got >= atomic_load(&h.released_ns),
				      "%s: got the lock before it was released", what);
				CHECK(k.cpu_ms < MAX_CPU_MS && k.waits < MAX_WAITS,
				      "%s, %s, tv_sec %lld: waited %.1f ms using %.1f ms of CPU "
				      "and %llu futex waits (limits %.0f ms, %d)", what,
				      clock_name(clocks[c]), (long long)ts.tv_sec, k.wall_ms,
				      k.cpu_ms, (unsigned long long)k.waits, MAX_CPU_MS, MAX_WAITS);
				if (k.cpu_ms > worst_cpu)
					worst_cpu = k.cpu_ms;
				if (k.waits > worst_waits)
					worst_waits = k.waits;
			}
	printf("far deadlines on a lock held %lld ms: %d calls, all got the lock; worst %.2f ms "
	       "of CPU, %llu futex waits\n", HOLD_NS / NSEC_PER_MSEC, OPS * 2 * N_FAR, worst_cpu,
	       (unsigned long long)worst_waits);
}

static void test_far_free(void)
{
	for (int op = 0; op < OPS; op++)
		for (int c = 0; c < 2; c++)
			for (int i = 0; i < N_FAR; i++) {
				struct timespec ts = { far_secs[i], 999999999 };
				struct cost k = measure((enum op)op, clocks[c], &ts);
				if (k.rc == 0)
					unlock((enum op)op);
				CHECK(k.rc == 0 && k.wall_ms < AT_ONCE_MS && k.waits == 0,
				      "%s on a free lock, %s, tv_sec %lld: returned %d after %.1f ms, "
				      "%llu futex waits", op_names[op], clock_name(clocks[c]),
				      (long long)ts.tv_sec, k.rc, k.wall_ms, (unsigned long long)k.waits);
			}
	printf("far deadlines on a free lock: 0 at once\n");
}

static void test_past(void)
{
	const struct timespec past[] = { { 0, 0 }, { -1, 999999999 }, { (time_t)INT64_MIN, 0 } };
	for (int op = 0; op < OPS; op++)
		for (int c = 0; c < 2; c++) {
			struct hold h;
			pthread_t th;
			start_holder(&th, &h, (enum op)op, 0);
			for (int i = 0; i < 3; i++) {
				struct cost k = measure((enum op)op, clocks[c], &past[i]);
				if (k.rc == 0)
					unlock((enum op)op);
				CHECK(k.rc == ETIMEDOUT && k.wall_ms < AT_ONCE_MS && k.waits == 0,
				      "%s on a held lock, %s, past deadline tv_sec %lld: returned %d "
				      "after %.1f ms, %llu futex waits; expected ETIMEDOUT at once",
				      op_names[op], clock_name(clocks[c]), (long long)past[i].tv_sec,
				      k.rc, k.wall_ms, (unsigned long long)k.waits);
			}
			atomic_store(&h.release, 1);
			pthread_join(th, NULL);
		}
	printf("deadlines in the past on a held lock: ETIMEDOUT at once\n");
}

int main(void)
{
	REQUIRE(hl_mutex_init(&mutex) == 0 && hl_rwlock_init(&rwlock) == 0, "init");
	printf("test_deadlines: futex interface %s\n", hl_futex_interface());
	test_far_free();
	test_past();
	test_far_held();
	return test_finish("test_deadlines");
}
