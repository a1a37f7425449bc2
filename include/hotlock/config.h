/* SPDX-License-Identifier: MIT */
/* hotlock: tunables.  Read once from the environment when the library first
 * needs them (HOTLOCK_SPIN_NS, HOTLOCK_HANDOFF_NS,
 * HOTLOCK_CNA_THRESHOLD_NS, HOTLOCK_RWLOCK_YIELD_NS); programs and tests may
 * read and change them at run time. */
#ifndef HOTLOCK_CONFIG_H
#define HOTLOCK_CONFIG_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hl_config {
	/* How long a waiter spins on its own cache line before it parks, in
	 * nanoseconds.  0 parks at once.  At most HL_SPIN_NS_MAX. */
	uint64_t spin_ns;
	/* How long the queue head may wait before the lock must be handed to
	 * it (no more stealing), in nanoseconds.  0 hands off at once (a FIFO
	 * lock).  At most HL_HANDOFF_NS_MAX. */
	uint64_t handoff_ns;
	/* CNA queues (docs/cna.md): once the oldest waiter moved behind
	 * waiters of the holder's node has waited this long, the waiters of
	 * other nodes go back to the front.  At most HL_CNA_THRESHOLD_NS_MAX. */
	uint64_t cna_threshold_ns;
	/* HL_RWLOCK_WRITER_YIELDS (rwlock.h): how long a waiting writer
	 * keeps new readers out before, the readers still holding, it lets
	 * the waiting readers in and claims again (the bound doubles at each
	 * such yield of one wait, up to 64 times this).  From
	 * HL_RWLOCK_YIELD_NS_MIN to HL_RWLOCK_YIELD_NS_MAX; 0 sets the default
	 * (10 ms), so that a configuration filled in field by field before
	 * this field existed stays valid. */
	uint64_t rwlock_yield_ns;
} hl_config_t;

#define HL_SPIN_NS_MAX    10000000ull    /* 10 ms */
#define HL_HANDOFF_NS_MAX 10000000000ull /* 10 s */
#define HL_CNA_THRESHOLD_NS_MAX 10000000000ull /* 10 s */
#define HL_RWLOCK_YIELD_NS_MIN 100000ull      /* 100 us */
#define HL_RWLOCK_YIELD_NS_MAX 1000000000ull  /* 1 s */

void hl_config_get(hl_config_t *out);
/* EINVAL if a field is out of range; nothing is changed then. */
int hl_config_set(const hl_config_t *cfg);

/* What the waiting policy decided (docs/core.md, "Waiting"): counted per
 * thread, always on, never reset. */
typedef struct hl_spin_stats {
	uint64_t spins;         /* spin phases begun */
	uint64_t won;           /* ... that ended in what they waited for */
	uint64_t learned_off;   /* waits that parked at once: the lock's
				   record says spinning fails there */
} hl_spin_stats_t;

/* The calling thread's counts since it started. */
void hl_spin_stats_thread(hl_spin_stats_t *out);
/* The whole process: threads alive now plus every thread that has exited. */
void hl_spin_stats_total(hl_spin_stats_t *out);

#ifdef __cplusplus
}
#endif
#endif
