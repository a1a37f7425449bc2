/* SPDX-License-Identifier: MIT */
/* Bounded waiting and fairness of hl_mutex under heavy contention (design
 * invariant 3), through the stress harness.
 *
 * Workload: 8 threads, lock() only, critical section of 100 pause
 * iterations touching shared data, 0..20 (about 10) pause iterations
 * outside, for 2 s, with the default configuration (handoff 4 ms).
 *
 * Asserts (plain build):
 *  - mutual exclusion and no hang (the harness);
 *  - per-thread acquisitions max/min <= 2;
 *  - no thread's worst wait (from calling lock() to holding it) exceeds
 *    handoff_ns + threads x 4 ms + 50 ms.  The argument: once a waiter has
 *    waited the handoff threshold, every waiter ahead of it in the FIFO queue
 *    has waited at least as long, so each is served by handoff as soon as it
 *    reaches the head and runs; what remains is at most (threads - 1)
 *    handovers, each one critical section plus one wake-up of a parked
 *    thread, which on an oversubscribed machine includes waiting for a CPU
 *    behind the threads that keep running (up to about 3 ms seen here;
 *    4 ms allowed), and 50 ms of scheduling slack for this noisy 2-CPU VM.
 *    The wait is measured without stalls (stress.h): time in which a
 *    critical section or a handover took longer than 2 ms, i.e. the holder
 *    or the thread being handed the lock was not running.  The argument
 *    above assumes 4 ms per handover; on this VM the host sometimes stops
 *    the whole guest for 100 ms and more (seen: every thread waiting the
 *    same 121.9 ms in one run), which says nothing about the lock's order.
 *    Raw waits and stalls are printed next to the adjusted ones;
 *  - stalls take less than a quarter of the run: a lock whose handovers are
 *    systematically slow (say, a wake-up that only comes with a timeout)
 *    cannot hide behind the stall accounting.
 * Then shows that the handoff is what bounds the wait: the same loop with
 * handoff_ns = 10 s (the maximum) is allowed to be unfair; its per-thread
 * min/max and worst wait are printed, not asserted.
 *
 * Then the per-head bound of docs/mutex.md, counted in unlocks rather than
 * time, in every build: a holder H that takes the lock back the moment it
 * unlocks (ahead of any wake-up), holding it 10 ms each time, must let a
 * waiter W in within 6 of its holds.  W parks at once (no spinning); each
 * unlock wakes it; once W has waited the 4 ms threshold and competed as the
 * head for 0.5 ms it sets HANDOFF, and the next unlock hands it the lock
 * (after the second hold here, the third for a head recorded by the
 * previous owner, which starts to compete when first woken).  Two cases: W
 * set WAKE itself as head, and W was recorded by the previous owner W1 when
 * W1 took the lock from the queue ahead of it (a deferred head, parked in
 * the queue).  A head that never sets HANDOFF, or whose time at the head
 * starts again at every wake-up, loses every race to H's relock (a CAS
 * against a wake-up) and is not served.
 * In sanitizer builds the instrumentation distorts timing: both runs are
 * made (shorter) and checked for exclusion and progress only; the bounds are
 * printed but not asserted. */
#include "common.h"
#include "mutex_ops.h"
#include "stress.h"

#include <hotlock/hotlock.h>

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#define THREADS 8

static int run(const char *label, int duration_ms, bool assert_bounds, uint64_t seed)
{
	hl_mutex_t m = HL_MUTEX_INIT;
	stress_ops_t ops = mutex_stress_ops(&m);
	stress_config_t cfg;
	stress_result_t res;
	hl_config_t hc;
	int64_t bound_ns;
	double ratio;
	int bad;

	hl_config_get(&hc);
	bound_ns = (int64_t)hc.handoff_ns + THREADS * 4 * NSEC_PER_MSEC + 50 * NSEC_PER_MSEC;
	stress_config_default(&cfg);
	cfg.label = label;
	cfg.threads = THREADS;
	cfg.duration_ms = duration_ms;
	cfg.cs_work = 100;
	cfg.ncs_work = 10;
	cfg.seed = seed;

	bad = stress_run(&ops, &cfg, &res);
	CHECK(bad == 0, "%s: %d violations, %d unexpected results", label, res.violations,
	      res.errors);
	ratio = res.min_ops ? (double)res.max_ops / (double)res.min_ops : 1e9;
	printf("%s: handoff %.1f ms; per-thread ops min %llu max %llu (max/min %.2f); "
	       "worst wait %.2f ms, %.2f ms without stalls; bound %.1f ms (handoff + %d x 4 ms "
	       "+ 50 ms); stalls %.1f ms in all (longest critical section %.2f ms, longest "
	       "handover %.2f ms)\n",
	       label, hc.handoff_ns / 1e6, (unsigned long long)res.min_ops,
	       (unsigned long long)res.max_ops, ratio, res.worst_wait_ns / 1e6,
	       res.worst_wait_adj_ns / 1e6, bound_ns / 1e6, THREADS, res.stall_ns / 1e6,
	       res.max_cs_ns / 1e6, res.max_gap_ns / 1e6);
	for (int i = 0; i < THREADS; i++) {
		const stress_thread_result_t *t = &res.per_thread[i];
		printf("  thread %d: %8llu ops, worst wait %8.3f ms (%.3f ms of it stalled), "
		       "worst without stalls %8.3f ms, mean wait %7.3f ms\n", i,
		       (unsigned long long)t->ops, t->worst_wait_ns / 1e6,
		       t->worst_wait_stall_ns / 1e6, t->worst_wait_adj_ns / 1e6,
		       t->ops ? (double)t->total_wait_ns / (double)t->ops / 1e6 : 0.0);
		CHECK(t->ops > 0, "%s: thread %d never acquired the lock", label, i);
		if (assert_bounds)
			CHECK((int64_t)t->worst_wait_adj_ns <= bound_ns,
			      "%s: thread %d waited %.3f ms for the lock, not counting %.3f ms "
			      "of stalls; bound %.1f ms (seed 0x%llx)", label, i,
			      t->worst_wait_adj_ns / 1e6,
			      (t->worst_wait_ns - t->worst_wait_adj_ns) / 1e6, bound_ns / 1e6,
			      (unsigned long long)seed);
	}
	if (assert_bounds)
		CHECK(res.stall_ns * 4 < (uint64_t)res.elapsed_ns,
		      "%s: stalls took %.1f ms of the %.0f ms run: handovers or critical "
		      "sections are systematically slower than 2 ms (seed 0x%llx)", label,
		      res.stall_ns / 1e6, res.elapsed_ns / 1e6, (unsigned long long)seed);
	if (assert_bounds)
		CHECK(res.min_ops > 0 && res.max_ops <= 2 * res.min_ops,
		      "%s: unfair: per-thread ops min %llu max %llu (max/min %.2f > 2, seed 0x%llx)",
		      label, (unsigned long long)res.min_ops, (unsigned long long)res.max_ops,
		      ratio, (unsigned long long)seed);
	CHECK_RC(hl_mutex_destroy(&m), 0);
	stress_result_free(&res);
	return bad;
}

/* ---- a due head is served within a few unlocks ---------------------------- */

/* The holder H keeps the lock almost all the time: it holds it HOLD_MS, and
 * takes it back the moment it unlocks (on the fast path, ahead of any
 * wake-up).  W waits on the lock, parked (nobody spins).  H's unlocks wake W,
 * which finds the lock taken again; once W is due it sets HANDOFF, and the
 * next unlock hands it the lock.  W must get it within DUE_CYCLES of H's
 * holds. */
#define HOLD_MS    10
#define DUE_CYCLES 6

struct due_run {
	hl_mutex_t m;
	int cpu_a, cpu_b;               /* H (main, or W1) on a, W on b */
	atomic_uint w_tid, w1_tid;
	atomic_int w_done;              /* W has had the lock */
	int w_after;                    /* H's acquisitions before W's */
};

/* Pins the calling thread to CPU cpu (best effort: W's wake-ups then do
 * not wait for H's CPU). */
static void pin(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/* Whether describe() shows the thread tid parked in m's queue. */
static bool parked_in_queue(hl_mutex_t *m, unsigned tid)
{
	char buf[1024], want[32];
	hl_mutex_describe(m, buf, sizeof(buf));
	snprintf(want, sizeof(want), " %u@", tid);
	const char *p = strstr(buf, want);
	return p && strncmp(strchr(p, ':'), ":park", 5) == 0;
}

static void wait_parked(struct due_run *r, atomic_uint *tid, const char *who)
{
	int64_t give_up = now_ns() + 5 * NSEC_PER_SEC;
	while (!atomic_load(tid) || !parked_in_queue(&r->m, atomic_load(tid))) {
		char buf[1024];
		if (now_ns() > give_up) {
			hl_mutex_describe(&r->m, buf, sizeof(buf));
			REQUIRE(0, "%s never parked in the queue: %s", who, buf);
		}
		sleep_ns(100 * NSEC_PER_USEC);
	}
}

static void *due_w(void *arg)
{
	struct due_run *r = arg;
	pin(r->cpu_b);
	atomic_store(&r->w_tid, test_gettid());
	CHECK_RC(hl_mutex_lock(&r->m), 0);
	atomic_store(&r->w_done, 1);
	CHECK_RC(hl_mutex_unlock(&r->m), 0);
	return NULL;
}

/* H's part: it holds the lock (taken by the caller) HOLD_MS, unlocks and
 * takes it back at once, until W has had it or DUE_CYCLES holds; then
 * unlocks.  Sets w_after. */
static void hold_cycles(struct due_run *r)
{
	int held = 1;
	for (; held <= DUE_CYCLES && !atomic_load(&r->w_done); held++) {
		sleep_ns(HOLD_MS * NSEC_PER_MSEC);
		CHECK_RC(hl_mutex_unlock(&r->m), 0);
		CHECK_RC(hl_mutex_lock(&r->m), 0);
	}
	r->w_after = atomic_load(&r->w_done) ? held - 1 : -1;
	CHECK_RC(hl_mutex_unlock(&r->m), 0);
}

/* W1 is queued ahead of W: it takes the lock from the queue, recording W,
 * parked behind it, as the head its unlock wakes; then it is H. */
static void *due_w1(void *arg)
{
	struct due_run *r = arg;
	pin(r->cpu_a);
	atomic_store(&r->w1_tid, test_gettid());
	CHECK_RC(hl_mutex_lock(&r->m), 0);
	hold_cycles(r);
	return NULL;
}

static void due_head_served(bool deferred)
{
	const char *label = deferred ? "deferred head (recorded by the previous owner)" :
				       "head that set WAKE itself";
	hl_config_t c0, c;
	hl_config_get(&c0);
	c = c0;
	c.handoff_ns = 4 * NSEC_PER_MSEC;
	c.spin_ns = 0;                  /* everybody parks at once */
	CHECK_RC(hl_config_set(&c), 0);
	struct due_run r = { .cpu_a = -1, .cpu_b = -1 };
	pthread_t w, w1;
	cpu_set_t all;
	REQUIRE(sched_getaffinity(0, sizeof(all), &all) == 0, "sched_getaffinity");
	for (int cpu = 0; cpu < CPU_SETSIZE && r.cpu_b < 0; cpu++)
		if (CPU_ISSET(cpu, &all))
			*(r.cpu_a < 0 ? &r.cpu_a : &r.cpu_b) = cpu;
	hl_mutex_init(&r.m);
	pin(r.cpu_a);
	CHECK_RC(hl_mutex_lock(&r.m), 0);
	if (deferred) {
		REQUIRE(pthread_create(&w1, NULL, due_w1, &r) == 0, "pthread_create");
		wait_parked(&r, &r.w1_tid, "W1");
	}
	REQUIRE(pthread_create(&w, NULL, due_w, &r) == 0, "pthread_create");
	wait_parked(&r, &r.w_tid, "W");
	if (deferred) {
		/* W1 is woken (not due) and takes the lock; W stays parked. */
		CHECK_RC(hl_mutex_unlock(&r.m), 0);
		pthread_join(w1, NULL);
	} else {
		hold_cycles(&r);
	}
	pthread_join(w, NULL);
	sched_setaffinity(0, sizeof(all), &all);
	if (r.w_after >= 0)
		printf("due %s: W served after %d of H's %d ms holds\n", label, r.w_after, HOLD_MS);
	else
		printf("due %s: W not served in %d of H's %d ms holds\n", label, DUE_CYCLES,
		       HOLD_MS);
	CHECK(r.w_after >= 0, "a due %s was not served within %d unlocks: the holder took "
	      "the lock back every time", label, DUE_CYCLES);
	CHECK_RC(hl_mutex_destroy(&r.m), 0);
	CHECK_RC(hl_config_set(&c0), 0);
}

int main(void)
{
	hl_config_t c0, c;
	uint64_t seed = test_seed(0x5eedfa1e);
	bool timing = !HOTLOCK_SANITIZED;
	int ms = (int)env_long("HOTLOCK_FAIRNESS_MS", timing ? 2000 : 500);

	hl_config_get(&c0);
	printf("test_fairness: %d threads on %ld CPUs, %d ms per run, seed 0x%llx%s\n", THREADS,
	       online_cpus(), ms, (unsigned long long)seed,
	       timing ? "" : "; sanitizer build: bounds printed, not asserted");
	if (!getenv("HOTLOCK_HANDOFF_NS"))
		CHECK(c0.handoff_ns == 4000000, "default handoff %llu ns, expected 4 ms",
		      (unsigned long long)c0.handoff_ns);

	run("default handoff", ms, timing, seed);

	c = c0;
	c.handoff_ns = HL_HANDOFF_NS_MAX;
	CHECK_RC(hl_config_set(&c), 0);
	run("handoff 10 s (no bound expected)", ms, false, seed + 1);
	CHECK_RC(hl_config_set(&c0), 0);

	cpu_set_t usable;
	if (sched_getaffinity(0, sizeof(usable), &usable) != 0 || CPU_COUNT(&usable) < 2) {
		printf("test_fairness: one usable CPU: nobody spins, the due-head runs are "
		       "skipped\n");
	} else {
		due_head_served(false);
		due_head_served(true);
	}

	return test_finish("test_fairness");
}
