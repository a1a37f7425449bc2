/* SPDX-License-Identifier: MIT */
/* The topology API (include/hotlock/topology.h), the per-mutex queue policy
 * (hl_mutex_set_queue/hl_mutex_queue) and the CNA tunable, black-box.
 *
 * Asserts (plain run, no HOTLOCK_* in the environment):
 *  - at start the source is "numa", nodes() >= 1 and equals the number of
 *    online NUMA nodes in sysfs (1 on this VM), cna_threshold_ns is 1 ms,
 *    and an all-zero mutex uses FIFO when there is one node;
 *  - hl_topology_set: EINVAL for "", "bogus", "virtual", "virtual:",
 *    "virtual:0", "virtual:x", "virtual:1025", "virtual:2x", "virtual:-1",
 *    "virtual:99999999999999999999", "numa2", "llcx"; after each error the
 *    source (hl_topology_get) and nodes() are those set before (virtual:5);
 *  - hl_topology_get: writes the source, returns its length, truncates like
 *    snprintf (returns the full length, NUL-terminated) and writes nothing
 *    with len 0;
 *  - virtual:N for N = 1, 2, 3, 7, 1024: nodes() == N, cpu_node(c) == c % N
 *    for every online CPU (sysfs cpu/online), cpu_node(-1) and cpu_node of a
 *    CPU number far past the last one are -1, and an unpinned thread's
 *    hl_topology_node() is the node of the CPU sched_getcpu() reports
 *    (retried when the thread migrated between the two reads);
 *  - numa: 0, nodes() >= 1, every online CPU maps into [0, nodes()), and to
 *    the node sysfs lists it under when the kernel's node numbers are dense;
 *  - llc: 0 or ENOENT (then the source is unchanged); with 0, every online
 *    CPU maps into [0, nodes()), CPUs map to the same node exactly when they
 *    share the highest-level cache in sysfs, nodes() is the number of such
 *    domains, and CPU 0 is on node 0 (numbered by lowest CPU);
 *  - hl_topology_set_thread_node: 0 for 0, 1, 1023 and -1, EINVAL for -2,
 *    1024 and INT_MAX (the placement unchanged); a placed thread's
 *    hl_topology_node() is its node (also past nodes(), and across a
 *    topology change); -1 goes back to the CPU's node; placement is
 *    per-thread: another thread, and a thread started by a placed thread,
 *    are not placed, and a thread's placement does not change main's;
 *  - hl_thread_set_prioritized: 0/1 set and read back, EINVAL for 2 and -1
 *    (unchanged), per-thread like the placement;
 *  - hl_mutex_set_queue/hl_mutex_queue: EINVAL for 3 and -1 (policy
 *    unchanged); EBUSY while the mutex is locked (by the caller or another
 *    thread) and while a waiter is queued behind the owner; FIFO and CNA are
 *    reported as set, whatever the topology; DEFAULT (and an all-zero or
 *    HL_MUTEX_INIT mutex) resolves to FIFO with 1 node and CNA with
 *    virtual:2, following hl_topology_set at once; a CNA mutex still locks,
 *    times out and unlocks;
 *  - hl_config: cna_threshold_ns set and read back, HL_CNA_THRESHOLD_NS_MAX
 *    accepted, one more rejected with EINVAL and nothing changed.
 *
 * With arguments (ctest sets the environment, see tests/CMakeLists.txt):
 *   --expect-topology SPEC   the source at start is SPEC (before any set);
 *   --expect-nodes N         nodes() at start is N;
 *   --expect-queue fifo|cna  an all-zero mutex resolves to this policy (and,
 *                            with HOTLOCK_QUEUE set, keeps it under virtual:1
 *                            and virtual:4; without, follows them); an
 *                            explicit policy still wins, and the mutex works;
 *   --expect-threshold NS    cna_threshold_ns at start is NS;
 *   --expect-warnings A,B    re-runs itself with the same environment and
 *                            arguments (less this one), captures its stderr
 *                            and requires it to exit 0 and to mention each
 *                            of the variables A, B (the warning of a bad
 *                            value);
 * and then only those checks run. */
#include "common.h"

#include <hotlock/hotlock.h>

#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

/* ---- sysfs ---- */

static bool read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	bool ok;
	if (!f)
		return false;
	ok = fgets(buf, (int)len, f) != NULL;
	fclose(f);
	if (ok)
		buf[strcspn(buf, "\n")] = 0;
	return ok;
}

#define MAX_CPUS 4096

/* Parses a sysfs CPU list ("0-3,8,10-11") into set[]; returns the count. */
static int parse_cpu_list(const char *s, bool *set, int max)
{
	int n = 0;
	while (*s) {
		char *end;
		long a = strtol(s, &end, 10), b;
		if (end == s)
			break;
		b = a;
		s = end;
		if (*s == '-') {
			b = strtol(s + 1, &end, 10);
			s = end;
		}
		for (long c = a; c <= b && c < max; c++)
			if (c >= 0 && !set[c]) {
				set[c] = true;
				n++;
			}
		if (*s == ',')
			s++;
		else
			break;
	}
	return n;
}

static bool online[MAX_CPUS];
static int n_online, max_online = -1;

static void find_online_cpus(void)
{
	char buf[4096];
	if (read_line("/sys/devices/system/cpu/online", buf, sizeof(buf)))
		n_online = parse_cpu_list(buf, online, MAX_CPUS);
	if (n_online == 0) {
		long n = online_cpus();
		for (long c = 0; c < n && c < MAX_CPUS; c++)
			online[c] = true;
		n_online = (int)(n < MAX_CPUS ? n : MAX_CPUS);
	}
	for (int c = 0; c < MAX_CPUS; c++)
		if (online[c])
			max_online = c;
}

/* ---- helpers ---- */

static const char *topo_str(void)
{
	static char buf[64];
	hl_topology_get(buf, sizeof(buf));
	return buf;
}

/* hl_topology_node() of this (unplaced) thread against the node of the CPU
 * it runs on; retried when the thread moved between the reads. */
static void check_unplaced_node(const char *what)
{
	for (int tries = 0; tries < 1000; tries++) {
		int c1 = sched_getcpu();
		int n = hl_topology_node();
		int c2 = sched_getcpu();
		if (c1 != c2 || c1 < 0)
			continue;
		CHECK(n == hl_topology_cpu_node(c1),
		      "%s (%s): hl_topology_node() %d on CPU %d, whose node is %d", what,
		      topo_str(), n, c1, hl_topology_cpu_node(c1));
		return;
	}
	CHECK(false, "%s: the thread migrated between every pair of sched_getcpu() calls", what);
}

static void check_bad_cpus(void)
{
	CHECK(hl_topology_cpu_node(-1) == -1, "cpu_node(-1) = %d (%s)",
	      hl_topology_cpu_node(-1), topo_str());
	CHECK(hl_topology_cpu_node(INT_MIN) == -1, "cpu_node(INT_MIN) = %d",
	      hl_topology_cpu_node(INT_MIN));
	CHECK(hl_topology_cpu_node(1 << 20) == -1, "cpu_node(2^20) = %d (%s)",
	      hl_topology_cpu_node(1 << 20), topo_str());
	CHECK(hl_topology_cpu_node(INT_MAX) == -1, "cpu_node(INT_MAX) = %d",
	      hl_topology_cpu_node(INT_MAX));
}

/* ---- parsing ---- */

static void test_parsing(void)
{
	static const char *const bad[] = {
		"", "bogus", "virtual", "virtual:", "virtual:0", "virtual:x",
		"virtual:1025", "virtual:2x", "virtual:-1",
		"virtual:99999999999999999999", "numa2", "llcx",
	};
	char buf[64];
	int len;

	CHECK_RC(hl_topology_set("virtual:5"), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = hl_topology_set(bad[i]);
		CHECK(rc == EINVAL, "hl_topology_set(\"%s\") returned %d (%s), expected EINVAL",
		      bad[i], rc, strerror(rc));
		CHECK(strcmp(topo_str(), "virtual:5") == 0 && hl_topology_nodes() == 5,
		      "after hl_topology_set(\"%s\") failed the source is %s with %d nodes, "
		      "expected virtual:5 with 5", bad[i], topo_str(), hl_topology_nodes());
	}

	/* hl_topology_get: like snprintf. */
	memset(buf, 'z', sizeof(buf));
	len = hl_topology_get(buf, sizeof(buf));
	CHECK(len == 9 && strcmp(buf, "virtual:5") == 0, "get: %d \"%s\"", len, buf);
	memset(buf, 'z', sizeof(buf));
	len = hl_topology_get(buf, 4);
	CHECK(len == 9 && strcmp(buf, "vir") == 0 && buf[4] == 'z',
	      "get with len 4: returned %d, buffer \"%.8s\"", len, buf);
	memset(buf, 'z', sizeof(buf));
	len = hl_topology_get(buf, 0);
	CHECK(len == 9 && buf[0] == 'z', "get with len 0: returned %d, wrote %c", len, buf[0]);
	len = hl_topology_get(NULL, 0);
	CHECK(len == 9, "get(NULL, 0) returned %d", len);
	printf("parsing: %zu bad specs rejected with the source unchanged; get truncates like snprintf\n",
	       sizeof(bad) / sizeof(bad[0]));
}

/* ---- the sources ---- */

static void test_virtual(void)
{
	static const int ns[] = { 1, 2, 3, 7, 1024 };
	for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
		int n = ns[i];
		char spec[32];
		int bad = 0;
		snprintf(spec, sizeof(spec), "virtual:%d", n);
		CHECK_RC(hl_topology_set(spec), 0);
		CHECK(strcmp(topo_str(), spec) == 0, "source %s after setting %s", topo_str(), spec);
		CHECK(hl_topology_nodes() == n, "%s: nodes() = %d", spec, hl_topology_nodes());
		for (int c = 0; c <= max_online; c++) {
			if (!online[c])
				continue;
			if (hl_topology_cpu_node(c) != c % n && bad++ < 4)
				CHECK(false, "%s: CPU %d on node %d, expected %d", spec, c,
				      hl_topology_cpu_node(c), c % n);
		}
		CHECK(bad == 0, "%s: %d CPUs on the wrong node", spec, bad);
		check_bad_cpus();
		check_unplaced_node(spec);
	}
	printf("virtual: N = 1, 2, 3, 7, 1024: CPU c on node c %% N for the %d online CPUs\n",
	       n_online);
}

/* The number of online NUMA nodes in sysfs (1 when there is no sysfs). */
static int sysfs_numa_nodes(bool *dense, int cpu_node_of[MAX_CPUS])
{
	char buf[4096];
	bool set[MAX_CPUS] = { false };
	int n, maxn = -1;
	for (int c = 0; c < MAX_CPUS; c++)
		cpu_node_of[c] = -1;
	*dense = false;
	if (!read_line("/sys/devices/system/node/online", buf, sizeof(buf)))
		return 1;
	n = parse_cpu_list(buf, set, MAX_CPUS);
	for (int i = 0; i < MAX_CPUS; i++) {
		char path[128], list[4096];
		bool cpus[MAX_CPUS] = { false };
		if (!set[i])
			continue;
		maxn = i;
		snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/cpulist", i);
		if (!read_line(path, list, sizeof(list)))
			continue;
		parse_cpu_list(list, cpus, MAX_CPUS);
		for (int c = 0; c < MAX_CPUS; c++)
			if (cpus[c])
				cpu_node_of[c] = i;
	}
	*dense = maxn == n - 1;
	return n > 0 ? n : 1;
}

static void test_numa(void)
{
	static int sys_node[MAX_CPUS];
	bool dense;
	int sys_n = sysfs_numa_nodes(&dense, sys_node);
	int n;

	CHECK_RC(hl_topology_set("numa"), 0);
	CHECK(strcmp(topo_str(), "numa") == 0, "source %s after setting numa", topo_str());
	n = hl_topology_nodes();
	CHECK(n >= 1 && n == sys_n, "numa: %d nodes, sysfs lists %d", n, sys_n);
	for (int c = 0; c <= max_online; c++) {
		int k;
		if (!online[c])
			continue;
		k = hl_topology_cpu_node(c);
		CHECK(k >= 0 && k < n, "numa: CPU %d on node %d of %d", c, k, n);
		if (dense && sys_node[c] >= 0)
			CHECK(k == sys_node[c], "numa: CPU %d on node %d, sysfs says %d", c, k,
			      sys_node[c]);
	}
	check_bad_cpus();
	check_unplaced_node("numa");
	printf("numa: %d node(s) (sysfs: %d)\n", n, sys_n);
}

/* The shared_cpu_list of CPU c's highest-level data or unified cache, or ""
 * if sysfs has none. */
static void llc_of(int c, char *out, size_t len)
{
	int best = -1;
	out[0] = 0;
	for (int i = 0; i < 16; i++) {
		char path[128], lvl[32], type[32];
		int level;
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/cache/index%d/level", c, i);
		if (!read_line(path, lvl, sizeof(lvl)))
			continue;
		level = atoi(lvl);
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/cache/index%d/type", c, i);
		if (read_line(path, type, sizeof(type)) && strcmp(type, "Instruction") == 0)
			continue;
		snprintf(path, sizeof(path),
			 "/sys/devices/system/cpu/cpu%d/cache/index%d/shared_cpu_list", c, i);
		if (level > best && read_line(path, out, len))
			best = level;
	}
}

static void test_llc(void)
{
	int rc, n;
	static char doms[MAX_CPUS][128];
	int ndoms = 0;

	CHECK_RC(hl_topology_set("virtual:3"), 0);
	rc = hl_topology_set("llc");
	CHECK(rc == 0 || rc == ENOENT, "hl_topology_set(\"llc\") returned %d (%s)", rc,
	      strerror(rc));
	if (rc != 0) {
		CHECK(strcmp(topo_str(), "virtual:3") == 0 && hl_topology_nodes() == 3,
		      "llc failed (ENOENT) but the source is now %s", topo_str());
		printf("llc: ENOENT on this machine (source unchanged)\n");
		return;
	}
	CHECK(strcmp(topo_str(), "llc") == 0, "source %s after setting llc", topo_str());
	n = hl_topology_nodes();
	for (int c = 0; c <= max_online; c++) {
		if (!online[c])
			continue;
		int k = hl_topology_cpu_node(c);
		CHECK(k >= 0 && k < n, "llc: CPU %d on node %d of %d", c, k, n);
		llc_of(c, doms[c], sizeof(doms[c]));
	}
	/* Same node exactly when the same last-level cache. */
	for (int a = 0; a <= max_online; a++) {
		bool first = true;
		if (!online[a])
			continue;
		for (int b = 0; b < a; b++) {
			if (!online[b])
				continue;
			bool same_dom = strcmp(doms[a], doms[b]) == 0;
			bool same_node = hl_topology_cpu_node(a) == hl_topology_cpu_node(b);
			CHECK(same_dom == same_node,
			      "llc: CPUs %d and %d: caches \"%s\" and \"%s\", nodes %d and %d", a, b,
			      doms[a], doms[b], hl_topology_cpu_node(a), hl_topology_cpu_node(b));
			if (same_dom)
				first = false;
		}
		if (first)
			ndoms++;
	}
	CHECK(n == ndoms, "llc: %d nodes, sysfs shows %d last-level cache domains", n, ndoms);
	if (online[0])
		CHECK(hl_topology_cpu_node(0) == 0, "llc: CPU 0 on node %d, expected 0 "
		      "(numbered by lowest CPU)", hl_topology_cpu_node(0));
	check_bad_cpus();
	check_unplaced_node("llc");
	printf("llc: %d node(s), %d last-level cache domain(s) in sysfs\n", n, ndoms);
}

/* ---- per-thread placement and priority ---- */

struct peer {
	int node;               /* hl_topology_node() seen by the peer */
	int placed_node;        /* after placing itself on 3 */
	int prio;               /* hl_thread_prioritized() seen by the peer */
	int child_node;         /* a thread started by the placed peer */
	int cpu;                /* sched_getcpu() next to node */
	int cpu_node;
};

/* hl_topology_node() read while the thread stayed on one CPU (*cpu). */
static int node_on_stable_cpu(int *cpu)
{
	int c1, n, c2;
	do {
		c1 = sched_getcpu();
		n = hl_topology_node();
		c2 = sched_getcpu();
	} while (c1 != c2);
	*cpu = c1;
	return n;
}

static void *child_main(void *p)
{
	struct peer *pr = p;
	int c1, n = node_on_stable_cpu(&c1);
	pr->child_node = n == hl_topology_cpu_node(c1) ? -100 : n; /* -100: as expected */
	return NULL;
}

static void *peer_main(void *p)
{
	struct peer *pr = p;
	pthread_t th;
	pr->node = node_on_stable_cpu(&pr->cpu);
	pr->cpu_node = hl_topology_cpu_node(pr->cpu);
	pr->prio = hl_thread_prioritized();
	REQUIRE(hl_topology_set_thread_node(3) == 0, "peer: set_thread_node(3)");
	REQUIRE(hl_thread_set_prioritized(1) == 0, "peer: set_prioritized(1)");
	pr->placed_node = hl_topology_node();
	REQUIRE(pthread_create(&th, NULL, child_main, pr) == 0, "pthread_create");
	pthread_join(th, NULL);
	return NULL;
}

static void run_peer(struct peer *pr)
{
	pthread_t th;
	memset(pr, 0, sizeof(*pr));
	REQUIRE(pthread_create(&th, NULL, peer_main, pr) == 0, "pthread_create");
	pthread_join(th, NULL);
}

static void test_placement(void)
{
	struct peer pr;
	int rc;

	CHECK_RC(hl_topology_set("virtual:2"), 0);
	check_unplaced_node("virtual:2, before any placement");
	CHECK_RC(hl_topology_set_thread_node(1), 0);
	CHECK(hl_topology_node() == 1, "placed on 1, node() = %d", hl_topology_node());
	CHECK_RC(hl_topology_set_thread_node(0), 0);
	CHECK(hl_topology_node() == 0, "placed on 0, node() = %d", hl_topology_node());
	CHECK_RC(hl_topology_set_thread_node(1023), 0);
	CHECK(hl_topology_node() == 1023, "placed on 1023 (past nodes()), node() = %d",
	      hl_topology_node());
	static const int bad[] = { -2, 1024, INT_MAX, INT_MIN };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		rc = hl_topology_set_thread_node(bad[i]);
		CHECK(rc == EINVAL, "set_thread_node(%d) returned %d, expected EINVAL", bad[i], rc);
		CHECK(hl_topology_node() == 1023, "after set_thread_node(%d) failed, node() = %d",
		      bad[i], hl_topology_node());
	}
	CHECK_RC(hl_topology_set_thread_node(1), 0);
	/* The placement holds across a change of source. */
	CHECK_RC(hl_topology_set("virtual:7"), 0);
	CHECK(hl_topology_node() == 1, "placed on 1, after virtual:7 node() = %d",
	      hl_topology_node());
	CHECK_RC(hl_topology_set("virtual:2"), 0);

	/* Per-thread: main is placed on 1; a new thread is not placed. */
	CHECK_RC(hl_thread_set_prioritized(1), 0);
	run_peer(&pr);
	CHECK(pr.node == pr.cpu_node, "a new thread (main placed on 1) sees node %d, its CPU "
	      "%d is on %d", pr.node, pr.cpu, pr.cpu_node);
	CHECK(pr.prio == 0, "a new thread (main prioritized) is prioritized: %d", pr.prio);
	CHECK(pr.placed_node == 3, "the peer placed itself on 3 and sees %d", pr.placed_node);
	CHECK(pr.child_node == -100, "a thread started by a placed thread sees node %d, not "
	      "its CPU's", pr.child_node);
	CHECK(hl_topology_node() == 1, "main placed on 1 sees %d after a peer placed itself "
	      "on 3", hl_topology_node());
	CHECK(hl_thread_prioritized() == 1, "main prioritized, after a peer set itself: %d",
	      hl_thread_prioritized());

	CHECK_RC(hl_topology_set_thread_node(-1), 0);
	check_unplaced_node("unplaced again (-1)");
	CHECK_RC(hl_topology_set_thread_node(-1), 0);  /* unplacing twice is fine */
	check_unplaced_node("unplaced twice");

	/* Prioritized. */
	CHECK(hl_thread_prioritized() == 1, "prioritized %d, expected 1", hl_thread_prioritized());
	CHECK_RC(hl_thread_set_prioritized(2), EINVAL);
	CHECK(hl_thread_prioritized() == 1, "after set_prioritized(2) failed: %d",
	      hl_thread_prioritized());
	CHECK_RC(hl_thread_set_prioritized(0), 0);
	CHECK(hl_thread_prioritized() == 0, "prioritized %d after (0)", hl_thread_prioritized());
	CHECK_RC(hl_thread_set_prioritized(-1), EINVAL);
	CHECK(hl_thread_prioritized() == 0, "after set_prioritized(-1) failed: %d",
	      hl_thread_prioritized());
	printf("placement and priority: per-thread, EINVAL out of range, -1 unplaces\n");
}

/* ---- mutex queue policy ---- */

struct holder {
	hl_mutex_t *m;
	atomic_int state;       /* 1: holds it, 2: told to release */
	int rc;
};

static void *holder_main(void *p)
{
	struct holder *h = p;
	h->rc = hl_mutex_lock(h->m);
	atomic_store(&h->state, 1);
	while (atomic_load(&h->state) != 2)
		sleep_ns(100 * NSEC_PER_USEC);
	if (!h->rc)
		h->rc = hl_mutex_unlock(h->m);
	return NULL;
}

struct waiter {
	hl_mutex_t *m;
	atomic_uint tid;
	int rc;
};

static void *waiter_main(void *p)
{
	struct waiter *w = p;
	atomic_store(&w->tid, test_gettid());
	w->rc = hl_mutex_lock(w->m);
	if (!w->rc)
		w->rc = hl_mutex_unlock(w->m);
	return NULL;
}

static void test_mutex_queue(void)
{
	hl_mutex_t m = HL_MUTEX_INIT;
	hl_mutex_t z;
	static hl_mutex_t zs;   /* all-zero static */
	struct holder h = { .m = &m };
	struct waiter w = { .m = &m };
	pthread_t th, tw;
	struct timespec dl;

	memset(&z, 0, sizeof(z));
	CHECK_RC(hl_topology_set("virtual:1"), 0);
	CHECK(hl_mutex_queue(&m) == HL_QUEUE_FIFO, "HL_MUTEX_INIT with 1 node: policy %d",
	      hl_mutex_queue(&m));
	CHECK(hl_mutex_queue(&z) == HL_QUEUE_FIFO, "zeroed with 1 node: policy %d",
	      hl_mutex_queue(&z));
	CHECK(hl_mutex_queue(&zs) == HL_QUEUE_FIFO, "static zero with 1 node: policy %d",
	      hl_mutex_queue(&zs));
	CHECK_RC(hl_topology_set("virtual:2"), 0);
	CHECK(hl_mutex_queue(&m) == HL_QUEUE_CNA, "HL_MUTEX_INIT with virtual:2: policy %d",
	      hl_mutex_queue(&m));
	CHECK(hl_mutex_queue(&zs) == HL_QUEUE_CNA, "static zero with virtual:2: policy %d",
	      hl_mutex_queue(&zs));
	CHECK_RC(hl_topology_set("numa"), 0);
	if (hl_topology_nodes() == 1)
		CHECK(hl_mutex_queue(&m) == HL_QUEUE_FIFO, "back to numa (1 node): policy %d",
		      hl_mutex_queue(&m));

	/* Explicit policies hold whatever the topology. */
	CHECK_RC(hl_topology_set("virtual:2"), 0);
	CHECK_RC(hl_mutex_set_queue(&m, HL_QUEUE_FIFO), 0);
	CHECK(hl_mutex_queue(&m) == HL_QUEUE_FIFO, "set FIFO with 2 nodes: %d", hl_mutex_queue(&m));
	CHECK_RC(hl_topology_set("virtual:1"), 0);
	CHECK_RC(hl_mutex_set_queue(&m, HL_QUEUE_CNA), 0);
	CHECK(hl_mutex_queue(&m) == HL_QUEUE_CNA, "set CNA with 1 node: %d", hl_mutex_queue(&m));
	CHECK_RC(hl_mutex_set_queue(&m, (hl_queue_policy_t)3), EINVAL);
	CHECK(hl_mutex_queue(&m) == HL_QUEUE_CNA, "after EINVAL (3): %d", hl_mutex_queue(&m));
	CHECK_RC(hl_mutex_set_queue(&m, (hl_queue_policy_t)-1), EINVAL);
	CHECK(hl_mutex_queue(&m) == HL_QUEUE_CNA, "after EINVAL (-1): %d", hl_mutex_queue(&m));
	CHECK_RC(hl_mutex_set_queue(&m, HL_QUEUE_DEFAULT), 0);
	CHECK(hl_mutex_queue(&m) == HL_QUEUE_FIFO, "DEFAULT with 1 node: %d", hl_mutex_queue(&m));
	CHECK_RC(hl_topology_set("virtual:2"), 0);
	CHECK(hl_mutex_queue(&m) == HL_QUEUE_CNA, "DEFAULT with 2 nodes: %d", hl_mutex_queue(&m));

	/* EBUSY while locked by the caller. */
	CHECK_RC(hl_mutex_set_queue(&m, HL_QUEUE_CNA), 0);
	CHECK_RC(hl_mutex_lock(&m), 0);
	CHECK_RC(hl_mutex_set_queue(&m, HL_QUEUE_FIFO), EBUSY);
	CHECK_RC(hl_mutex_set_queue(&m, (hl_queue_policy_t)7), EINVAL);
	CHECK(hl_mutex_queue(&m) == HL_QUEUE_CNA, "after EBUSY: %d", hl_mutex_queue(&m));
	CHECK_RC(hl_mutex_unlock(&m), 0);

	/* EBUSY while locked by another thread, and with a waiter queued. */
	REQUIRE(pthread_create(&th, NULL, holder_main, &h) == 0, "pthread_create");
	while (atomic_load(&h.state) != 1)
		sleep_ns(100 * NSEC_PER_USEC);
	CHECK_RC(hl_mutex_set_queue(&m, HL_QUEUE_FIFO), EBUSY);
	REQUIRE(pthread_create(&tw, NULL, waiter_main, &w) == 0, "pthread_create");
	{
		/* Until the waiter sleeps in lock() (queued, parked). */
		int64_t end = now_ns() + 10 * NSEC_PER_SEC;
		while (!atomic_load(&w.tid) || thread_state(atomic_load(&w.tid)) != 'S') {
			REQUIRE(now_ns() < end, "the waiter did not block");
			sleep_ns(200 * NSEC_PER_USEC);
		}
	}
	CHECK_RC(hl_mutex_set_queue(&m, HL_QUEUE_FIFO), EBUSY);
	/* A timed lock of the CNA mutex from here times out. */
	dl = deadline_in(CLOCK_MONOTONIC, 5 * NSEC_PER_MSEC);
	CHECK_RC(hl_mutex_timedlock(&m, CLOCK_MONOTONIC, &dl), ETIMEDOUT);
	atomic_store(&h.state, 2);
	pthread_join(th, NULL);
	pthread_join(tw, NULL);
	CHECK(h.rc == 0 && w.rc == 0, "holder %d, waiter %d", h.rc, w.rc);
	CHECK(hl_mutex_queue(&m) == HL_QUEUE_CNA, "after the EBUSYs: %d", hl_mutex_queue(&m));
	CHECK_RC(hl_mutex_set_queue(&m, HL_QUEUE_FIFO), 0);
	CHECK(hl_mutex_queue(&m) == HL_QUEUE_FIFO, "set FIFO once free: %d", hl_mutex_queue(&m));
	CHECK_RC(hl_mutex_destroy(&m), 0);
	CHECK_RC(hl_topology_set("numa"), 0);
	printf("mutex queue policy: DEFAULT follows the topology; EINVAL, EBUSY (locked, "
	       "queued waiter)\n");
}

/* ---- config ---- */

static void test_config(void)
{
	hl_config_t c0, c, r;
	hl_config_get(&c0);
	CHECK(c0.cna_threshold_ns == 1000000, "default cna_threshold_ns %llu, expected 1 ms",
	      (unsigned long long)c0.cna_threshold_ns);
	c = c0;
	c.cna_threshold_ns = 250000;
	CHECK_RC(hl_config_set(&c), 0);
	hl_config_get(&r);
	CHECK(r.cna_threshold_ns == 250000 && r.spin_ns == c0.spin_ns &&
	      r.handoff_ns == c0.handoff_ns, "set 250 us: read %llu",
	      (unsigned long long)r.cna_threshold_ns);
	c.cna_threshold_ns = HL_CNA_THRESHOLD_NS_MAX;
	CHECK_RC(hl_config_set(&c), 0);
	c.cna_threshold_ns = 0;
	CHECK_RC(hl_config_set(&c), 0);
	hl_config_get(&r);
	CHECK(r.cna_threshold_ns == 0, "set 0: read %llu", (unsigned long long)r.cna_threshold_ns);
	c.cna_threshold_ns = HL_CNA_THRESHOLD_NS_MAX + 1;
	c.spin_ns = 1234;
	CHECK_RC(hl_config_set(&c), EINVAL);
	hl_config_get(&r);
	CHECK(r.cna_threshold_ns == 0 && r.spin_ns == c0.spin_ns,
	      "after EINVAL: threshold %llu spin %llu", (unsigned long long)r.cna_threshold_ns,
	      (unsigned long long)r.spin_ns);
	CHECK_RC(hl_config_set(&c0), 0);
	printf("config: cna_threshold_ns default 1 ms, range checked\n");
}

/* ---- environment variants ---- */

struct expect {
	const char *topology;
	int nodes;
	const char *queue;
	long long threshold;
	const char *warnings;
};

static int env_main(const struct expect *e)
{
	char buf[64];
	hl_mutex_t m = HL_MUTEX_INIT;
	hl_config_t c;

	/* Nothing of the library has run yet: these are the start values. */
	hl_topology_get(buf, sizeof(buf));
	hl_config_get(&c);
	printf("environment: HOTLOCK_TOPOLOGY=%s HOTLOCK_QUEUE=%s HOTLOCK_CNA_THRESHOLD_NS=%s: "
	       "source %s, %d nodes, all-zero mutex %s, cna_threshold_ns %llu\n",
	       getenv("HOTLOCK_TOPOLOGY") ? getenv("HOTLOCK_TOPOLOGY") : "(unset)",
	       getenv("HOTLOCK_QUEUE") ? getenv("HOTLOCK_QUEUE") : "(unset)",
	       getenv("HOTLOCK_CNA_THRESHOLD_NS") ? getenv("HOTLOCK_CNA_THRESHOLD_NS") : "(unset)",
	       buf, hl_topology_nodes(),
	       hl_mutex_queue(&m) == HL_QUEUE_CNA ? "cna" :
	       hl_mutex_queue(&m) == HL_QUEUE_FIFO ? "fifo" : "?",
	       (unsigned long long)c.cna_threshold_ns);
	if (e->topology)
		CHECK(strcmp(buf, e->topology) == 0, "source at start %s, expected %s", buf,
		      e->topology);
	if (e->nodes)
		CHECK(hl_topology_nodes() == e->nodes, "nodes at start %d, expected %d",
		      hl_topology_nodes(), e->nodes);
	if (e->queue) {
		hl_queue_policy_t want = strcmp(e->queue, "cna") == 0 ? HL_QUEUE_CNA : HL_QUEUE_FIFO;
		CHECK(hl_mutex_queue(&m) == want, "all-zero mutex resolves to %d, expected %s",
		      hl_mutex_queue(&m), e->queue);
		if (getenv("HOTLOCK_QUEUE")) {
			/* HOTLOCK_QUEUE holds whatever the topology is now. */
			CHECK_RC(hl_topology_set("virtual:1"), 0);
			CHECK(hl_mutex_queue(&m) == want, "virtual:1: resolves to %d, expected %s",
			      hl_mutex_queue(&m), e->queue);
			CHECK_RC(hl_topology_set("virtual:4"), 0);
			CHECK(hl_mutex_queue(&m) == want, "virtual:4: resolves to %d, expected %s",
			      hl_mutex_queue(&m), e->queue);
		} else {
			/* Without it the topology decides, at once. */
			CHECK_RC(hl_topology_set("virtual:1"), 0);
			CHECK(hl_mutex_queue(&m) == HL_QUEUE_FIFO, "virtual:1: resolves to %d",
			      hl_mutex_queue(&m));
			CHECK_RC(hl_topology_set("virtual:4"), 0);
			CHECK(hl_mutex_queue(&m) == HL_QUEUE_CNA, "virtual:4: resolves to %d",
			      hl_mutex_queue(&m));
		}
		/* An explicit policy still wins over the environment. */
		hl_queue_policy_t other = want == HL_QUEUE_CNA ? HL_QUEUE_FIFO : HL_QUEUE_CNA;
		CHECK_RC(hl_mutex_set_queue(&m, other), 0);
		CHECK(hl_mutex_queue(&m) == other, "explicit %d over HOTLOCK_QUEUE: %d", other,
		      hl_mutex_queue(&m));
		/* ... and the mutex works. */
		CHECK_RC(hl_mutex_lock(&m), 0);
		CHECK_RC(hl_mutex_unlock(&m), 0);
	}
	if (e->threshold >= 0)
		CHECK((long long)c.cna_threshold_ns == e->threshold,
		      "cna_threshold_ns at start %llu, expected %lld",
		      (unsigned long long)c.cna_threshold_ns, e->threshold);
	CHECK_RC(hl_mutex_destroy(&m), 0);
	return test_finish("test_topology (environment)");
}

/* Re-runs this program (argv without --expect-warnings) with the same
 * environment, its stderr captured: it must pass and warn about each name. */
static int warnings_main(const struct expect *e, int argc, char **argv)
{
	int fds[2], status;
	pid_t pid;
	char out[16384];
	size_t used = 0;
	char *args[32];
	int k = 0;
	char names[256], *save, *name;

	REQUIRE(argc < 30, "too many arguments");
	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--expect-warnings") == 0) {
			i++;
			continue;
		}
		args[k++] = argv[i];
	}
	args[k] = NULL;
	REQUIRE(pipe(fds) == 0, "pipe");
	fflush(stdout);
	pid = fork();
	REQUIRE(pid >= 0, "fork");
	if (pid == 0) {
		close(fds[0]);
		dup2(fds[1], 2);
		close(fds[1]);
		execv("/proc/self/exe", args);
		_exit(127);
	}
	close(fds[1]);
	for (;;) {
		ssize_t n = read(fds[0], out + used, sizeof(out) - 1 - used);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		used += (size_t)n;
		if (used == sizeof(out) - 1)
			break;
	}
	out[used] = 0;
	close(fds[0]);
	REQUIRE(reap_with_timeout(pid, 20000, &status) == 0, "the child hung");
	printf("child's stderr:\n%s", out);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child failed (status 0x%x)",
	      status);
	snprintf(names, sizeof(names), "%s", e->warnings);
	for (name = strtok_r(names, ",", &save); name; name = strtok_r(NULL, ",", &save))
		CHECK(strstr(out, name) != NULL, "no warning about %s=%s on stderr", name,
		      getenv(name) ? getenv(name) : "(unset)");
	return test_finish("test_topology (warnings)");
}

int main(int argc, char **argv)
{
	struct expect e = { .threshold = -1 };
	bool env_mode = false;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		REQUIRE(i + 1 < argc, "%s needs a value", a);
		env_mode = true;
		if (strcmp(a, "--expect-topology") == 0)
			e.topology = argv[++i];
		else if (strcmp(a, "--expect-nodes") == 0)
			e.nodes = atoi(argv[++i]);
		else if (strcmp(a, "--expect-queue") == 0)
			e.queue = argv[++i];
		else if (strcmp(a, "--expect-threshold") == 0)
			e.threshold = atoll(argv[++i]);
		else if (strcmp(a, "--expect-warnings") == 0)
			e.warnings = argv[++i];
		else
			REQUIRE(false, "unknown argument %s", a);
	}
	if (e.warnings)
		return warnings_main(&e, argc, argv);
	if (env_mode)
		return env_main(&e);

	/* The start state, with no HOTLOCK_* variable set. */
	find_online_cpus();
	printf("test_topology: %d online CPUs, source at start %s with %d node(s); "
	       "hl_cpu_node() reads %s\n", n_online, topo_str(), hl_topology_nodes(),
	       hl_cpu_node_source());
	if (!getenv("HOTLOCK_TOPOLOGY"))
		CHECK(strcmp(topo_str(), "numa") == 0, "default source %s, expected numa",
		      topo_str());
	if (!getenv("HOTLOCK_CNA_THRESHOLD_NS"))
		test_config();
	test_parsing();
	test_virtual();
	test_numa();
	test_llc();
	test_placement();
	if (!getenv("HOTLOCK_QUEUE"))
		test_mutex_queue();
	return test_finish("test_topology");
}
