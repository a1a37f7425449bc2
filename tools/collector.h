/* SPDX-License-Identifier: MIT */
/* hotlock-run's collector of the contention report (collector.c). */
#ifndef HOTLOCK_COLLECTOR_H
#define HOTLOCK_COLLECTOR_H

#include <stdbool.h>
#include <stdint.h>

struct collector_opts {
	const char *text_path;          /* NULL: no text report; "": stderr */
	const char *json_path;          /* NULL: no JSON */
	int top;                        /* entries per table */
	/* The deadlock detector (deadlock.c, docs/deadlocks.md). */
	bool deadlocks;                 /* --deadlocks: report deadlocks and hangs */
	bool deadlocks_abort;           /* --deadlocks=abort: and SIGABRT a deadlocked process */
	bool lock_order;                /* --lock-order: report lock-order inversions */
	uint64_t deadlocks_after_ns;    /* --deadlocks-after: when a wait is looked at */
	const char *deadlocks_text_path;        /* their text: NULL or "": stderr */
	const char *deadlocks_json_path;        /* their JSON: NULL: none */
};

/* Makes the stats area and names it in the environment (HOTLOCK_STATS_AREA),
 * for the program about to run, with what the shim is to record for the
 * deadlock detector; the paths are made absolute against the current
 * directory.  Exits with status 2 and one line where it cannot. */
void collector_prepare(const struct collector_opts *opts);

/* Runs prog (argv) as a child with the environment as it is, collects the
 * reports of every process of it that contended, and ends as the program
 * did: returns its exit status (2 where the program succeeded but a report
 * could not be written), or dies of its signal.  Never returns where the
 * program could not be started (its error, and 126 or 127). */
int collector_run(const char *prog, char *const argv[]);

#endif
