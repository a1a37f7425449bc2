/* SPDX-License-Identifier: MIT */
/* The stats area: the memory in which the processes of a program run by
 * `hotlock-run --stats` keep their contention records, and from which
 * hotlock-run (the collector, tools/collector.c) writes each process's
 * report once that process has ended (docs/stats.md).  No report is made
 * inside the program: a process that dies (a fatal signal, _exit, a fork
 * child that _exits, a crash inside malloc) leaves its records where the
 * collector reads them, and its end is exactly what it would be without
 * the report.
 *
 * The area is one file that hotlock-run makes (in /dev/shm) and names to
 * the program in HOTLOCK_STATS_AREA; its size is fixed when it is made:
 *
 *   offset 0                the header (struct area_header): a descriptor
 *                           per slot, and counts for the whole run
 *   AREA_HEADER_SIZE + i *  slot i: one process's records.  The slot's own
 *     AREA_SLOT_SIZE        header (struct area_slot), then its threads
 *                           (AREA_MAX_THREADS), what they have summed
 *                           (struct area_sums each) and its records
 *                           (AREA_MAX_RECS)
 *
 * A process maps the header and its own slot (16 MiB), nothing else: the
 * area's whole size would count against a program's RLIMIT_AS.  The pages of a
 * slot are memory only once written; the collector punches a hole in a
 * slot it frees.
 *
 * A slot's life, by its descriptor's state:
 *
 *   state      meaning                                  who moves it on
 *   ---------  ---------------------------------------  -----------------
 *   FREE       nobody's; its pages hold nothing         a process: CAS to
 *                                                        RESERVED
 *   RESERVED   a process took it at load (a fork child: the process: LIVE
 *              at the fork) and maps it; nothing is     at its first
 *              written in it yet                        record, FREE at
 *                                                        exit or _exit;
 *                                                        the collector:
 *                                                        FREE once the
 *                                                        process is gone
 *   LIVE       its process has made a record: the slot  the collector:
 *              header is written, and the collector     FREE, after the
 *              watches the process for its end          report
 *   EXECED     LIVE, and the process has run exec: the   the collector, as
 *              new program (its shim, at load) says so   LIVE
 *
 * A change to LIVE or EXECED adds one to `seq`, a futex word the collector
 * waits on, and wakes it: it then opens a pidfd for the process, which
 * tells it the process's end and, on Linux 6.15 and later, its exit status
 * even where the process is not its child.  A RESERVED slot needs no
 * collector: a process that never contended costs one slot taken and
 * given back, and writes nothing.
 *
 * Everything the process writes here is a plain store or an atomic RMW in
 * shared memory: its exit and _exit hooks and a thread's end, the only
 * code of the report that runs at a process's or a thread's end, make no
 * system call but the clock, and nothing runs at a fatal signal.  All accesses are relaxed
 * but the states' (acquire and release: a slot's header is written before
 * it goes LIVE, and read by the collector after it sees LIVE). */
#ifndef HOTLOCK_STATS_AREA_H
#define HOTLOCK_STATS_AREA_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stats.h"

#define AREA_MAGIC 0x31736b636f6c7468ull       /* "htlocks1" */
#define AREA_VERSION 3
#define AREA_ENV "HOTLOCK_STATS_AREA"

#define AREA_SLOTS 1024u                /* processes with a slot at once */
#define AREA_HEADER_SIZE (64u * 1024)
#define AREA_SLOT_SIZE (16ull << 20)
#define AREA_SIZE (AREA_HEADER_SIZE + (uint64_t)AREA_SLOTS * AREA_SLOT_SIZE)

#define AREA_MAX_RECS 16384u            /* records of a process; index 0 is "none" */
#define AREA_CLASS_SLOTS 32768u         /* the classes' hash table: twice the records */
#define AREA_MAX_THREADS 1024u
#define AREA_SUM_SLOTS 4u               /* records a thread sums its counts for */
#define AREA_MAX_MODULES 512u
#define AREA_STRINGS (64u * 1024)       /* the modules' paths */
#define AREA_CMDLINE 4096u

/* The area header's `detect`: what the shim records beyond the report. */
#define AREA_DETECT_HOLDS 1u    /* each thread's holds, and the sites (--deadlocks, --lock-order) */
#define AREA_DETECT_ORDER 2u    /* the lock-order edges (--lock-order) */
#define AREA_DETECT_ONLY 4u     /* no contention report: nothing is counted */
#define AREA_DETECT_SITES 8u    /* a mutex keeps its holder's site in itself, not in a list */

enum area_state { AREA_FREE, AREA_RESERVED, AREA_LIVE, AREA_EXECED };

/* How a process's end was seen by the process itself (its hooks). */
enum area_end { AREA_END_NONE, AREA_END_EXIT, AREA_END__EXIT };

struct area_desc {
	_Atomic uint32_t state;         /* enum area_state */
	_Atomic int32_t pid;
	_Atomic uint64_t since_ns;      /* CLOCK_BOOTTIME: when it was reserved */
};

struct area_header {
	uint64_t magic;                 /* AREA_MAGIC */
	uint32_t version;               /* AREA_VERSION */
	uint32_t slots;                 /* AREA_SLOTS */
	uint64_t slot_size;             /* AREA_SLOT_SIZE */
	_Atomic uint32_t seq;           /* futex: slots gone LIVE or EXECED */
	/* Facts of the machine the collector learns once, so that no
	 * process reads them at its load: whether the kernel keeps time by
	 * the TSC (shim_ticks may read it), and the CPUs online. */
	uint8_t tsc_ok;
	uint8_t detect;                 /* AREA_DETECT_*: what hotlock-run asked for */
	uint16_t cpus;
	_Atomic uint64_t processes;     /* processes that loaded the shim, or forked */
	_Atomic uint64_t no_slot;       /* ... and found no free slot */
	_Atomic uint64_t contended;     /* ... and made a record */
	struct area_desc desc[AREA_SLOTS];
};
_Static_assert(sizeof(struct area_header) <= AREA_HEADER_SIZE, "the header fits");

/* A module of the process, as its dynamic loader had it at load. */
struct area_module {
	uint64_t lo, hi;                /* its lowest and highest mapped addresses */
	uint64_t bias;                  /* the load bias (dl_phdr_info's dlpi_addr) */
	uint32_t path;                  /* its path's offset in the slot's strings */
	uint8_t build_id_len;           /* its GNU build ID (0: none) */
	uint8_t build_id[27];
};

/* What a thread has counted, summed by record, and not yet added to the
 * records (shim_stats.c says why); in the slot, so that what a thread
 * summed before its process died still reaches the report. */
struct area_sum {
	_Atomic uint32_t rec;                   /* the record's index; 0: free */
	uint32_t pad;
	_Atomic uint64_t last_end;              /* the end of the thread's last wait for it */
	_Atomic uint64_t c[STC_COUNT];          /* as the record's: sums, and maxima */
};
struct area_sums {
	struct area_sum slot[AREA_SUM_SLOTS];
};

/* A slot's own header: the process, written when the slot goes LIVE, and
 * its counts. */
struct area_slot {
	int32_t pid, ppid;
	uint64_t start_ns;              /* CLOCK_BOOTTIME: its start (exec or fork) */
	/* shim_ticks: the TSC (tsc) or CLOCK_MONOTONIC's ns; tsc_base and
	 * mono_base were read together at load, for the collector's
	 * conversion (it measures the TSC's rate itself). */
	bool tsc;
	uint64_t tsc_base, mono_base;
	/* The waiting policy in force (what the advice may suggest). */
	int32_t cpus, nodes;
	uint64_t handoff_ns, spin_ns;
	bool cna;
	/* Its end, as far as the process got to say (its exit and _exit
	 * hooks; nothing at a fatal signal). */
	_Atomic uint32_t end_how;       /* enum area_end */
	_Atomic int32_t end_status;
	_Atomic uint64_t end_ns;        /* CLOCK_BOOTTIME */
	/* The records. */
	_Atomic uint32_t recs_used;     /* the table's high-water mark */
	_Atomic uint64_t untracked;     /* contended objects without a record */
	uint32_t classes[AREA_CLASS_SLOTS];     /* record indices by class key */
	/* The threads that waited (and the main thread). */
	_Atomic uint32_t threads_used;
	_Atomic uint64_t threads_omitted, omitted_lock_ns, omitted_cond_ns;
	/* The program. */
	uint32_t cmdline_len;           /* its arguments, each ended by a NUL */
	char cmdline[AREA_CMDLINE];
	uint32_t n_modules, strings_used;
	struct area_module modules[AREA_MAX_MODULES];
	char strings[AREA_STRINGS];
};

/* The lock-order graph of a process (--lock-order, shim_holds.c): an edge
 * A -> B each time a thread calls for B with a blocking call while it
 * holds A, the first time for each pair (and each pair of ways of holding
 * them).  A lock is its address and its generation (shim_holds.c:
 * node_gen): one of its own, kept in the object, or that of its address's
 * bucket in gens[], which init and destroy move on.
 *
 * keys[] is the set of edges seen (open addressing, 0 free, 64 probes at
 * most).  edges[] is a ring the collector drains (its graph is its own,
 * in its memory): a writer reserves entry `used` (CAS) only while
 * used - drained < AREA_ORDER_EDGES, writes it, then its `ready`
 * (release); the collector reads it (acquire), clears `ready`, then
 * advances `drained` (release), which the next writer of that entry
 * acquires.  An edge that finds the key set or the ring full is left out,
 * and `lost` says so (stored once: no write on each loss). */
#define AREA_ORDER_GENS 16384u
#define AREA_ORDER_KEYS 262144u
#define AREA_ORDER_EDGES 16384u
#define AREA_EDGE_FRAMES 6u
struct area_edge {
	uintptr_t from, to;             /* the locks: held, then taken */
	uintptr_t from_site, to_site;   /* where each was taken */
	/* The call stack that took `to`, outside the shim, innermost first
	 * (0 after the last): past a lock wrapper kept out of line, where
	 * to_site is (lockdep keeps one per new edge too). */
	uintptr_t to_stack[AREA_EDGE_FRAMES];
	uint32_t from_gen, to_gen;
	uint16_t from_how, to_how;      /* enum stats_lock */
	uint32_t tid;                   /* the thread that took them so */
	_Atomic uint32_t ready;         /* 1 once the rest is written */
	uint32_t pad;
};
struct area_order {
	_Atomic uint32_t used;          /* entries of the ring reserved, ever */
	_Atomic uint32_t drained;       /* ... and read by the collector */
	_Atomic uint32_t lost;          /* 1: edges were left out for want of room */
	_Atomic uint32_t gens[AREA_ORDER_GENS];
	_Atomic uint64_t keys[AREA_ORDER_KEYS];
	struct area_edge edges[AREA_ORDER_EDGES];
};

#define AREA_THREADS_OFF (((sizeof(struct area_slot) + 4095) / 4096) * 4096)
#define AREA_SUMS_OFF (AREA_THREADS_OFF + AREA_MAX_THREADS * sizeof(struct stats_thread))
#define AREA_RECS_OFF \
	((((AREA_SUMS_OFF + AREA_MAX_THREADS * sizeof(struct area_sums)) + 63) / 64) * 64)
#define AREA_ORDER_OFF ((((AREA_RECS_OFF + AREA_MAX_RECS * sizeof(struct stats_rec)) + 63) / 64) * 64)
_Static_assert(AREA_ORDER_OFF + sizeof(struct area_order) <= AREA_SLOT_SIZE,
	       "a slot holds its header, threads, sums, records and lock-order graph");

static inline struct area_slot *area_slot_at(void *slot) { return slot; }

static inline struct stats_thread *area_threads(void *slot)
{
	return (struct stats_thread *)((char *)slot + AREA_THREADS_OFF);
}

static inline struct area_sums *area_sums(void *slot)
{
	return (struct area_sums *)((char *)slot + AREA_SUMS_OFF);
}

static inline struct stats_rec *area_recs(void *slot)
{
	return (struct stats_rec *)((char *)slot + AREA_RECS_OFF);
}

static inline struct area_order *area_order(void *slot)
{
	return (struct area_order *)((char *)slot + AREA_ORDER_OFF);
}

/* The generation bucket of address a. */
static inline uint32_t area_order_bucket(uintptr_t a)
{
	return (uint32_t)(((uint64_t)a * 0x9e3779b97f4a7c15ull) >> 40) % AREA_ORDER_GENS;
}

static inline uint64_t area_slot_offset(uint32_t i)
{
	return AREA_HEADER_SIZE + (uint64_t)i * AREA_SLOT_SIZE;
}

#endif
