/* SPDX-License-Identifier: MIT */
/* The tunables, readable from every slow path without a lock. */
#ifndef HOTLOCK_CONFIG_INTERNAL_H
#define HOTLOCK_CONFIG_INTERNAL_H

#include <stdint.h>

#include "atomics.h"
#include "internal.h"

/* Written by hl_config_set and at start-up, read relaxed everywhere: a
 * tunable is a hint, no other data is published with it. */
HL_HIDDEN extern _Atomic uint64_t hl__config_spin_ns;
HL_HIDDEN extern _Atomic uint64_t hl__config_handoff_ns;
HL_HIDDEN extern _Atomic uint64_t hl__config_cna_threshold_ns;
HL_HIDDEN extern _Atomic uint64_t hl__config_rwlock_yield_ns;
/* HOTLOCK_QUEUE: HL_QUEUE_FIFO or HL_QUEUE_CNA, else HL_QUEUE_DEFAULT (the
 * topology decides). */
HL_HIDDEN extern _Atomic uint32_t hl__queue_env;

static inline uint64_t hl__spin_ns(void)
{
	return hl__load(&hl__config_spin_ns, HL_RELAXED);
}

static inline uint64_t hl__handoff_ns(void)
{
	return hl__load(&hl__config_handoff_ns, HL_RELAXED);
}

static inline uint64_t hl__cna_threshold_ns(void)
{
	return hl__load(&hl__config_cna_threshold_ns, HL_RELAXED);
}

static inline uint64_t hl__rwlock_yield_ns(void)
{
	return hl__load(&hl__config_rwlock_yield_ns, HL_RELAXED);
}

#endif
