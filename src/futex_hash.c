/* SPDX-License-Identifier: MIT */
/* The futex layer: the process's futex hash (PR_FUTEX_HASH, Linux 6.16+;
 * seed 002), its control API and HOTLOCK_FUTEX_HASH.
 *
 * The kernel, as checked on 6.18 (kernel/futex/core.c; docs/futex-hash.md
 * has the details): prctl(PR_FUTEX_HASH, PR_FUTEX_HASH_SET_SLOTS, n, 0, 0)
 * with n a power of two >= 2 allocates or resizes the process's private
 * table (the old one is drained into it) and marks it "custom": the
 * kernel never resizes it again.  A SET waits in the kernel until the
 * previous table is out of use (RCU grace periods: tens of milliseconds;
 * docs/futex-hash.md has the times).  n = 0 switches to the global table,
 * after which every SET answers EBUSY (the only EBUSY 6.18 has); GET_SLOTS
 * answers the size, 0 for the global table or no table yet.  Without a
 * SET, a process gets a private table when it creates its first thread,
 * and the kernel grows it at each thread creation to 4 x min(threads,
 * CPUs online) rounded up to a power of two, at least 16 (at most the
 * global table's size): that default never shrinks.  A fork child starts
 * with no table and gets the default with its first thread: neither a
 * size nor the switch to global is inherited.  A kernel without the option
 * answers EINVAL to GET, which is ENOSYS here; 6.16, which has the option
 * with the private hash compiled out, answers GET with 0 and SET with
 * EINVAL, which is ENOSYS too.
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
 * A call of hl_futex_hash_set, as HOTLOCK_FUTEX_HASH=global or N makes,
 * turns auto off for the process and its fork children (`mode`).
 *
 * auto: size the table to 4 slots per registered thread (thread.c
 * registers a thread where it starts, hl_thread_init, which the shim runs
 * for every thread, or else at its first slow path) once that is more
 * than the kernel's default could ever be, and only grow it, where a
 * thread starts, never in a lock call; leave it alone for good once
 * someone else sized it.
 *
 * State (the thread estimate: a thread that registers record i counts
 * `regs` and raises `top`; estimate = min(regs, top), which is the high
 * water mark of records in use at once (a record is made only when none
 * is free, so a fresh one's index is the number in use then) and, in a
 * fork child, where the parent's records are reused and their indexes say
 * little, the registrations made there):
 *
 *   variable     meaning (regs, top, next, gen: auto_* in    written by
 *                the code)
 *   -----------  ------------------------------------------  ---------------
 *   mode         AUTO, GLOBAL/FIXED (the program's call),    hl_futex_hash_set;
 *                NONE (no private hash here)                 look (NONE)
 *   regs, top    the thread estimate's two counts            registrations
 *   next         the estimate at which auto looks again      look, init,
 *                                                            step 1 (fork)
 *   gen          thread.c's fork generation when regs, top   step 1
 *                and next were started
 *   default_max  the largest default the kernel can make:    init
 *                4 x CPUs possible rounded up, at least 16
 *   resizer      0, or pid << 32 | TID of the thread that    look's caller
 *                holds the look (a try-lock)
 *   rec          pid: the process rec describes; last: the   look (resizer
 *                slots the library set there (0: none);      held)
 *                stopped: someone else sized its table
 *
 * A registration (hl__futex_hash_threads), which may be on a lock path
 * (a thread's first slow path), only counts, in memory:
 *  1. mode is not AUTO: return.  The fork generation is not gen (a fork
 *     child, whose table is new and whose threads are not the parent's):
 *     start regs, top and next afresh.  Count regs, raise top.
 * A thread start (hl__futex_hash_look: hl_thread_init, which the shim
 * runs where every thread starts), outside lock calls, looks:
 *  2. estimate < next: return (nothing to do: no syscall, no lock).
 *  3. Take resizer (a CAS; a value of another pid is a fork parent's, taken
 *     over).  Taken by another thread: return; its holder looks at the
 *     counts again after it gives resizer back (step 7), so this thread's
 *     count is not lost (unless auto stopped, or left it for later).  A
 *     thread counted on a lock path is looked at by the next thread start.
 *  4. look: rec of another pid is reset (a fork child: a new table).  mode
 *     not AUTO, or rec.stopped: done.  GET the size S (refused: no
 *     private hash here, mode NONE: done).  S is not what the library
 *     last set (or, before it set any, not a size the kernel's default
 *     can have: 0, or 16..default_max): someone else chose it;
 *     rec.stopped, next = never: done, for good in this process.
 *  5. The estimate's 4 slots per thread fit in max(S, default_max,
 *     AUTO_FIRST_SLOTS): next = the estimate that would not; done (never
 *     smaller than S; the kernel's own default is not frozen while it can
 *     still grow; and below 64 threads its chains stay short).
 *  6. SET 4 x estimate rounded up to a power of two (at most
 *     AUTO_MAX_SLOTS): rec.last and next follow.  EBUSY: the global table
 *     (GET says 0) stops auto; a private table is left to a later
 *     registration.  ENOSYS: mode NONE; another error stops auto in this
 *     process.  No sleeping, no retry.
 *  7. Give resizer back; if 5 or 6 raised next, go to 2 (threads that
 *     registered meanwhile failed step 3: one more look, and resize,
 *     catches up with them).
 *
 * hl_futex_hash_set: store mode, then wait while a thread of this
 * process holds resizer, then SET.  With step 3's take and step 4's load
 * of mode this is store buffering, all seq_cst: either look sees the
 * program's mode and sets nothing, or the program sees the look under way
 * and sets after it: the program's size is the last one set.
 *
 * Fork: no atfork handler of ours (it could run late, after other
 * libraries' handlers took locks, or not at all after _Fork():
 * docs/design.md, invariant 6).  thread.c brings the child's fork
 * generation up to date before a registration in the child goes on
 * (hl__fork_check), and step 1 compares it; rec carries its pid and resizer
 * its holder's, so a parent's record or look in flight is recognised as
 * such.  docs/futex-hash.md has the measurements behind the rule, and the
 * cost of a resize on the lock path.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

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
/* auto leaves the table alone until 4 slots per thread pass this (64
 * threads): below it the kernel's default keeps the chains a few waiters
 * long (docs/futex-hash.md), and a program that sandboxes itself and then
 * starts a few dozen threads is not met with a prctl its filter may kill. */
#define AUTO_FIRST_SLOTS 256u
#define NEVER UINT32_MAX

enum { MODE_AUTO, MODE_GLOBAL, MODE_FIXED, MODE_NONE };
/* See the table above.  mode: seq_cst where it meets resizer (store
 * buffering, above); relaxed where it is a hint (step 1: look reads it
 * again). */
static _Atomic int mode = MODE_AUTO;
/* The thread estimate.  seq_cst: a registration's count and its take of
 * resizer, against the holder's give-back and its new look at the counts
 * (step 7): store buffering, so that one of the two sees the other. */
static _Atomic uint64_t auto_regs;
static _Atomic uint32_t auto_top;
/* Relaxed, both: hints.  next only filters (a stale, lower value costs a
 * look that finds nothing to do); default_max is stored once by the
 * constructor (0 before it: auto waits for it). */
static _Atomic uint32_t auto_next;
static _Atomic uint32_t default_max;
static _Atomic uint64_t resizer;
/* Relaxed: a CAS elects the registration that starts the counts afresh in
 * a fork child; nothing is published with it (a registration that races
 * the fresh start, in a child that started threads before any hotlock
 * call, may go uncounted: the estimate is a little low, no worse). */
static _Atomic uint32_t auto_gen;
/* Read and written only by the holder of resizer, whose take (acquire)
 * and give-back (release) order them. */
static struct {
	uint32_t pid;
	uint32_t last;
	bool stopped;
} rec;

static void count_other(void)
{
	struct hl__thread *t = hl__self();
	if (t)
		hl__counter_add(&t->fx[HL_FX_OTHER], 1);
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

static uint32_t thread_id(void)
{
	/* Not hl__tid(): in a fork child, before thread.c's atfork handler has
	 * run, its cache still holds the parent's TID. */
	return (uint32_t)syscall(SYS_gettid);
}

/* Waits while a look of another thread of this process is under way
 * (steps 3-7), so that the program's SET comes after the look's. */
static void wait_for_look(void)
{
	/* seq_cst: store buffering with step 3 (see the top); it is also an
	 * acquire, which pairs with the give-back's release, so that the
	 * look's prctl happens before the caller's. */
	uint64_t r = hl__load(&resizer, HL_SEQ_CST);
	if (!r)
		return;
	uint32_t pid = (uint32_t)getpid(), tid = thread_id();
	/* A fork parent's holder is nobody here; a holder that is this very
	 * thread means a signal handler that interrupted its look: waiting
	 * would never end, and the look it interrupted may then set its size
	 * after the program's (not otherwise avoidable without a second
	 * prctl on the lock path). */
	while (r && (uint32_t)(r >> 32) == pid && (uint32_t)r != tid) {
		hl__sleep_ns(100000);   /* not a lock path: the program's call */
		r = hl__load(&resizer, HL_SEQ_CST);
	}
}

int hl_futex_hash_set(unsigned slots)
{
	if (slots != 0 && !power_of_two(slots))
		return EINVAL;
	/* The program decides from now on: auto stops.  seq_cst: store
	 * buffering with step 3's take and step 4's load (see the top). */
	hl__store(&mode, slots ? MODE_FIXED : MODE_GLOBAL, HL_SEQ_CST);
	wait_for_look();
	return set_slots(slots);
}

/* The thread estimate (see the table at the top). */
static uint32_t estimate(void)
{
	/* seq_cst: step 7's new look after the give-back (see auto_regs). */
	uint64_t regs = hl__load(&auto_regs, HL_SEQ_CST);
	uint32_t top = hl__load(&auto_top, HL_SEQ_CST);
	return regs < top ? (uint32_t)regs : top;
}

/* The estimate past which a table of `slots` (or of AUTO_FIRST_SLOTS, if
 * more) is too small (4 per thread); NEVER once it reaches the cap. */
static uint32_t next_for(uint32_t slots)
{
	if (slots < AUTO_FIRST_SLOTS)
		slots = AUTO_FIRST_SLOTS;
	return slots >= AUTO_MAX_SLOTS ? NEVER : slots / 4 + 1;
}

static bool possible_default(unsigned slots, uint32_t dmax)
{
	return slots == 0 || (power_of_two(slots) && slots >= 16 && slots <= dmax);
}

static bool take_resizer(void)
{
	uint32_t pid = (uint32_t)getpid();
	uint64_t me = (uint64_t)pid << 32 | thread_id();
	uint64_t cur = 0;
	/* seq_cst: store buffering against hl_futex_hash_set (its mode
	 * store, then its load of resizer) and against the holder's give-back
	 * and new look (step 7).  It is also an acquire, which pairs with the
	 * give-back's release: rec as the last holder left it. */
	if (hl__cas(&resizer, &cur, me, HL_SEQ_CST))
		return true;
	/* Held by a thread of a fork parent (the fork came during its look
	 * and our atfork handler has not run yet): nobody gives it back here. */
	return (uint32_t)(cur >> 32) != pid && hl__cas(&resizer, &cur, me, HL_SEQ_CST);
}

static void give_resizer(void)
{
	/* seq_cst: a release for rec and for the look's prctl (paired with
	 * take_resizer's and wait_for_look's acquire), and the store of step
	 * 7's store buffering. */
	hl__store(&resizer, 0, HL_SEQ_CST);
}

/* auto stops in this process (rec.stopped) or everywhere (mode NONE). */
static void stop(bool everywhere)
{
	if (everywhere) {
		int m = MODE_AUTO;
		/* Relaxed: publishes nothing; a later holder reads it after
		 * our give-back (release) in any case.  A CAS: a program's
		 * GLOBAL or FIXED, stored meanwhile, stays. */
		hl__cas(&mode, &m, MODE_NONE, HL_RELAXED);
	}
	rec.stopped = true;
	hl__store(&auto_next, NEVER, HL_RELAXED);       /* relaxed: see auto_next */
}

/* Steps 4-6, with resizer held.  Returns whether it made progress (a
 * resize, or next raised): then step 7 looks at the counts again. */
static bool look(void)
{
	uint32_t dmax = hl__load(&default_max, HL_RELAXED);    /* see default_max */
	if (!dmax)
		return false;
	uint32_t pid = (uint32_t)getpid();
	if (rec.pid != pid) {
		rec.pid = pid;
		rec.last = 0;
		rec.stopped = false;
	}
	/* seq_cst: store buffering with hl_futex_hash_set (see the top). */
	if (hl__load(&mode, HL_SEQ_CST) != MODE_AUTO || rec.stopped)
		return false;
	uint32_t threads = estimate();
	unsigned now = 0;
	int err = hl_futex_hash_get(&now);
	if (err) {
		stop(true);     /* ENOSYS: no private hash; anything else, alike */
		return false;
	}
	if (rec.last ? now != rec.last : !possible_default(now, dmax)) {
		stop(false);    /* the program (or someone) chose: theirs */
		return false;
	}
	uint32_t need = next_for(now > dmax ? now : dmax);
	if (threads < need) {
		hl__store(&auto_next, need, HL_RELAXED);        /* see auto_next */
		return true;
	}
	uint32_t want = 16;
	while (want < threads * 4 && want < AUTO_MAX_SLOTS)
		want *= 2;
	err = set_slots(want);
	if (!err) {
		rec.last = want;
		hl__store(&auto_next, next_for(want), HL_RELAXED);     /* see auto_next */
		return true;
	}
	/* EBUSY with a private table: a kernel that refuses while a resize is
	 * pending (6.18 does not; it waits): a later registration tries
	 * again.  With the global table (the program's switch): stop. */
	if (err == EBUSY && hl_futex_hash_get(&now) == 0 && now)
		return false;
	stop(err == ENOSYS);
	return false;
}

void hl__futex_hash_threads(uint32_t record)
{
	/* Relaxed: a hint; look reads mode again (step 4). */
	if (hl__load(&mode, HL_RELAXED) != MODE_AUTO)
		return;
	/* Relaxed: hl__fork_count changes only in hl__fork_child, which the
	 * registration ran or waited for (hl__fork_check) before it called
	 * this (futex_hash.h). */
	uint32_t gen = hl__load(&hl__fork_count, HL_RELAXED);
	uint32_t seen = hl__load(&auto_gen, HL_RELAXED);       /* see auto_gen */
	if (seen != gen && hl__cas(&auto_gen, &seen, gen, HL_RELAXED)) {
		/* Relaxed: see auto_gen; the counts' later updates are
		 * seq_cst. */
		hl__store(&auto_regs, 0, HL_RELAXED);
		hl__store(&auto_top, 0, HL_RELAXED);
		hl__store(&auto_next, next_for(hl__load(&default_max, HL_RELAXED)), HL_RELAXED);
	}
	/* seq_cst: see auto_regs. */
	hl__fetch_add(&auto_regs, 1, HL_SEQ_CST);
	uint32_t top = hl__load(&auto_top, HL_RELAXED); /* the CAS checks it */
	while (record > top && !hl__cas(&auto_top, &top, record, HL_SEQ_CST))
		;
}

void hl__futex_hash_look(unsigned how)
{
	(void)how;
	for (;;) {
		if (estimate() < hl__load(&auto_next, HL_RELAXED))     /* see auto_next */
			return;
		if (!take_resizer())
			return;         /* its holder looks again after us (step 7) */
		bool progress = look();
		give_resizer();
		if (!progress)
			return;         /* stopped, or left for later: no new look */
	}
}

/* HOTLOCK_FUTEX_HASH, at load. */
__attribute__((constructor)) static void futex_hash_init(void)
{
	/* The kernel's default is at most 4 slots per CPU online, at least
	 * 16: the CPUs possible bound it.  Where their count is unknown, 16:
	 * a larger default would then look like someone else's choice, and
	 * auto would stop rather than override it. */
	long cpus = sysconf(_SC_NPROCESSORS_CONF);
	uint32_t dmax = 16;
	while (cpus > 0 && dmax < 4 * (unsigned long)cpus && dmax < AUTO_MAX_SLOTS)
		dmax *= 2;
	/* Relaxed: see default_max and auto_next. */
	hl__store(&auto_next, next_for(dmax), HL_RELAXED);
	hl__store(&default_max, dmax, HL_RELAXED);
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
