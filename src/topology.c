/* SPDX-License-Identifier: MIT */
/* The topology: which node each thread counts as on, for the CNA waiter
 * queue (queue.c), from one of three sources (include/hotlock/topology.h):
 *
 *   source      node of CPU c                       nodes
 *   ----------  ----------------------------------  --------------------------
 *   numa        the kernel's NUMA node (rseq         online NUMA nodes (sysfs
 *               node_id, or getcpu)                  node/online), at least 1
 *   llc         the last-level-cache domain of c:    distinct domains
 *               domains are numbered in the order
 *               of their lowest CPU (sysfs cpuN/cache, the highest level
 *               that is not an instruction cache, shared_cpu_list)
 *   virtual:N   c mod N                              N
 *
 * The source in effect is one word (topology.h) so that the hot lookup is a
 * TLS load (a thread placed on a node explicitly), else one load of that
 * word and of the CPU number from glibc's rseq area (sched_getcpu), plus
 * one table load for llc (behind pthread_once's one-load fast path).  The per-CPU tables are read from sysfs once,
 * when first needed, and never change afterwards (CPUs that come online
 * later count as node 0 of llc).
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/rseq.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <hotlock/topology.h>

#include "topology.h"

#ifndef AT_RSEQ_FEATURE_SIZE
#define AT_RSEQ_FEATURE_SIZE 27
#endif

_Atomic uint32_t hl__topology = HL_TOPO_NUMA | 1u << 8;
__thread uint32_t hl__thread_node __attribute__((tls_model("initial-exec")));
__thread bool hl__thread_prio __attribute__((tls_model("initial-exec")));

#define MAX_CPUS 8192

/* ---- NUMA node of the calling CPU ------------------------------------------
 * glibc (2.35+) registers an rseq area per thread at __rseq_offset from the
 * thread pointer; the kernel keeps cpu_id (offset 4) and, when
 * AT_RSEQ_FEATURE_SIZE reaches past it, node_id (offset 20) up to date on
 * every return to user space.  glibc 2.36's __rseq_size says 20 (the fields
 * it knows) although it registers the full 32-byte area, so node_id is
 * trusted from the kernel's feature size, and checked once against getcpu. */
#define RSEQ_CPU_ID_OFFSET 4
#define RSEQ_NODE_ID_OFFSET 20

enum { NODE_UNKNOWN, NODE_GETCPU, NODE_RSEQ };
static _Atomic int node_source;         /* relaxed: idempotent probe */

#if defined(__has_builtin)
#if __has_builtin(__builtin_thread_pointer)
#define HAVE_THREAD_POINTER 1
#endif
#endif

#ifdef HAVE_THREAD_POINTER
static inline const volatile uint32_t *rseq_field(unsigned offset)
{
	return (const volatile uint32_t *)((char *)__builtin_thread_pointer() +
					   __rseq_offset + offset);
}
#endif

/* The node of the calling CPU by glibc's getcpu, which reads the vDSO
 * (no system call on x86-64, so a lock call may make it); errno kept. */
static int node_getcpu(void)
{
	unsigned cpu, node;
	int saved = errno;
	int r = getcpu(&cpu, &node);
	errno = saved;
	return r == 0 ? (int)node : 0;
}

static int probe_node_source(void)
{
	int src = NODE_GETCPU;
#ifdef HAVE_THREAD_POINTER
	if (__rseq_size > 0 && getauxval(AT_RSEQ_FEATURE_SIZE) >= RSEQ_NODE_ID_OFFSET + 4) {
		/* The area is live when cpu_id holds a real CPU (it reads
		 * -1/-2 when unregistered) and node_id agrees with getcpu. */
		uint32_t cpu = *rseq_field(RSEQ_CPU_ID_OFFSET);
		int node = node_getcpu();
		if (cpu < (uint32_t)INT_MAX && (int)*rseq_field(RSEQ_NODE_ID_OFFSET) == node)
			src = NODE_RSEQ;
	}
#endif
	hl__store(&node_source, src, HL_RELAXED);
	return src;
}

int hl_cpu_node(void)
{
	int src = hl__load(&node_source, HL_RELAXED);
	if (hl__unlikely(src == NODE_UNKNOWN))
		src = probe_node_source();
#ifdef HAVE_THREAD_POINTER
	if (src == NODE_RSEQ)
		return (int)*rseq_field(RSEQ_NODE_ID_OFFSET);
#endif
	return node_getcpu();
}

const char *hl_cpu_node_source(void)
{
	int src = hl__load(&node_source, HL_RELAXED);
	if (src == NODE_UNKNOWN)
		src = probe_node_source();
	return src == NODE_RSEQ ? "rseq" : "getcpu";
}

/* The CPU the caller runs on: glibc reads it from the rseq area (no
 * syscall) when rseq is registered. */
static inline uint32_t current_cpu(void)
{
	int c = sched_getcpu();
	return c < 0 ? 0 : (uint32_t)c;
}

/* ---- the per-CPU tables, read from sysfs once ------------------------------ */

static struct {
	int ncpus;              /* possible CPUs (table size) */
	int16_t *numa;          /* CPU -> NUMA node, -1 if unknown */
	int numa_nodes;
	uint16_t *llc;          /* CPU -> llc domain */
	int llc_nodes;          /* 0: no cache information */
} maps;
static pthread_once_t maps_once = PTHREAD_ONCE_INIT;

static bool read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	bool ok = fgets(buf, (int)len, f) != NULL;
	fclose(f);
	if (ok)
		buf[strcspn(buf, "\n")] = 0;
	return ok;
}

/* Calls fn for every CPU of a sysfs list such as "0-3,8,10-11"; false if
 * the text is not such a list. */
static bool cpulist_each(const char *s, void (*fn)(int cpu, void *arg), void *arg)
{
	while (*s) {
		char *end;
		long a = strtol(s, &end, 10), b = a;
		if (end == s || a < 0)
			return false;
		if (*end == '-') {
			s = end + 1;
			b = strtol(s, &end, 10);
			if (end == s || b < a)
				return false;
		}
		for (long c = a; c <= b && c < MAX_CPUS; c++)
			fn((int)c, arg);
		s = end;
		if (*s == ',')
			s++;
		else if (*s)
			return false;
	}
	return true;
}

static void note_max(int cpu, void *arg)
{
	int *max = arg;
	if (cpu > *max)
		*max = cpu;
}

static void count_one(int cpu, void *arg)
{
	(void)cpu;
	++*(int *)arg;
}

struct set_node { int16_t *map; int node; };
static void set_node(int cpu, void *arg)
{
	struct set_node *s = arg;
	if (cpu < maps.ncpus)
		s->map[cpu] = (int16_t)s->node;
}

/* The llc domain key of cpu: the lowest CPU sharing its last-level cache,
 * or -1 without cache information. */
static int llc_key(int cpu)
{
	char path[128], buf[256];
	int best_level = -1, key = -1;
	for (int idx = 0; idx < 16; idx++) {
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/cache/index%d/level",
			 cpu, idx);
		if (!read_line(path, buf, sizeof(buf)))
			break;
		int level = atoi(buf);
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/cache/index%d/type",
			 cpu, idx);
		if (read_line(path, buf, sizeof(buf)) && strcmp(buf, "Instruction") == 0)
			continue;
		snprintf(path, sizeof(path),
			 "/sys/devices/system/cpu/cpu%d/cache/index%d/shared_cpu_list", cpu, idx);
		if (level <= best_level || !read_line(path, buf, sizeof(buf)))
			continue;
		/* The lowest CPU of the list is its first number. */
		char *end;
		long lowest = strtol(buf, &end, 10);
		if (end == buf || lowest < 0 || lowest >= MAX_CPUS)
			continue;
		best_level = level;
		key = (int)lowest;
	}
	return key;
}

static void read_maps(void)
{
	char buf[4096], path[128];
	int max = 0;
	if (read_line("/sys/devices/system/cpu/possible", buf, sizeof(buf)))
		cpulist_each(buf, note_max, &max);
	int conf = (int)sysconf(_SC_NPROCESSORS_CONF);
	if (conf - 1 > max)
		max = conf - 1;
	maps.ncpus = max + 1 > MAX_CPUS ? MAX_CPUS : max + 1;
	maps.numa = malloc(sizeof(*maps.numa) * (size_t)maps.ncpus);
	maps.llc = calloc((size_t)maps.ncpus, sizeof(*maps.llc));
	int *keys = malloc(sizeof(int) * (size_t)maps.ncpus);
	if (!maps.numa || !maps.llc || !keys) {
		free(maps.numa);
		free(maps.llc);
		free(keys);
		maps.numa = NULL;
		maps.llc = NULL;
		maps.ncpus = 0;
		return;
	}

	/* NUMA: node<k>/cpulist for every online node. */
	for (int c = 0; c < maps.ncpus; c++)
		maps.numa[c] = -1;
	maps.numa_nodes = 0;
	if (read_line("/sys/devices/system/node/online", buf, sizeof(buf))) {
		int online_max = -1;
		cpulist_each(buf, note_max, &online_max);
		for (int k = 0; k <= online_max; k++) {
			snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/cpulist", k);
			struct set_node s = { maps.numa, k };
			if (read_line(path, buf, sizeof(buf)) && cpulist_each(buf, set_node, &s))
				maps.numa_nodes++;
		}
	}
	if (maps.numa_nodes == 0) {     /* a kernel without NUMA: one node */
		maps.numa_nodes = 1;
		for (int c = 0; c < maps.ncpus; c++)
			maps.numa[c] = 0;
	}

	/* llc: number the domain keys in increasing order. */
	for (int c = 0; c < maps.ncpus; c++)
		keys[c] = llc_key(c);
	int nodes = 0;
	for (int key = 0; key < maps.ncpus; key++) {
		bool used = false;
		for (int c = 0; c < maps.ncpus; c++)
			if (keys[c] == key) {
				maps.llc[c] = (uint16_t)nodes;
				used = true;
			}
		nodes += used;
	}
	maps.llc_nodes = nodes;
	free(keys);
}

static void ensure_maps(void)
{
	pthread_once(&maps_once, read_maps);
}

/* How many NUMA nodes are online: one small file, read at load time so that
 * hl_mutex's default policy is right from the first lock. */
static int online_numa_nodes(void)
{
	char buf[256];
	int n = 0;
	if (read_line("/sys/devices/system/node/online", buf, sizeof(buf)))
		cpulist_each(buf, count_one, &n);
	return n > 0 ? n : 1;
}

uint32_t hl__topology_cpu_node_slow(uint32_t topo)
{
	switch (topo & 0xff) {
	case HL_TOPO_VIRTUAL:
		return current_cpu() % (topo >> 8);
	case HL_TOPO_LLC: {
		/* The word can only say llc after hl_topology_set read the
		 * tables; pthread_once's fast path (one acquire load) makes
		 * them visible to this thread too. */
		ensure_maps();
		uint32_t cpu = current_cpu();
		return cpu < (uint32_t)maps.ncpus ? maps.llc[cpu] : 0;
	}
	default: {
		int node = hl_cpu_node();
		return node < 0 ? 0 : (uint32_t)node;
	}
	}
}

/* ---- the API ---------------------------------------------------------------- */

/* Parses spec into a topology word; EINVAL or ENOENT. */
static int parse_spec(const char *spec, uint32_t *out)
{
	if (!spec)
		return EINVAL;
	if (strcmp(spec, "numa") == 0) {
		*out = HL_TOPO_NUMA | (uint32_t)online_numa_nodes() << 8;
		return 0;
	}
	if (strcmp(spec, "llc") == 0) {
		ensure_maps();
		if (maps.llc_nodes == 0)
			return ENOENT;
		*out = HL_TOPO_LLC | (uint32_t)maps.llc_nodes << 8;
		return 0;
	}
	if (strncmp(spec, "virtual:", 8) == 0) {
		const char *s = spec + 8;
		char *end;
		errno = 0;
		long n = strtol(s, &end, 10);
		if (end == s || *end || errno || *s == '-' || *s == '+' || n < 1 ||
		    n > HL_TOPOLOGY_MAX_NODES)
			return EINVAL;
		*out = HL_TOPO_VIRTUAL | (uint32_t)n << 8;
		return 0;
	}
	return EINVAL;
}

int hl_topology_set(const char *spec)
{
	uint32_t topo;
	int err = parse_spec(spec, &topo);
	if (!err)
		hl__store(&hl__topology, topo, HL_RELAXED);
	return err;
}

int hl_topology_get(char *buf, size_t len)
{
	uint32_t topo = hl__load(&hl__topology, HL_RELAXED);
	switch (topo & 0xff) {
	case HL_TOPO_VIRTUAL:
		return snprintf(buf, len, "virtual:%u", topo >> 8);
	case HL_TOPO_LLC:
		return snprintf(buf, len, "llc");
	default:
		return snprintf(buf, len, "numa");
	}
}

int hl_topology_nodes(void)
{
	return (int)hl__topo_nodes();
}

int hl_topology_cpu_node(int cpu)
{
	ensure_maps();
	if (cpu < 0 || cpu >= maps.ncpus)
		return -1;
	uint32_t topo = hl__load(&hl__topology, HL_RELAXED);
	switch (topo & 0xff) {
	case HL_TOPO_VIRTUAL:
		return cpu % (int)(topo >> 8);
	case HL_TOPO_LLC:
		return maps.llc[cpu];
	default:
		return maps.numa[cpu] < 0 ? 0 : maps.numa[cpu];
	}
}

int hl_topology_node(void)
{
	return (int)hl__topo_node();
}

int hl_topology_set_thread_node(int node)
{
	if (node < -1 || node >= HL_TOPOLOGY_MAX_NODES)
		return EINVAL;
	hl__thread_node = (uint32_t)(node + 1);
	return 0;
}

int hl_thread_set_prioritized(int on)
{
	if (on != 0 && on != 1)
		return EINVAL;
	hl__thread_prio = on;
	return 0;
}

int hl_thread_prioritized(void)
{
	return hl__thread_prio;
}

__attribute__((constructor)) static void topology_init(void)
{
	hl__store(&hl__topology, HL_TOPO_NUMA | (uint32_t)online_numa_nodes() << 8, HL_RELAXED);
	const char *spec = getenv("HOTLOCK_TOPOLOGY");
	if (!spec || !*spec)
		return;
	int err = hl_topology_set(spec);
	if (err)
		fprintf(stderr, "hotlock: ignoring HOTLOCK_TOPOLOGY=%s (%s)\n", spec,
			err == ENOENT ? "no last-level-cache information in sysfs"
				      : "expected numa, llc or virtual:N with 1 <= N <= 1024");
}
