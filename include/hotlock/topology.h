/* SPDX-License-Identifier: MIT */
/* hotlock: the machine's topology as the NUMA-aware waiter queue (CNA) sees
 * it.  Every thread counts as being on one node; a lock whose queue uses the
 * CNA policy prefers to pass the lock to a waiter on the holder's node.
 *
 * Sources (HOTLOCK_TOPOLOGY, or hl_topology_set):
 *   numa       the kernel's NUMA nodes (the default);
 *   llc        last-level-cache domains (sysfs cache index of the highest
 *              level), numbered in order of their lowest CPU: on CPUs whose
 *              cores split into several L3 domains a handoff across domains
 *              costs like a remote one;
 *   virtual:N  CPU c is on node c mod N (1 <= N <= HL_TOPOLOGY_MAX_NODES),
 *              for tests and experiments on small machines.
 * Whatever the source, a thread may be placed on a node explicitly with
 * hl_topology_set_thread_node(), whatever CPU it runs on. */
#ifndef HOTLOCK_TOPOLOGY_H
#define HOTLOCK_TOPOLOGY_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HL_TOPOLOGY_MAX_NODES 1024

/* Chooses the source: "numa", "llc" or "virtual:N".  EINVAL for anything
 * else; ENOENT when the source cannot be read on this machine (no cache
 * information in sysfs for "llc"); the topology is unchanged then.  Takes
 * effect for waits that start afterwards. */
int hl_topology_set(const char *spec);
/* Writes the source in effect ("numa", "llc", "virtual:4") into buf; returns
 * the length snprintf would have written. */
int hl_topology_get(char *buf, size_t len);
/* The number of nodes of the source in effect (at least 1).  hl_mutex uses
 * the CNA queue by default when there is more than one. */
int hl_topology_nodes(void);
/* The node of CPU cpu under the source in effect; -1 if there is no such
 * CPU. */
int hl_topology_cpu_node(int cpu);
/* The node the calling thread counts as on: the one it was placed on with
 * hl_topology_set_thread_node, else the node of the CPU it runs on now. */
int hl_topology_node(void);

/* Places the calling thread on node (0 <= node < HL_TOPOLOGY_MAX_NODES) for
 * every later wait, whatever CPU it runs on; -1 goes back to the CPU's node.
 * EINVAL otherwise. */
int hl_topology_set_thread_node(int node);

/* Prioritized waiters: the CNA queue never moves the waits of a prioritized
 * thread behind waiters of other nodes.  SCHED_FIFO and SCHED_RR threads are
 * prioritized always; hl_thread_set_prioritized(1) makes the calling thread
 * so as well, (0) undoes it.  EINVAL for other values. */
int hl_thread_set_prioritized(int on);
/* 1 if the calling thread asked to be prioritized, else 0. */
int hl_thread_prioritized(void);

/* The NUMA node of the CPU the caller runs on (whatever the source above):
 * from rseq's node_id when glibc registered rseq and the kernel fills
 * node_id, getcpu otherwise. */
int hl_cpu_node(void);
/* "rseq" or "getcpu": where hl_cpu_node() reads the node. */
const char *hl_cpu_node_source(void);

#ifdef __cplusplus
}
#endif
#endif
