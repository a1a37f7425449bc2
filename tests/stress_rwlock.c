/* SPDX-License-Identifier: MIT */
/* Stress test of hl_rwlock through the stress harness (stress.h).
 *
 * Usage: test_stress_rwlock MULT [KIND]
 *   MULT x the online CPU count threads (ctest runs 2, 4 and 8; and, through
 *   the environment, 4 with spinning off and handoff at once, 8 with a
 *   100 us handoff threshold; and 4 of each other kind).  KIND:
 *   prefer-writer (the default kind), fair, prefer-reader or writer-yields.  Every thread picks, for each operation, the
 *   read side (rdlock/tryrdlock/timedrdlock) or the write side
 *   (wrlock/trywrlock/timedwrlock), at random in the proportion below.
 * Each invocation runs six workloads:
 *   lock r50       rdlock/wrlock only, 50% reads;
 *   lock r90       the same, 90% reads;
 *   mixed r50      30% try, 30% timed (CLOCK_MONOTONIC, random timeouts
 *                  0..200 us, one in ten already expired), 40% blocking
 *                  calls, 50% reads;
 *   sleepy r50     blocking calls only, and the holder (reader or writer)
 *                  sleeps (1 us..1 ms, 3% of critical sections) or yields
 *                  (5%) while holding the lock;
 *   mixed+sleepy r90  both, read-heavy: timeouts expire while holders sleep;
 *   downgrade r50  20% try, 20% timed, 1% sleep, 2% yield, and 30% of the
 *                  write critical sections downgrade: the harness's relock
 *                  hook calls hl_rwlock_downgrade, holds the read share a
 *                  moment (sometimes yielding), unlocks, and takes the write
 *                  lock again.
 * Asserts, for each run:
 *  - (the harness) writers exclude everyone, readers exclude writers, on
 *    every critical section; only the documented return codes (0, EBUSY
 *    from the try calls, ETIMEDOUT from the timed ones, never before the
 *    deadline); no thread stuck for the watchdog's 10 s (it prints
 *    hl_rwlock_describe and every thread's state, and fails the process);
 *  - every thread completed at least one acquisition in the runs with
 *    blocking calls only, and at least one operation in the others;
 *  - lock r90: at least two readers were inside at once (readers share);
 *  - downgrade r50: hl_rwlock_downgrade returned 0 each time; during each
 *    downgraded hold no writer was inside (the write side's ops count their
 *    holders; each side registers, then checks the other, all seq_cst, so an
 *    overlap is seen by at least one of them), hl_rwlock_holders showed no
 *    writer and at least one reader, trywrlock returned EBUSY, and the
 *    unlock returned 0; at least one downgrade happened;
 *  - afterwards the lock is free (hl_rwlock_holders: no writer, no
 *    reader), trywrlock succeeds, unlock returns 0, and destroy returns 0,
 *    not EBUSY (no waiter left in the queue).
 * The default kind's lock alternates between HL_RWLOCK_INIT and calloc'd
 * zero bytes; another kind's is hl_rwlock_init_kind'ed.
 * Duration of each run: HOTLOCK_STRESS_MS when set, else 600 ms (300 ms in
 * sanitizer builds): six workloads x five ctest entries, kept short.
 * Seed: HOTLOCK_SEED (printed). */
#include "common.h"
#include "rwlock_ops.h"
#include "stress.h"

#include <hotlock/hotlock.h>

#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>

/* ---- the downgrade workload: ops over a wrapper that watches the
 * downgraded holds ---- */

struct dg {
	hl_rwlock_t *l;
	atomic_int writers;       /* write holds, counted by the ops below */
	atomic_int downgraded;    /* downgraded holds in progress */
	atomic_int violations;
	atomic_ullong downgrades;
	atomic_flag reported;
	char first[512];          /* the first violation, written once */
};

static void dg_violation(struct dg *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void dg_violation(struct dg *d, const char *fmt, ...)
{
	va_list ap;
	atomic_fetch_add(&d->violations, 1);
	if (!atomic_flag_test_and_set(&d->reported)) {
		va_start(ap, fmt);
		vsnprintf(d->first, sizeof(d->first), fmt, ap);
		va_end(ap);
		fprintf(stderr, "downgrade check: %s\n", d->first);
	}
}

static void dg_enter_writer(struct dg *d)
{
	atomic_fetch_add(&d->writers, 1);       /* seq_cst: see the header */
	int g = atomic_load(&d->downgraded);
	if (g != 0)
		dg_violation(d, "a writer entered while %u downgraded hold(s) were inside",
			     g);
}

static int dg_wrlock(void *o)
{
	struct dg *d = o;
	int rc = hl_rwlock_wrlock(d->l);
	if (rc == 0)
		dg_enter_writer(d);
	return rc;
}

static int dg_trywrlock(void *o)
{
	struct dg *d = o;
	int rc = hl_rwlock_trywrlock(d->l);
	if (rc == 0)
		dg_enter_writer(d);
	return rc;
}

static int dg_timedwrlock(void *o, const struct timespec *abs)
{
	struct dg *d = o;
	int rc = hl_rwlock_timedwrlock(d->l, CLOCK_MONOTONIC, abs);
	if (rc == 0)
		dg_enter_writer(d);
	return rc;
}

static int dg_wrunlock(void *o)
{
	struct dg *d = o;
	atomic_fetch_sub(&d->writers, 1);
	return hl_rwlock_unlock(d->l);
}

static int dg_rdlock(void *o) { return hl_rwlock_rdlock(((struct dg *)o)->l); }
static int dg_tryrdlock(void *o) { return hl_rwlock_tryrdlock(((struct dg *)o)->l); }
static int dg_timedrdlock(void *o, const struct timespec *abs)
{
	return hl_rwlock_timedrdlock(((struct dg *)o)->l, CLOCK_MONOTONIC, abs);
}
static int dg_rdunlock(void *o) { return hl_rwlock_unlock(((struct dg *)o)->l); }
static int dg_describe(void *o, char *buf, size_t len)
{
	return hl_rwlock_describe(((struct dg *)o)->l, buf, len);
}

/* The relock hook: write hold -> downgraded read hold -> unlock -> write
 * hold again.  Called by the harness with its critical section closed. */
static int dg_relock(void *o)
{
	struct dg *d = o;
	uint32_t w, r;
	int rc, g;

	atomic_fetch_sub(&d->writers, 1);
	rc = hl_rwlock_downgrade(d->l);
	if (rc != 0) {
		/* Still write-held: the harness reports the return code. */
		atomic_fetch_add(&d->writers, 1);
		dg_violation(d, "hl_rwlock_downgrade of a write hold returned %d", rc);
		return rc;
	}
	atomic_fetch_add(&d->downgrades, 1);
	atomic_fetch_add(&d->downgraded, 1);    /* seq_cst: see the header */
	g = atomic_load(&d->writers);
	if (g != 0)
		dg_violation(d, "%d writer(s) inside right after a downgrade", g);
	hl_rwlock_holders(d->l, &w, &r);
	if (w != 0 || r == 0)
		dg_violation(d, "after a downgrade the lock shows writer %u, %u readers", w, r);
	rc = hl_rwlock_trywrlock(d->l);
	if (rc != EBUSY) {
		dg_violation(d, "trywrlock while holding a downgraded read share returned %d", rc);
		if (rc == 0)
			hl_rwlock_unlock(d->l);
	}
	/* Let readers come in beside us (or not, when a handoff is due). */
	if (atomic_load_explicit(&d->downgrades, memory_order_relaxed) % 4 == 0)
		sched_yield();
	else
		for (int i = 0; i < 50; i++)
			atomic_signal_fence(memory_order_seq_cst);
	g = atomic_load(&d->writers);
	if (g != 0)
		dg_violation(d, "%d writer(s) inside while a downgraded hold was", g);
	atomic_fetch_sub(&d->downgraded, 1);
	rc = hl_rwlock_unlock(d->l);
	if (rc != 0) {
		dg_violation(d, "unlock of a downgraded hold returned %d", rc);
		return rc;
	}
	rc = hl_rwlock_wrlock(d->l);
	if (rc == 0)
		dg_enter_writer(d);
	return rc;
}

/* ---- the workloads ---- */

struct workload {
	const char *name;
	int pct_read;
	int pct_trylock, pct_timedlock;
	int pct_cs_sleep, pct_cs_yield;
	int pct_relock;         /* > 0: the downgrade ops */
	bool want_shared;       /* assert that readers overlapped */
};

static const struct workload workloads[] = {
	{ "lock r50",         50, 0,  0,  0, 0, 0,  false },
	{ "lock r90",         90, 0,  0,  0, 0, 0,  true },
	{ "mixed r50",        50, 30, 30, 0, 0, 0,  false },
	{ "sleepy r50",       50, 0,  0,  3, 5, 0,  false },
	{ "mixed+sleepy r90", 90, 30, 30, 3, 5, 0,  false },
	{ "downgrade r50",    50, 20, 20, 1, 2, 30, false },
};

int main(int argc, char **argv)
{
	long mult = argc > 1 ? strtol(argv[1], NULL, 10) : 2;
	long cpus = online_cpus();
	int threads = (int)(mult * cpus);
	uint64_t seed = test_seed(0x5eed0004);
	int duration = getenv("HOTLOCK_STRESS_MS") ? stress_duration_ms()
		: HOTLOCK_SANITIZED ? 300 : 600;
	hl_config_t hc;
	char name[64];

	const char *kname = argc > 2 ? argv[2] : "prefer-writer";
	static const struct { const char *name; int kind; } kinds[] = {
		{ "prefer-writer", HL_RWLOCK_PREFER_WRITER }, { "fair", HL_RWLOCK_FAIR },
		{ "prefer-reader", HL_RWLOCK_PREFER_READER },
		{ "writer-yields", HL_RWLOCK_WRITER_YIELDS },
	};
	int kind = -1;
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
		if (!strcmp(kname, kinds[k].name))
			kind = kinds[k].kind;
	REQUIRE(argc <= 3 && mult > 0 && threads > 0 && threads <= 4096 && kind >= 0,
		"usage: test_stress_rwlock MULT [prefer-writer|fair|prefer-reader|writer-yields]");
	hl_config_get(&hc);
	printf("test_stress_rwlock: %s, %d threads (%ldx %ld CPUs), %d ms per run, seed 0x%llx, "
	       "spin_ns %llu, handoff_ns %llu, rwlock_yield_ns %llu%s\n",
	       kname, threads, mult, cpus, duration, (unsigned long long)seed,
	       (unsigned long long)hc.spin_ns, (unsigned long long)hc.handoff_ns,
	       (unsigned long long)hc.rwlock_yield_ns,
	       HOTLOCK_SANITIZED ? ", sanitizer build" : "");
	fflush(stdout);

	for (size_t wi = 0; wi < sizeof(workloads) / sizeof(workloads[0]); wi++) {
		const struct workload *wl = &workloads[wi];
		/* Alternate a statically initialised and a zero-filled lock:
		 * both must be unlocked rwlocks. */
		hl_rwlock_t *l = calloc(1, sizeof(*l));
		hl_rwlock_t init = HL_RWLOCK_INIT;
		static struct dg dg;
		stress_config_t cfg;
		stress_result_t res;
		stress_ops_t ops;
		uint32_t w, r;
		int bad;
		bool lock_only = wl->pct_trylock == 0 && wl->pct_timedlock == 0;

		REQUIRE(l, "out of memory");
		if (kind != HL_RWLOCK_PREFER_WRITER)
			CHECK_RC(hl_rwlock_init_kind(l, kind), 0);
		else if (wi % 2)
			*l = init;
		if (wl->pct_relock) {
			memset(&dg, 0, sizeof(dg));
			atomic_flag_clear(&dg.reported);
			dg.l = l;
			ops = (stress_ops_t){
				.name = "hl_rwlock+downgrade",
				.obj = &dg,
				.lock = dg_wrlock,
				.trylock = dg_trywrlock,
				.timedlock = dg_timedwrlock,
				.unlock = dg_wrunlock,
				.describe = dg_describe,
				.rdlock = dg_rdlock,
				.tryrdlock = dg_tryrdlock,
				.timedrdlock = dg_timedrdlock,
				.rdunlock = dg_rdunlock,
				.relock = dg_relock,
			};
		} else {
			ops = rwlock_stress_ops(l);
		}
		stress_config_default(&cfg);
		snprintf(name, sizeof(name), "%s x%d", wl->name, threads);
		cfg.label = name;
		cfg.threads = threads;
		cfg.duration_ms = duration;
		cfg.seed = seed + wi;
		cfg.pct_read = wl->pct_read;
		cfg.pct_trylock = wl->pct_trylock;
		cfg.pct_timedlock = wl->pct_timedlock;
		cfg.pct_cs_sleep = wl->pct_cs_sleep;
		cfg.pct_cs_yield = wl->pct_cs_yield;
		cfg.pct_relock = wl->pct_relock;

		bad = stress_run(&ops, &cfg, &res);
		CHECK(bad == 0, "%s: %d violations, %d unexpected results (seed 0x%llx)",
		      name, res.violations, res.errors, (unsigned long long)cfg.seed);
		for (int i = 0; i < threads; i++) {
			const stress_thread_result_t *t = &res.per_thread[i];
			if (lock_only)
				CHECK(t->ops > 0, "%s: thread %d never acquired the lock "
				      "(%llu lock calls)", name, i,
				      (unsigned long long)t->locks);
			else
				CHECK(t->locks + t->trylocks + t->timedlocks > 0,
				      "%s: thread %d completed no operation", name, i);
		}
		if (!lock_only)
			CHECK(res.total_ops > 0, "%s: no acquisition at all", name);
		CHECK(res.reads > 0 && res.reads < res.total_ops,
		      "%s: %llu reads of %llu acquisitions: both sides should have run", name,
		      (unsigned long long)res.reads, (unsigned long long)res.total_ops);
		if (wl->want_shared)
			CHECK(res.max_readers >= 2, "%s: at most %d reader(s) inside at once: "
			      "readers do not share the lock", name, res.max_readers);
		if (wl->pct_relock) {
			unsigned long long n = atomic_load(&dg.downgrades);
			printf("%s: %llu downgrades, %d violations seen by the downgrade checks\n",
			       name, n, atomic_load(&dg.violations));
			CHECK(atomic_load(&dg.violations) == 0, "%s: %d downgrade violations, the "
			      "first: %s (seed 0x%llx)", name, atomic_load(&dg.violations), dg.first,
			      (unsigned long long)cfg.seed);
			CHECK(n > 0, "%s: no downgrade happened", name);
			CHECK(atomic_load(&dg.writers) == 0 && atomic_load(&dg.downgraded) == 0,
			      "%s: holds still counted after the run: %d writers, %d downgraded",
			      name, atomic_load(&dg.writers), atomic_load(&dg.downgraded));
		}
		hl_rwlock_holders(l, &w, &r);
		CHECK(w == 0 && r == 0, "%s: after the run the lock shows writer %u, %u readers",
		      name, w, r);
		CHECK_RC(hl_rwlock_trywrlock(l), 0);
		CHECK_RC(hl_rwlock_unlock(l), 0);
		CHECK_RC(hl_rwlock_destroy(l), 0);
		if (test_failures) {
			char buf[1024];
			hl_rwlock_describe(l, buf, sizeof(buf));
			fprintf(stderr, "%s: after the run: %s\n", name, buf);
		}
		stress_result_free(&res);
		free(l);
		if (bad)
			break; /* the counters are meaningless after a violation */
	}
	return test_finish("test_stress_rwlock");
}
