/* SPDX-License-Identifier: MIT */
/* Tunables: defaults, the environment (read once, when the library is
 * loaded), and hl_config_get/set; and HOTLOCK_QUEUE, the queue policy that
 * overrides the automatic choice (queue.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hotlock/config.h>
#include <hotlock/mutex.h>

#include "config.h"

/* The spin budget: how long a waiter spins on its own cache line before it
 * parks.  Chosen by measurement (docs/mutex.md, Tunables, has the sweep
 * and the cost of a wake-up): long enough that a waiter whose lock is
 * released within a few critical sections never pays for a futex sleep and
 * wake-up, short enough that on an oversubscribed machine a spinner gives
 * its CPU back before it costs the owner a time slice. */
#define HL_SPIN_NS_DEFAULT    20000ull
/* The kernel rwsem's handoff: the first waiter is due the lock after 4 ms. */
#define HL_HANDOFF_NS_DEFAULT 4000000ull
/* CNA's last kernel version (v15) flushes the secondary queue once its
 * oldest waiter has waited 1 ms: a quarter of the handoff threshold, so
 * that a remote waiter is back at the front long before it would be due a
 * handoff anyway (docs/cna.md). */
#define HL_CNA_THRESHOLD_NS_DEFAULT 1000000ull
/* HL_RWLOCK_WRITER_YIELDS: a writer's first claim lasts 10 ms, long beside
 * the read holds that a writer among overlapping readers waits out (they
 * drain within it), short as the stall of a reader that a read holder
 * waits for (docs/rwlock.md). */
#define HL_RWLOCK_YIELD_NS_DEFAULT 10000000ull

_Atomic uint64_t hl__config_spin_ns = HL_SPIN_NS_DEFAULT;
_Atomic uint64_t hl__config_handoff_ns = HL_HANDOFF_NS_DEFAULT;
_Atomic uint64_t hl__config_cna_threshold_ns = HL_CNA_THRESHOLD_NS_DEFAULT;
_Atomic uint64_t hl__config_rwlock_yield_ns = HL_RWLOCK_YIELD_NS_DEFAULT;
_Atomic uint32_t hl__queue_env = HL_QUEUE_DEFAULT;

static void config_from_env(const char *name, _Atomic uint64_t *var, uint64_t min, uint64_t max)
{
	const char *s = getenv(name);
	if (!s || !*s)
		return;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end || *s == '-' || v < min || v > max) {
		fprintf(stderr, "hotlock: ignoring %s=%s (expected nanoseconds, %llu..%llu)\n",
			name, s, (unsigned long long)min, (unsigned long long)max);
		return;
	}
	/* Relaxed: see config.h. */
	hl__store(var, v, HL_RELAXED);
}

__attribute__((constructor)) static void config_init(void)
{
	config_from_env("HOTLOCK_SPIN_NS", &hl__config_spin_ns, 0, HL_SPIN_NS_MAX);
	config_from_env("HOTLOCK_HANDOFF_NS", &hl__config_handoff_ns, 0, HL_HANDOFF_NS_MAX);
	config_from_env("HOTLOCK_CNA_THRESHOLD_NS", &hl__config_cna_threshold_ns, 0,
			HL_CNA_THRESHOLD_NS_MAX);
	config_from_env("HOTLOCK_RWLOCK_YIELD_NS", &hl__config_rwlock_yield_ns,
			HL_RWLOCK_YIELD_NS_MIN, HL_RWLOCK_YIELD_NS_MAX);
	const char *q = getenv("HOTLOCK_QUEUE");
	if (q && *q) {
		if (strcmp(q, "fifo") == 0)
			hl__store(&hl__queue_env, HL_QUEUE_FIFO, HL_RELAXED);
		else if (strcmp(q, "cna") == 0)
			hl__store(&hl__queue_env, HL_QUEUE_CNA, HL_RELAXED);
		else
			fprintf(stderr, "hotlock: ignoring HOTLOCK_QUEUE=%s (expected fifo or cna)\n",
				q);
	}
}

void hl_config_get(hl_config_t *out)
{
	memset(out, 0, sizeof(*out));
	out->spin_ns = hl__spin_ns();
	out->handoff_ns = hl__handoff_ns();
	out->cna_threshold_ns = hl__cna_threshold_ns();
	out->rwlock_yield_ns = hl__rwlock_yield_ns();
}

int hl_config_set(const hl_config_t *cfg)
{
	if (!cfg || cfg->spin_ns > HL_SPIN_NS_MAX || cfg->handoff_ns > HL_HANDOFF_NS_MAX ||
	    cfg->cna_threshold_ns > HL_CNA_THRESHOLD_NS_MAX ||
	    (cfg->rwlock_yield_ns && cfg->rwlock_yield_ns < HL_RWLOCK_YIELD_NS_MIN) ||
	    cfg->rwlock_yield_ns > HL_RWLOCK_YIELD_NS_MAX)
		return EINVAL;
	hl__store(&hl__config_spin_ns, cfg->spin_ns, HL_RELAXED);
	hl__store(&hl__config_handoff_ns, cfg->handoff_ns, HL_RELAXED);
	hl__store(&hl__config_cna_threshold_ns, cfg->cna_threshold_ns, HL_RELAXED);
	hl__store(&hl__config_rwlock_yield_ns,
		 cfg->rwlock_yield_ns ? cfg->rwlock_yield_ns : HL_RWLOCK_YIELD_NS_DEFAULT, HL_RELAXED);
	return 0;
}
