/* SPDX-License-Identifier: MIT */
/* The shim's contention records (hotlock-run --stats, docs/stats.md): what
 * shim_stats.c collects while the program runs, in the stats area
 * (stats_area.h), and what the collector (tools/collector.c) hands to the
 * report (tools/report.c) once a process has ended. */
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
	STC_C_WAITS, STC_C_WAIT_NS, STC_C_WOKEN,
	STC_C_REWAITS,          /* wake-ups followed by a wait on it with the mutex kept */
	STC_C_SIGNALS, STC_C_SIGNALS_EMPTY,             /* ... that found no waiter */
	STC_C_BROADCASTS, STC_C_BROADCAST_WAITERS,      /* waiters present at broadcasts, summed */
	STC_COUNT
};

static inline bool stats_counter_is_max(int k)
{
	return k == STC_W_WAIT_MAX_NS || k == STC_R_WAIT_MAX_NS || k == STC_HOLD_MAX_NS;
}

/* A record's type for a mutex glibc keeps (process-shared, robust,
 * priority-inheriting or -protecting: shim.c): its waits are counted, by
 * its address, and nothing else of it is analysed. */
#define STATS_TYPE_GLIBC 0x100u

/* Where a lock was held while others waited: the holder's call stack at
 * a release that had a waiter to serve, sampled (shim_stats.c).  A
 * record keeps the first STATS_HOLDER_SITES stacks it sees and counts the
 * samples of each; samples of other stacks count in holder_other. */
#define STATS_HOLDER_SITES 2
#define STATS_HOLDER_FRAMES 8
struct stats_site {
	_Atomic uint64_t samples;
	uint32_t nframes;               /* 0: free */
	uint32_t pad;
	uintptr_t stack[STATS_HOLDER_FRAMES];   /* innermost first */
};

/* A class's record (shim_stats.c, "Classes"): made at the first
 * contention of its first object (a condvar's: at its first wait), which
 * gives it its address and call stack; the objects that joined it since
 * are counted in `objects`. */
struct stats_rec {
	_Atomic uintptr_t addr;         /* its first object's */
	uint32_t obj;                   /* enum stats_obj */
	uint32_t type;                  /* mutex type, rwlock kind (glibc's values), condvar clock */
	_Atomic uint64_t objects;
	uint32_t nframes;
	uint32_t by_address;            /* a class of one object of static storage */
	uint64_t hash;                  /* the class's key */
	uintptr_t stack[STATS_FRAMES];  /* return addresses, innermost first */
	uint64_t first_ns;              /* CLOCK_MONOTONIC: its first contention */
	_Atomic uint64_t last_ns;       /* ... and the end of its last wait */
	_Atomic uint32_t last_node;     /* node of the last contended acquisition, + 1 */
	_Atomic uintptr_t cond_mutex;   /* a condvar: the mutex of its last wait */
	_Atomic uint64_t c[STC_COUNT];
	struct stats_site holders[STATS_HOLDER_SITES];
	_Atomic uint64_t holder_other;  /* samples of stacks not in holders */
} __attribute__((aligned(64)));

/* What a thread waits for and holds, for the deadlock detector
 * (hotlock-run --deadlocks and --lock-order, docs/deadlocks.md; the
 * collector's side is tools/deadlock.c, the shim's shim_holds.c). */
enum stats_lock {
	SL_NONE,
	SL_MUTEX,               /* a mutex of hotlock's: owner TID in bits 0-21 of its word */
	SL_READ, SL_WRITE,      /* an rwlock of hotlock's: writer TID in bits 0-21 of its state */
	SL_GLIBC_MUTEX,         /* a mutex glibc keeps: owner TID in __data.__owner */
	SL_GLIBC_READ, SL_GLIBC_WRITE,  /* an rwlock glibc keeps (owner not read) */
	SL_COND,                /* a condvar (a wait for a signal, not for a lock) */
};

/* A lock the thread holds: written by the thread only, after it took the
 * lock and before it releases it, so that the list never names a lock the
 * thread does not hold.  Relaxed atomics: the collector reads them while
 * the thread runs, and trusts them only when two reads agree, or while
 * the thread is blocked in a wait (its wait's seq unchanged around them). */
#define STATS_HOLDS 16          /* holds listed per thread; deeper ones are counted */
struct stats_hold {
	_Atomic uintptr_t obj;
	_Atomic uintptr_t site;         /* the return address of the call that took it */
	_Atomic uint32_t how;           /* enum stats_lock */
	uint32_t pad;
};

/* The wait a thread is in now: its fields are written before seq turns
 * odd (release), and seq turns even (release) when the wait ends, so a
 * reader that sees the same odd seq before and after reading them (its
 * loads acquire) has read one wait whole, and knows the thread was in it
 * the whole time.  No clock is read for it: the collector times a wait
 * from the first time it sees it. */
struct stats_wait {
	_Atomic uint32_t seq;           /* odd while the thread waits */
	_Atomic uint32_t how;           /* enum stats_lock */
	_Atomic uint32_t timed;         /* it has a deadline (it ends by itself) */
	uint32_t pad;
	_Atomic uintptr_t obj;          /* the lock (a condvar: the condvar) */
	_Atomic uintptr_t mutex;        /* a condvar wait: its mutex */
	_Atomic uintptr_t site;         /* the return address of the call that waits; 0: unknown */
};

/* One thread: the main thread, every thread that waited and, under
 * --deadlocks or --lock-order, every thread that took a lock. */
struct stats_thread {
	uint32_t tid;
	_Atomic bool exited;
	char name[STATS_NAME];
	uint64_t start_ns;              /* CLOCK_BOOTTIME */
	_Atomic uint64_t end_ns;        /* CLOCK_BOOTTIME; 0 while it runs */
	_Atomic uint64_t lock_wait_ns, cond_wait_ns;
	_Atomic uint32_t waiting_on;    /* the record it waits for now; 0: none */
	_Atomic uint64_t cpu_ns;        /* its CPU time, at its exit or the report */
	struct stats_wait wait;         /* the wait it is in now (any report mode) */
	_Atomic uint32_t nholds;        /* locks it holds (--deadlocks, --lock-order) */
	uint32_t pad;
	struct stats_hold holds[STATS_HOLDS];   /* the first min(nholds, STATS_HOLDS), oldest first */
};

/* A process's report (tools/report.c), from a slot the collector has
 * finished with (tools/collector.c): its sums added to the records, its
 * times in nanoseconds. */
struct area_module;
struct stats_report {
	int pid;
	const char *end;                /* "exit 0", "_exit 3", "signal SIGSEGV", "exec", ... */
	const char *program;            /* its command line, one line */
	int top;                        /* entries per table */
	uint64_t start_ns, end_ns;      /* CLOCK_BOOTTIME: the process's start and end */
	int cpus, nodes;
	/* The waiting policy in force (the core's settings, not the
	 * environment's words): what the advice may suggest changing. */
	uint64_t handoff_ns, spin_ns;
	bool cna;                       /* the queues are CNA-ordered */
	const struct stats_rec *recs;   /* n_recs records, index 0 unused */
	size_t n_recs;
	const struct stats_thread *threads;
	size_t n_threads;
	uint64_t threads_omitted;
	uint64_t omitted_lock_wait_ns;  /* omitted threads' waits (counted in the totals) */
	uint64_t omitted_cond_wait_ns;
	uint64_t objects_untracked;     /* contended objects the record table had no room for */
	const struct area_module *modules;     /* where to find its code: n_modules */
	size_t n_modules;
	const char *strings;            /* the modules' paths */
	/* What the collector's deadlock detector found while it ran
	 * (tools/deadlock.c): cycles of threads that wait for each other's
	 * locks, and threads that waited long for a holder that does not
	 * wait for a lock. */
	uint64_t deadlocks, hangs;
};

/* The report of in: its text (when text) and its JSON line (when json),
 * each a malloc'ed buffer with its length, ended by a newline.  Returns 0,
 * or -1 where memory ran out. */
int stats_report_make(const struct stats_report *in, char **text, size_t *text_len, char **json,
		      size_t *json_len);

/* Names of code and data addresses in one process's modules (in's
 * modules and strings), for hotlock-top: the site of a call stack (its
 * first frame of the program's own code, "function (file:line)") and the
 * variable an object is in ("" where none). */
struct stats_namer;
struct stats_namer *stats_namer_open(const struct stats_report *in);
void stats_namer_site(struct stats_namer *n, const uintptr_t *pcs, uint32_t count, char *out, size_t len);
void stats_namer_object(struct stats_namer *n, uintptr_t addr, char *out, size_t len);
void stats_namer_close(struct stats_namer *n);

/* Writes all of buf to fd, giving up on an error other than EINTR.
 * Returns 0, or the errno of the write that failed (ENOSPC for one that
 * wrote nothing). */
static inline int stats_write_all(int fd, const char *buf, size_t n)
{
	while (n) {
		ssize_t k = write(fd, buf, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return errno;
		if (k == 0)
			return ENOSPC;
		buf += k;
		n -= (size_t)k;
	}
	return 0;
}

#endif
