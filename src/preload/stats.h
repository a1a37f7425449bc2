/* SPDX-License-Identifier: MIT */
/* The shim's contention records (hotlock-run --stats, docs/stats.md): what
 * shim_stats.c collects while the program runs, and what it hands to the
 * report library (libhotlock-report.so, src/preload/report.c) at exit.
 * This header is the whole interface between the two: the report library
 * is loaded only when a report is due, so that the program never carries
 * its dependencies (elfutils' libdw, libjansson) otherwise. */
#ifndef HOTLOCK_SHIM_STATS_DATA_H
#define HOTLOCK_SHIM_STATS_DATA_H

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#define STATS_FRAMES 10         /* call stack frames kept per object */
#define STATS_NAME 16           /* a thread's name (comm), with its NUL */

enum stats_obj { ST_MUTEX, ST_RWLOCK, ST_COND };

/* A record's counters.  W_ is an exclusive acquisition (a mutex, an
 * rwlock's write lock), R_ a read lock. */
enum stats_counter {
	STC_W_ACQ, STC_W_CONTENDED, STC_W_WAIT_NS, STC_W_WAIT_MAX_NS,
	STC_R_ACQ, STC_R_CONTENDED, STC_R_WAIT_NS, STC_R_WAIT_MAX_NS,
	/* Exclusive holds that were timed, each weighed by the acquisitions it
	 * stands for (a sampled one: the shim's SAMPLE; one after a wait: 1),
	 * so that HOLD_NS / HOLDS is the mean hold of all acquisitions. */
	STC_HOLD_NS, STC_HOLDS, STC_HOLD_MAX_NS,
	STC_FUTEX_WAITS, STC_FUTEX_WAKES,               /* made waiting for it or releasing it */
	STC_HANDOFFS,           /* acquisitions that the lock was handed to */
	STC_SPINS, STC_SPINS_WON,
	STC_CROSS_NODE,         /* contended acquisitions on another node than the last */
	STC_TRY_BUSY,           /* trylocks that found it taken */
	STC_TIMEOUTS,           /* timed locks, and timed condvar waits, that timed out */
	STC_C_WAITS, STC_C_WAIT_NS, STC_C_WOKEN, STC_C_FUTILE,
	STC_C_SIGNALS, STC_C_SIGNALS_EMPTY,             /* ... that found no waiter */
	STC_C_BROADCASTS, STC_C_BROADCAST_WAITERS,      /* waiters present at broadcasts, summed */
	STC_COUNT
};

static inline bool stats_counter_is_max(int k)
{
	return k == STC_W_WAIT_MAX_NS || k == STC_R_WAIT_MAX_NS || k == STC_HOLD_MAX_NS;
}

/* One object's record, made at its first contention (a condvar's: at its
 * first wait).  addr 0: the record is free.  Merged records (objects > 1)
 * sum objects that were destroyed or initialised again, by kind and stack. */
struct stats_rec {
	_Atomic uintptr_t addr;
	uint32_t obj;                   /* enum stats_obj */
	uint32_t type;                  /* mutex type, rwlock kind (glibc's values), condvar clock */
	_Atomic uint64_t objects;
	uint32_t nframes;
	uint32_t next_free;             /* free list (shim_stats.c) */
	uint64_t hash;                  /* of obj, type and stack: merging */
	uintptr_t stack[STATS_FRAMES];  /* return addresses, innermost first */
	uint64_t first_ns;              /* CLOCK_MONOTONIC: its first contention */
	_Atomic uint64_t last_ns;       /* ... and the end of its last wait */
	_Atomic uint32_t last_node;     /* node of the last contended acquisition, + 1 */
	_Atomic uintptr_t cond_mutex;   /* a condvar: the mutex of its last wait */
	_Atomic uint64_t c[STC_COUNT];
} __attribute__((aligned(64)));

/* One thread: the main thread, and every thread that waited. */
struct stats_thread {
	uint32_t tid;
	_Atomic bool exited;
	char name[STATS_NAME];
	uint64_t start_ns;              /* CLOCK_BOOTTIME */
	_Atomic uint64_t end_ns;        /* CLOCK_BOOTTIME; 0 while it runs */
	_Atomic uint64_t lock_wait_ns, cond_wait_ns;
	_Atomic uint64_t cpu_ns;        /* its CPU time, at its exit or the report */
};

/* What the shim hands to the report library. */
#define STATS_REPORT_VERSION 2
struct stats_report {
	int version;                    /* STATS_REPORT_VERSION */
	int pid;
	const char *end;                /* "exit", "_exit", "signal SIGTERM" */
	const char *text_path;          /* NULL: no text report; "": stderr */
	const char *json_path;          /* NULL: no JSON */
	int top;                        /* entries per table */
	uint64_t start_ns, now_ns;      /* CLOCK_BOOTTIME: the process's start, now */
	int cpus, nodes;
	/* The waiting policy in force (the core's settings, not the
	 * environment's words): what the advice may suggest changing. */
	uint64_t handoff_ns, spin_ns;
	bool cna;                       /* the queues are CNA-ordered */
	const struct stats_rec *recs;   /* n_recs records; addr 0 ones are free */
	size_t n_recs;
	const struct stats_thread *threads;
	size_t n_threads;
	uint64_t threads_omitted;
	uint64_t omitted_lock_wait_ns;  /* omitted threads' waits (counted in the totals) */
	uint64_t omitted_cond_wait_ns;
	uint64_t objects_untracked;     /* contended objects the record table had no room for */
};

/* Writes all of buf to fd (the reports: both sides), giving up on an
 * error other than EINTR. */
static inline void stats_write_all(int fd, const char *buf, size_t n)
{
	while (n) {
		ssize_t k = write(fd, buf, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return;
		buf += k;
		n -= (size_t)k;
	}
}

/* libhotlock-report.so's entry point: writes the report(s).  Returns 0, or
 * -1 where nothing could be written anywhere. */
typedef int stats_report_fn(const struct stats_report *r);
#define STATS_REPORT_SYMBOL "hotlock_stats_report"

#endif
