/* SPDX-License-Identifier: MIT */
/* The waiter node: the element of the node arena (thread.c).
 *
 * Its layout lives here, with the thread records, because the arena holds
 * nodes: thread.c allocates them, hands one out per nesting level and
 * recycles them, and so must know their size, their free-list link and the
 * states in which a node is free or in use.  What the states mean, who
 * moves a node from one to another and which barrier pairs with which is
 * the waiting core's protocol: wait.h has it, with the table of states,
 * and the signals that end a wait.
 */
#ifndef HOTLOCK_NODE_H
#define HOTLOCK_NODE_H

#include <stdbool.h>
#include <stdint.h>

/* Node state word (wait.h has the table and the transitions). */
enum {
	HL_NODE_FREE = 0,
	HL_NODE_WAITING = 1,
	HL_NODE_PARKED = 2,
	HL_NODE_ABANDONED = 3,
	HL_NODE_CLAIMED = 4,
	HL_NODE_WAITING_KEPT = 5,
	HL_NODE_PARKED_KEPT = 6,
	HL_NODE_PARKED_INTR = 7,
};

/* Whether state s is a wait in progress that a waker may signal. */
static inline bool hl__node_armed(uint32_t s)
{
	return s == HL_NODE_WAITING || s == HL_NODE_PARKED || s == HL_NODE_WAITING_KEPT ||
	       s == HL_NODE_PARKED_KEPT || s == HL_NODE_PARKED_INTR;
}

/* Whether state s is a waiter asleep in futex_wait (a signal must wake it). */
static inline bool hl__node_parked(uint32_t s)
{
	return s == HL_NODE_PARKED || s == HL_NODE_PARKED_KEPT || s == HL_NODE_PARKED_INTR;
}

/* Node flags, set by the owner before the node is published. */
enum {
	HL_NODE_F_RT = 1u << 0,         /* SCHED_FIFO/SCHED_RR waiter */
	HL_NODE_F_PRIO = 1u << 1,       /* hl_thread_set_prioritized(1) */
	HL_NODE_F_READER = 1u << 2,     /* hl_rwlock: a wait for the read side */
};

struct hl__node {
	_Atomic uint32_t state;         /* futex word, HL_NODE_* or a signal (wait.h) */
	_Atomic uint32_t next;          /* queue successor (node index), 0: none yet */
	uint32_t index;                 /* this node's index in the arena */
	uint32_t tid;                   /* the waiting thread */
	uint32_t flags;                 /* HL_NODE_F_* */
	_Atomic uint32_t pool_next;     /* free-list link (thread.c) */
	uint64_t wait_start_ns;         /* CLOCK_MONOTONIC when the wait began */
	uint32_t topo_node;             /* the waiter's node (topology.h) */
	/* CNA (queue.c), carried by the queue head: the node preferred at the
	 * next handover, and the secondary queue (node indices of its first
	 * and last waiter, 0 when empty).  Written by the thread that makes
	 * this node the head, before it signals it; read by whoever passes
	 * headship on from this node. */
	_Atomic uint32_t pref_node;
	_Atomic uint32_t sec_head;
	_Atomic uint32_t sec_tail;
	/* hl_cond (cond.c), while the node waits on a condvar: written and
	 * read under that condvar's list lock, except cond_mutex, which the
	 * owner writes before it publishes the node. */
	uint32_t cond_prev;             /* the waiter before it on the list, 0: none */
	uint32_t cond_listed;           /* 1 while on the list */
	void *cond_mutex;               /* the hl_mutex_t it will take again */
} __attribute__((aligned(64)));

_Static_assert(sizeof(struct hl__node) == 64, "one node, one cache line");

#endif
