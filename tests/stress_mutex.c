/* SPDX-License-Identifier: MIT */
/* Stress test of hl_mutex through the stress harness (stress.h).
 *
 * Usage: test_stress_mutex MULT [--cna NODES] [--expect-cna]
 *   MULT x the online CPU count threads (ctest runs 2, 4 and 8; and, through
 *   the environment, 4 with spinning off and handoff at once, 8 with a
 *   100 us handoff threshold, 4 with the 10 ms maximum spin budget).
 *   --cna NODES: the topology is virtual:NODES, every mutex is set to
 *   HL_QUEUE_CNA and worker i places itself on node i % NODES before it
 *   starts (ctest: 2x, 4x, 8x with 4 nodes, and 4x with spinning off,
 *   handoff at once and a CNA threshold of 0, a flush at every handover).
 *   --expect-cna: asserts that the mutexes, left at HL_QUEUE_DEFAULT, use
 *   CNA (ctest sets HOTLOCK_TOPOLOGY=virtual:2 and places no thread: the
 *   nodes come from the CPUs the workers run on).
 * Each invocation runs four workloads:
 *   lock      lock() only;
 *   mixed     30% trylock, 30% timedlock (CLOCK_MONOTONIC, random timeouts
 *             0..200 us, one in ten already expired), 40% lock;
 *   sleepy    lock() only, and the owner sleeps (1 us..1 ms, 3% of critical
 *             sections) or yields (5%) while holding the lock;
 *   mixed+sleepy  both: timeouts expire while the owner sleeps.
 * Asserts, for each run: mutual exclusion on every critical section, only
 * the documented return codes, timedlock never times out before its
 * deadline, no thread stuck for the watchdog's 10 s; every thread completed
 * at least one acquisition in lock-only runs and at least one operation in
 * the others; afterwards the mutex is free (owner 0, trylock succeeds,
 * destroy returns 0, not EBUSY: no waiter left behind); with --cna or
 * --expect-cna, the mutex's policy (hl_mutex_queue) is CNA.
 * Duration of each run: HOTLOCK_STRESS_MS (default 1500 ms, 700 ms in
 * sanitizer builds).  Seed: HOTLOCK_SEED (printed). */
#include "common.h"
#include "mutex_ops.h"
#include "stress.h"

#include <hotlock/hotlock.h>


/* --cna: worker i counts as being on node i % cna_nodes. */
static int cna_nodes;

static void place_thread(void *o, int index)
{
	(void)o;
	REQUIRE(hl_topology_set_thread_node(index % cna_nodes) == 0,
		"hl_topology_set_thread_node(%d)", index % cna_nodes);
}

struct workload {
	const char *name;
	int pct_trylock, pct_timedlock;
	int pct_cs_sleep, pct_cs_yield;
};

static const struct workload workloads[] = {
	{ "lock",         0,  0,  0, 0 },
	{ "mixed",        30, 30, 0, 0 },
	{ "sleepy",       0,  0,  3, 5 },
	{ "mixed+sleepy", 30, 30, 3, 5 },
};

int main(int argc, char **argv)
{
	long mult = argc > 1 ? strtol(argv[1], NULL, 10) : 2;
	long cpus = online_cpus();
	int threads = (int)(mult * cpus);
	uint64_t seed = test_seed(0x5eed0001);
	bool expect_cna = false;
	hl_config_t hc;
	char name[64], topo[64];

	REQUIRE(mult > 0 && threads > 0 && threads <= 4096, "bad multiplier %s", argv[1]);
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--cna") == 0 && i + 1 < argc) {
			cna_nodes = atoi(argv[++i]);
			REQUIRE(cna_nodes >= 1 && cna_nodes <= HL_TOPOLOGY_MAX_NODES,
				"bad node count %s", argv[i]);
			snprintf(topo, sizeof(topo), "virtual:%d", cna_nodes);
			REQUIRE(hl_topology_set(topo) == 0, "hl_topology_set(%s)", topo);
		} else if (strcmp(argv[i], "--expect-cna") == 0) {
			expect_cna = true;
		} else {
			REQUIRE(false, "unknown argument %s", argv[i]);
		}
	}
	hl_config_get(&hc);
	hl_topology_get(topo, sizeof(topo));
	printf("test_stress_mutex: %d threads (%ldx %ld CPUs), %d ms per run, seed 0x%llx, "
	       "spin_ns %llu, handoff_ns %llu, topology %s (%d nodes), queue %s%s, "
	       "cna_threshold_ns %llu%s\n",
	       threads, mult, cpus, stress_duration_ms(), (unsigned long long)seed,
	       (unsigned long long)hc.spin_ns, (unsigned long long)hc.handoff_ns,
	       topo, hl_topology_nodes(), cna_nodes ? "cna" : "default",
	       cna_nodes ? ", threads placed round-robin" : "",
	       (unsigned long long)hc.cna_threshold_ns,
	       HOTLOCK_SANITIZED ? ", sanitizer build" : "");
	fflush(stdout);

	for (size_t wi = 0; wi < sizeof(workloads) / sizeof(workloads[0]); wi++) {
		const struct workload *wl = &workloads[wi];
		/* Alternate a statically initialised and a zero-filled mutex:
		 * both must be unlocked mutexes. */
		hl_mutex_t *m = calloc(1, sizeof(*m));
		hl_mutex_t init = HL_MUTEX_INIT;
		stress_config_t cfg;
		stress_result_t res;
		stress_ops_t ops = mutex_stress_ops(m);
		int bad;
		bool lock_only = wl->pct_trylock == 0 && wl->pct_timedlock == 0;

		REQUIRE(m, "out of memory");
		if (wi % 2)
			*m = init;
		ops.thread_init = cna_nodes ? place_thread : NULL;
		if (cna_nodes)
			CHECK_RC(hl_mutex_set_queue(m, HL_QUEUE_CNA), 0);
		if (cna_nodes || expect_cna)
			CHECK(hl_mutex_queue(m) == HL_QUEUE_CNA, "%s: the mutex uses policy %d, "
			      "not CNA", wl->name, hl_mutex_queue(m));
		stress_config_default(&cfg);
		snprintf(name, sizeof(name), "%s x%d%s", wl->name, threads,
			 cna_nodes || expect_cna ? " cna" : "");
		cfg.label = name;
		cfg.threads = threads;
		cfg.seed = seed + wi;
		cfg.pct_trylock = wl->pct_trylock;
		cfg.pct_timedlock = wl->pct_timedlock;
		cfg.pct_cs_sleep = wl->pct_cs_sleep;
		cfg.pct_cs_yield = wl->pct_cs_yield;

		bad = stress_run(&ops, &cfg, &res);
		CHECK(bad == 0, "%s: %d violations, %d unexpected results",
		      name, res.violations, res.errors);
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
		CHECK(hl_mutex_owner(m) == 0, "%s: owner %u after the run", name,
		      hl_mutex_owner(m));
		CHECK_RC(hl_mutex_trylock(m), 0);
		CHECK_RC(hl_mutex_unlock(m), 0);
		CHECK_RC(hl_mutex_destroy(m), 0);
		stress_result_free(&res);
		free(m);
		if (bad)
			break; /* the counters are meaningless after a violation */
	}
	return test_finish("test_stress_mutex");
}
