/* SPDX-License-Identifier: MIT */
/* The deadlock detector's analysis (deadlock.c), which hotlock-run's
 * collector (collector.c) runs on each process of the program. */
#ifndef HOTLOCK_DEADLOCK_H
#define HOTLOCK_DEADLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stats_area.h"

struct dl_opts {
	bool waits;             /* look for deadlocks and hangs (--deadlocks, --stats) */
	bool report;            /* ... and report them (--deadlocks), not only count them */
	bool abort;             /* --deadlocks=abort: SIGABRT to a deadlocked process */
	bool order;             /* --lock-order: read and check the lock-order edges */
	uint64_t after_ns;      /* --deadlocks-after: a wait is looked at from then */
	bool sites;             /* AREA_DETECT_SITES: a mutex of hotlock's keeps its holder's
				 * site in its held_since (byte 32), and is in no hold list */
};

/* Where a report goes: its text (ended by a newline) and its JSON line
 * (NULL where none), for process pid. */
typedef void dl_emit_fn(int pid, const char *text, size_t text_len, const char *json, size_t json_len);

/* Before any process: the options, and where the reports go. */
void dl_setup(const struct dl_opts *opts, dl_emit_fn *emit);

/* What is known of one process (allocated; NULL where memory ran out). */
struct dl_proc *dl_proc_new(void);
void dl_proc_free(struct dl_proc *p);

/* A look at slot s's process, which runs (pidfd: its pidfd, for
 * --deadlocks=abort). */
void dl_sweep(struct dl_proc *p, struct area_slot *s, int pidfd);

/* The last look, once the process has ended or exec'd: only the slot is
 * read (the lock-order edges not yet read). */
void dl_end(struct dl_proc *p, struct area_slot *s);

/* Deadlocks and hangs found in the process (reported or, under --stats
 * alone, counted). */
void dl_counts(const struct dl_proc *p, uint64_t *deadlocks, uint64_t *hangs);

/* ---- the graphs, as pure functions over arrays ----
 * A directed graph of n nodes: node v's edges are head[v], next[head[v]],
 * ... until -1; edge e goes to node to[e]. */
struct dl_graph {
	uint32_t n;
	const int32_t *head;
	const int32_t *next;
	const uint32_t *to;
};

/* Calls found(arg, nodes, len) once for each elementary cycle of g (no two
 * edges of g join the same two nodes in the same direction), its nodes in
 * the cycle's order from its least; work holds 3 * g->n.  Returns false
 * where it stopped after max_steps edges looked at (a graph with too many
 * cycles to list), true where it listed them all. */
bool dl_cycles(const struct dl_graph *g, void (*found)(void *arg, const uint32_t *nodes, uint32_t len),
	       void *arg, uint32_t *work, uint64_t max_steps);

/* A shortest path from node a to node b (a != b) in g: its edges into
 * path, in order; returns how many (0: none).  path and work hold g->n
 * and 3 * g->n. */
uint32_t dl_path(const struct dl_graph *g, uint32_t a, uint32_t b, int32_t *path, int32_t *work);

#endif
