/* The futex layer: the process's futex hash (PR_FUTEX_HASH, Linux 6.16+;
 * seed 002), its control API and HOTLOCK_FUTEX_HASH.
 *
 * The kernel, as checked on 6.18 (kernel/futex/core.c; docs/futex-hash.md
 * has the details): prctl(PR_FUTEX_HASH, PR_FUTEX_HASH_SET_SLOTS, n, 0, 0)
 * with n a power of two >= 2 allocates or resizes the process's private
 * table (the old one is drained into it); n = 0 switches to the global
 * table, after which every SET answers EBUSY; GET_SLOTS answers the size,
 * 0 for the global table.  A process gets a private table of 16 slots
 * (more on a machine with many CPUs) when it creates its first thread.  A
 * kernel without the option answers EINVAL to GET, which is ENOSYS here;
 * 6.16, which has the option with the private hash compiled out, answers
 * GET with 0 and SET with EINVAL, which is ENOSYS too.
 *
 * HOTLOCK_FUTEX_HASH, read when the library is loaded (so also by the
 * pthread shim), before the program has threads of its own:
 *
 *   value   what the library does
 *   ------  --------------------------------------------------------------
 *   unset   as auto
 *   auto    the policy below
 *   global  switches to the global table (one-way)
 *   N       a private table of N slots (a power of two >= 2), never resized
 *           by the library
 *
 * auto: the kernel's private table, grown with the threads the library
 * knows of (thread.c registers every thread that waits): once they exceed
 * a quarter of the slots, the table is resized to 4 x their number rounded
 * up to a power of two (the kernel's own sizing rule, 4 x threads, which it
 * caps at the CPUs online: hotlock parks every waiter on its own word, so
 * its parked threads, not its CPUs, fill the table).  At most one resize
 * per doubling of the threads, on a thread's first slow path, never on a
 * lock path; capped at AUTO_MAX_SLOTS.  docs/futex-hash.md has the
 * measurements behind the rule.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include <hotlock/futex.h>

#include "atomics.h"
#include "futex_hash.h"
#include "thread.h"

/* Newer than the 6.1 headers this may be built with: guarded. */
#ifndef PR_FUTEX_HASH
#define PR_FUTEX_HASH 78
#endif
#ifndef PR_FUTEX_HASH_SET_SLOTS
#define PR_FUTEX_HASH_SET_SLOTS 1
#endif
#ifndef PR_FUTEX_HASH_GET_SLOTS
#define PR_FUTEX_HASH_GET_SLOTS 2
#endif

#define AUTO_MAX_SLOTS (1u << 16)

enum { MODE_AUTO, MODE_GLOBAL, MODE_FIXED, MODE_NONE };
/* Relaxed: set once by the constructor, before other threads exist. */
static _Atomic int mode = MODE_AUTO;
/* auto: the slots the library last set (0: none yet). Relaxed: a CAS
 * elects the thread that resizes; the kernel orders the resizes. */
static _Atomic uint32_t auto_slots;

static void count_other(void)
{
	struct hl_thread *t = hl_self();
	if (t)
		hl_counter_add(&t->fx[HL_FX_OTHER], 1);
}

static bool legacy_forced(void)
{
	const char *f = getenv("HOTLOCK_FUTEX");
	return f && strcmp(f, "futex") == 0;
}

static bool power_of_two(unsigned n)
{
	return n >= 2 && (n & (n - 1)) == 0;
}

int hl_futex_hash_get(unsigned *slots)
{
	if (!slots)
		return EINVAL;
	if (legacy_forced())
		return ENOSYS;
	int saved = errno;
	int r = prctl(PR_FUTEX_HASH, PR_FUTEX_HASH_GET_SLOTS, 0, 0, 0);
	int err = r < 0 ? errno : 0;
	errno = saved;
	count_other();
	if (err)
		return err == EINVAL ? ENOSYS : err;
	*slots = (unsigned)r;
	return 0;
}

static int set_slots(unsigned slots)
{
	if (legacy_forced())
		return ENOSYS;
	int saved = errno;
	int r = prctl(PR_FUTEX_HASH, PR_FUTEX_HASH_SET_SLOTS, (unsigned long)slots, 0, 0);
	int err = r < 0 ? errno : 0;
	errno = saved;
	count_other();
	/* The size was checked: EINVAL means a kernel without the option, or
	 * one that knows it but has no private hash (6.16 shipped it compiled
	 * out). */
	return err == EINVAL ? ENOSYS : err;
}

int hl_futex_hash_set(unsigned slots)
{
	if (slots != 0 && !power_of_two(slots))
		return EINVAL;
	/* The program decides from now on: auto stops.  Relaxed: see mode. */
	hl_store(&mode, slots ? MODE_FIXED : MODE_GLOBAL, HL_RELAXED);
	return set_slots(slots);
}

void hl__futex_hash_threads(uint32_t threads)
{
	/* Relaxed: see mode and auto_slots. */
	if (hl_load(&mode, HL_RELAXED) != MODE_AUTO)
		return;
	uint32_t have = hl_load(&auto_slots, HL_RELAXED);
	if (have >= AUTO_MAX_SLOTS || threads * 4 <= (have ? have : 16))
		return;
	uint32_t want = 16;
	while (want < threads * 4 && want < AUTO_MAX_SLOTS)
		want *= 2;
	if (!hl_cas(&auto_slots, &have, want, HL_RELAXED))
		return;         /* another thread resizes */
	int err = set_slots(want);
	unsigned now = 0;
	/* EBUSY with a private table: the kernel has not finished the last
	 * resize (it switches tables once the old one is out of use).  Try
	 * again a few times, 200 us apart (at most 4 ms, once per doubling,
	 * on a thread's first slow path), then at a later registration. */
	for (int tries = 0; err == EBUSY && tries < 20 && hl_futex_hash_get(&now) == 0 && now;
	     tries++) {
		hl_sleep_ns(200000);
		err = set_slots(want);
	}
	if (err == EBUSY && now) {
		hl_store(&auto_slots, have, HL_RELAXED);
	} else if (err) {
		/* ENOSYS, or the global table (chosen by the program): stop. */
		hl_store(&mode, MODE_NONE, HL_RELAXED);
	}
}

/* HOTLOCK_FUTEX_HASH, at load. */
__attribute__((constructor)) static void futex_hash_init(void)
{
	const char *s = getenv("HOTLOCK_FUTEX_HASH");
	if (!s || !*s || strcmp(s, "auto") == 0)
		return;
	if (strcmp(s, "global") == 0) {
		int err = hl_futex_hash_set(0);
		if (err)
			fprintf(stderr, "hotlock: HOTLOCK_FUTEX_HASH=global: %s\n", strerror(err));
		return;
	}
	char *end;
	errno = 0;
	unsigned long n = strtoul(s, &end, 10);
	if (errno || *end || *s == '-' || n > (1ul << 30) || !power_of_two((unsigned)n)) {
		fprintf(stderr, "hotlock: ignoring HOTLOCK_FUTEX_HASH=%s (expected auto, global "
			"or a power of two from 2 to 2^30)\n", s);
		return;
	}
	int err = hl_futex_hash_set((unsigned)n);
	if (err)
		fprintf(stderr, "hotlock: HOTLOCK_FUTEX_HASH=%s: %s\n", s, strerror(err));
}
