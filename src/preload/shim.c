/* SPDX-License-Identifier: MIT */
/* The pthread shim: libhotlock-preload.so, loaded with LD_PRELOAD (by
 * hotlock-run), replaces glibc's pthread mutex, rwlock and condition
 * variable in place, in unmodified programs.
 *
 * Where the state lives.  Inside the program's own pthread object, in the
 * bytes glibc uses for its own lock state; no side table, no allocation on
 * a lock path, nothing looked up by address (shim.h has the layouts and
 * pins them with _Static_assert).  Each object's facts that glibc also
 * keeps (the mutex type at byte 16, a rwlock's kind at 48 and
 * "process-shared" at 28, a condvar's clock and "process-shared" bits at
 * 36) stay where glibc keeps them, with glibc's values, so that glibc's
 * static initialisers and a zeroed object with no init call at all are
 * already valid objects of the shim.  (The contention report, off unless
 * asked for, keeps its records in memory hotlock-run reads, and only a
 * record's index in the object's spare bytes: shim_stats.c.)
 *
 * Who keeps an object.  Decided once, at init, from the attributes:
 *
 *   object   hotlock keeps it                       glibc keeps it
 *   -------  -------------------------------------  ----------------------------
 *   mutex    normal, adaptive, errorcheck,          robust, priority inheritance,
 *            recursive; private                     priority protect, process-shared
 *   rwlock   any kind; private                      process-shared, unknown kinds
 *   condvar  private (either clock)                 process-shared
 *
 * glibc's objects go to glibc's real functions (dlvsym) for their whole
 * life: hotlock's waits park on per-process nodes, which another process
 * cannot wake, and robustness and priority protocols need the kernel's
 * futex owner protocol (FUTEX_LOCK_PI, the robust list).  Every call reads
 * the object's classification first (one load); anything the shim cannot
 * classify is glibc's, never guessed at.
 *
 * What each kind does (shim_mutex.c, shim_rwlock.c, shim_cond.c):
 *  - normal and adaptive mutexes: hl_mutex; as with glibc, any thread may
 *    unlock one, and a relock by the holder waits for that unlock;
 *  - errorcheck: EDEADLK on relock, EPERM on a non-owner's unlock;
 *    recursive: a count beside the lock, EAGAIN at 2^32 - 1 holds;
 *  - rwlocks: hl_rwlock, plus the read holds each thread has, so that a
 *    thread that holds a read lock gets it again even while a writer waits
 *    (POSIX; hl_rwlock alone would queue it behind the writer, forever);
 *  - condvars: hl_cond with a mutex of hotlock's, a futex sequence with a
 *    mutex of glibc's, glibc's own when both are glibc's;
 *  - cancellation: pthread_cond_wait and timedwait are cancellation points.
 *    The shim's pthread_cancel interrupts the thread's wait (an interrupt
 *    word the wait also sleeps on), the wait takes the mutex back and only
 *    then acts on the cancel, so cleanup handlers run with the mutex held.
 *  - fork: the locks' own fork handling (thread.h: fork generations).
 *  - the contention report (hotlock-run --stats): shim_stats.c, which also
 *    exports _exit and _Exit, to write down the process's end for the
 *    collector (docs/shim.md).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hotlock/futex.h>

#include "shim.h"
#include "thread.h"
#include "wait.h"

void *_Atomic shim_real_fn[R_COUNT];

static const struct {
	const char *name;
	const char *versions[3];        /* newest first */
} real_names[R_COUNT] = {
	[R_MUTEX_INIT] = { "pthread_mutex_init", { "GLIBC_2.2.5" } },
	[R_MUTEX_DESTROY] = { "pthread_mutex_destroy", { "GLIBC_2.2.5" } },
	[R_MUTEX_LOCK] = { "pthread_mutex_lock", { "GLIBC_2.2.5" } },
	[R_MUTEX_TRYLOCK] = { "pthread_mutex_trylock", { "GLIBC_2.34", "GLIBC_2.2.5" } },
	[R_MUTEX_TIMEDLOCK] = { "pthread_mutex_timedlock", { "GLIBC_2.34", "GLIBC_2.2.5" } },
	[R_MUTEX_CLOCKLOCK] = { "pthread_mutex_clocklock", { "GLIBC_2.34", "GLIBC_2.30" } },
	[R_MUTEX_UNLOCK] = { "pthread_mutex_unlock", { "GLIBC_2.2.5" } },
	[R_RWLOCK_INIT] = { "pthread_rwlock_init", { "GLIBC_2.34", "GLIBC_2.2.5" } },
	[R_RWLOCK_DESTROY] = { "pthread_rwlock_destroy", { "GLIBC_2.34", "GLIBC_2.2.5" } },
	[R_RWLOCK_RDLOCK] = { "pthread_rwlock_rdlock", { "GLIBC_2.34", "GLIBC_2.2.5" } },
	[R_RWLOCK_WRLOCK] = { "pthread_rwlock_wrlock", { "GLIBC_2.34", "GLIBC_2.2.5" } },
	[R_RWLOCK_TRYRDLOCK] = { "pthread_rwlock_tryrdlock", { "GLIBC_2.34", "GLIBC_2.2.5" } },
	[R_RWLOCK_TRYWRLOCK] = { "pthread_rwlock_trywrlock", { "GLIBC_2.34", "GLIBC_2.2.5" } },
	[R_RWLOCK_TIMEDRDLOCK] = { "pthread_rwlock_timedrdlock", { "GLIBC_2.34", "GLIBC_2.2.5" } },
	[R_RWLOCK_TIMEDWRLOCK] = { "pthread_rwlock_timedwrlock", { "GLIBC_2.34", "GLIBC_2.2.5" } },
	[R_RWLOCK_CLOCKRDLOCK] = { "pthread_rwlock_clockrdlock", { "GLIBC_2.34", "GLIBC_2.30" } },
	[R_RWLOCK_CLOCKWRLOCK] = { "pthread_rwlock_clockwrlock", { "GLIBC_2.34", "GLIBC_2.30" } },
	[R_RWLOCK_UNLOCK] = { "pthread_rwlock_unlock", { "GLIBC_2.34", "GLIBC_2.2.5" } },
	[R_COND_INIT] = { "pthread_cond_init", { "GLIBC_2.3.2" } },
	[R_COND_DESTROY] = { "pthread_cond_destroy", { "GLIBC_2.3.2" } },
	[R_COND_WAIT] = { "pthread_cond_wait", { "GLIBC_2.3.2" } },
	[R_COND_TIMEDWAIT] = { "pthread_cond_timedwait", { "GLIBC_2.3.2" } },
	[R_COND_CLOCKWAIT] = { "pthread_cond_clockwait", { "GLIBC_2.34", "GLIBC_2.30" } },
	[R_COND_SIGNAL] = { "pthread_cond_signal", { "GLIBC_2.3.2" } },
	[R_COND_BROADCAST] = { "pthread_cond_broadcast", { "GLIBC_2.3.2" } },
	[R_CANCEL] = { "pthread_cancel", { "GLIBC_2.34", "GLIBC_2.2.5" } },
	[R_CREATE] = { "pthread_create", { "GLIBC_2.34", "GLIBC_2.2.5" } },
	[R_SETSCHEDPARAM] = { "pthread_setschedparam", { "GLIBC_2.2.5" } },
	[R_SCHED_SETSCHEDULER] = { "sched_setscheduler", { "GLIBC_2.2.5" } },
	[R_SETAFFINITY] = { "pthread_setaffinity_np", { "GLIBC_2.34", "GLIBC_2.3.4" } },
	[R_SCHED_SETAFFINITY] = { "sched_setaffinity", { "GLIBC_2.3.4" } },
	[R_SETNAME] = { "pthread_setname_np", { "GLIBC_2.34", "GLIBC_2.12" } },
	[R_PRCTL] = { "prctl", { "GLIBC_2.2.5" } },
};


/* glibc's `which`, or NULL; stored where found. */
static void *real_find(enum shim_real which)
{
	void *f = NULL;
	for (int i = 0; i < 3 && !f && real_names[which].versions[i]; i++)
		f = dlvsym(RTLD_NEXT, real_names[which].name, real_names[which].versions[i]);
	if (!f)
		f = dlsym(RTLD_NEXT, real_names[which].name);
	if (f)
		/* Relaxed: see shim_real. */
		hl__store(&shim_real_fn[which], f, HL_RELAXED);
	return f;
}

void *shim_real_lookup(enum shim_real which)
{
	void *f = real_find(which);
	if (!f) {
		fprintf(stderr, "hotlock-preload: glibc's %s not found (%s); cannot go on\n",
			real_names[which].name, dlerror());
		abort();
	}
	return f;
}

/* Every real function looked up at load, so that no lock call does it (a
 * lookup takes the loader's lock and may allocate: the lock's contract).
 * A call made before this constructor (another library's, under
 * LD_PRELOAD) looks its function up itself, at load all the same.  One not
 * found here (a process with no glibc after the shim: libc.so.6 run as a
 * program) is looked up again, and reported, if it is ever called. */
__attribute__((constructor)) static void shim_real_init(void)
{
	int saved = errno;
	for (int which = 0; which < R_COUNT; which++)
		real_find((enum shim_real)which);
	dlerror();
	errno = saved;
}

/* ---- cancellation -------------------------------------------------------
 *
 * glibc's pthread_cancel of a thread with deferred cancellation only marks
 * it; the thread acts at its next cancellation point, or at once if it is
 * blocked in one (glibc switches to asynchronous cancellation around the
 * blocking syscall, so the signal it sends unwinds the thread from there).
 * The shim's waits park in the waiting core, which knows nothing of that;
 * unwound from inside it, a wait would leave its node in a queue.  So:
 *  1. pthread_cancel calls glibc's (which marks the target), then, after a
 *     full fence, interrupts the target's thread record (thread.h): sets its
 *     interrupt word and wakes it.
 *  2. A condvar wait registers the thread, fences, and calls
 *     pthread_testcancel (with the mutex held, as a cancelled waiter must
 *     be): a cancel that was marked before the record could be found acts
 *     here.  Either the canceller's fence or ours comes first, so either
 *     the canceller finds the record or we find the mark.
 *  3. The wait sleeps on its node and on the interrupt word at once; an
 *     interrupt ends it as a timeout does (the node leaves the condvar, or,
 *     if a signal kept it first, the wait goes on and takes the mutex).
 *  4. With the mutex held again: if the interrupt is what ended the wait
 *     (it gave up with no signal taken), act on the cancel:
 *     pthread_testcancel unwinds to the cleanup handlers with the mutex
 *     held.  A wait that took a signal or a broadcast returns 0 and
 *     leaves the cancel pending for the next cancellation point, as for
 *     a glibc waiter woken just before its cancel: so no signal is lost
 *     (POSIX: a waiter ended by its cancel must not consume one), and no
 *     cancelled waiter touches the condvar after its wait to pass one on
 *     (a broadcast and a destroy may have come and gone).
 *  5. The interrupt word is cleared at the start of the next wait that can
 *     be cancelled (step 2, before it looks for a pending cancel), so
 *     waits in cleanup handlers and key destructors, which run once the
 *     cancel was acted on, block as they should.
 * Cancellation is disabled for the length of the wait (the thread's own
 * state is restored after), so that nothing unwinds the wait half done. */

int shim_pthread_cancel(pthread_t th)
{
	int err = REAL(R_CANCEL, int (*)(pthread_t))(th);
	if (err)
		return err;
	/* Pairs with shim_cancel_begin's fence (step 2). */
	atomic_thread_fence(memory_order_seq_cst);
	hl__thread_interrupt((uintptr_t)th);
	return 0;
}
SHIM_EXPORT2(shim_pthread_cancel, pthread_cancel, "GLIBC_2.34", "GLIBC_2.2.5");

const _Atomic uint32_t *shim_cancel_begin(int *state)
{
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, state);
	if (*state != PTHREAD_CANCEL_ENABLE)
		return NULL;
	struct hl__thread *self = hl__self();
	/* An interrupt left by a cancel that was seen already (acted on, or
	 * being acted on: cleanup handlers and key destructors run with
	 * glibc's cancellation over) must not end this wait: clear it before
	 * looking for a pending cancel.  seq_cst exchange: if it reads the
	 * interrupt of a cancel that is still pending, it synchronizes with
	 * the canceller's store, after that cancel's mark, and the
	 * pthread_testcancel below acts on it; an interrupt stored after the
	 * exchange stays set and ends the wait. */
	if (self)
		hl__xchg(&self->interrupt, 0, HL_SEQ_CST);
	/* Pairs with shim_pthread_cancel's fence. */
	atomic_thread_fence(memory_order_seq_cst);
	pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
	pthread_testcancel();
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	return self ? &self->interrupt : NULL;
}

void shim_cancel_end(bool act, int state)
{
	/* The caller's read of the interrupt was relaxed: the interrupt
	 * publishes nothing; glibc's own mark, which pthread_testcancel reads,
	 * was set before it (and a mark not seen yet is seen at the next
	 * cancellation point). */
	if (act) {
		pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
		pthread_testcancel();
	}
	pthread_setcancelstate(state, NULL);
}
