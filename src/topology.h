/* SPDX-License-Identifier: MIT */
/* The topology, inside the library: the node of the calling thread, cheap
 * enough for every slow path (a TLS load, then one or two loads from glibc's
 * rseq area, which the kernel keeps current). */
#ifndef HOTLOCK_TOPOLOGY_INTERNAL_H
#define HOTLOCK_TOPOLOGY_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "atomics.h"
#include "internal.h"

enum { HL_TOPO_NUMA = 0, HL_TOPO_LLC = 1, HL_TOPO_VIRTUAL = 2 };

/* The source in effect: kind in bits 0-7, number of nodes from bit 8.
 * One word, so a reader never pairs one source's kind with another's node
 * count.  Relaxed everywhere: a node is a hint for ordering waiters, it
 * publishes nothing (the maps it indexes are written before the first
 * store that selects them, under a pthread_once: see topology.c). */
HL_HIDDEN extern _Atomic uint32_t hl__topology;
/* Per thread: 1 + the node set with hl_topology_set_thread_node, 0 if none;
 * and whether the thread asked to be prioritized. */
HL_HIDDEN extern __thread uint32_t hl__thread_node __attribute__((tls_model("initial-exec")));
HL_HIDDEN extern __thread bool hl__thread_prio __attribute__((tls_model("initial-exec")));

HL_HIDDEN uint32_t hl__topology_cpu_node_slow(uint32_t topo);

/* The node the calling thread counts as on (hl_topology_node()). */
static inline uint32_t hl__topo_node(void)
{
	uint32_t pinned = hl__thread_node;
	if (pinned)
		return pinned - 1;
	return hl__topology_cpu_node_slow(hl__load(&hl__topology, HL_RELAXED));
}

static inline uint32_t hl__topo_nodes(void)
{
	return hl__load(&hl__topology, HL_RELAXED) >> 8;
}

#endif
