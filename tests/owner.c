/* SPDX-License-Identifier: MIT */
/* Who owns a lock (docs/core.md, "Owners"): the kernel TID in the lock
 * word, as with glibc's mutexes.  This test pins what follows from it:
 *
 *  - A thread that exits holding a lock leaves it locked for good: nothing
 *    is checked at exit (as glibc does for a normal mutex; robust mutexes
 *    are the tool for owner death).  Another thread's trylock gets EBUSY,
 *    a timed lock ETIMEDOUT, an unlock EPERM (the write side) and destroy
 *    EBUSY; hl_mutex_owner / hl_rwlock_holders still name the dead thread.
 *    A read share too: each thread knows its own, so another thread's
 *    hl_rwlock_unlock of it is EPERM and it keeps writers out for good.
 *  - TID reuse: a thread that gets the TID of one that exited holding a
 *    lock counts as its owner: its lock returns EDEADLK, its unlock
 *    releases the lock.  Made to happen by writing the dead TID - 1 into
 *    /proc/sys/kernel/ns_last_pid before creating a thread (root only;
 *    skipped with a message where that is not allowed or another process
 *    takes the TID first).
 *  - fork: a thread keeps, through nested forks, the TIDs it had in its
 *    parent, grandparent and so on (the last 8 generations): a lock it held
 *    three forks ago is still its own in the great-grandchild (EDEADLK on
 *    lock, unlock releases it).  Before the TIDs were kept as a list, the
 *    second fork overwrote the first one's and the unlock in the grandchild
 *    returned EPERM. */
#include "common.h"

#include <hotlock/hotlock.h>

#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/wait.h>

#if TEST_TSAN
/* The nested forks run before any other thread exists; this only says so
 * to ThreadSanitizer for the runs that follow. */
const char *__tsan_default_options(void);
const char *__tsan_default_options(void)
{
	return "die_after_fork=0";
}
#endif

/* ---- nested forks ----------------------------------------------------------- */

static hl_mutex_t fork_m = HL_MUTEX_INIT;
static hl_rwlock_t fork_rw = HL_RWLOCK_INIT;

/* In a process `depth` forks below the one that took the locks: they are
 * ours; fork deeper, or release them and check that they work again. */
static int nested(int depth, int forks)
{
	int bad = 0;
	/* Timed: a lock that does not see the caller as its owner would wait
	 * for ever. */
	struct timespec dl = deadline_in(CLOCK_MONOTONIC, 50 * NSEC_PER_MSEC);
	if (hl_mutex_timedlock(&fork_m, CLOCK_MONOTONIC, &dl) != EDEADLK)
		bad |= 1;
	if (hl_rwlock_timedwrlock(&fork_rw, CLOCK_MONOTONIC, &dl) != EDEADLK)
		bad |= 2;
	if (depth < forks) {
		pid_t pid = fork();
		if (pid == 0)
			_exit(nested(depth + 1, forks));
		int status;
		if (pid < 0 || waitpid(pid, &status, 0) != pid)
			return bad | 4;
		return bad | (WIFEXITED(status) ? WEXITSTATUS(status) : 8);
	}
	/* Released, they work again (not tried where the release failed:
	 * the lock would wait for ever on a thread of another process). */
	if (hl_mutex_unlock(&fork_m) != 0)
		bad |= 16;
	else if (hl_mutex_lock(&fork_m) != 0 || hl_mutex_unlock(&fork_m) != 0 ||
		 hl_mutex_destroy(&fork_m) != 0)
		bad |= 64;
	if (hl_rwlock_unlock(&fork_rw) != 0)
		bad |= 32;
	else if (hl_rwlock_rdlock(&fork_rw) != 0 || hl_rwlock_unlock(&fork_rw) != 0 ||
		 hl_rwlock_destroy(&fork_rw) != 0)
		bad |= 64;
	return bad;
}

static void test_nested_forks(void)
{
	for (int forks = 1; forks <= 3; forks++) {
		CHECK_RC(hl_mutex_lock(&fork_m), 0);
		CHECK_RC(hl_rwlock_wrlock(&fork_rw), 0);
		pid_t pid = fork();
		REQUIRE(pid >= 0, "fork: %s", strerror(errno));
		if (pid == 0)
			_exit(nested(1, forks));
		int status;
		REQUIRE(waitpid(pid, &status, 0) == pid, "waitpid");
		int bad = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
		printf("locks held %d fork%s up: %s\n", forks, forks > 1 ? "s" : "",
		       bad ? "FAILED" : "still the thread's own (EDEADLK at each level, unlocked "
				       "and usable at the last)");
		CHECK(!(bad & 3), "%d forks: lock of a lock the thread held before the forks did "
		      "not return EDEADLK (0x%x)", forks, bad);
		CHECK(!(bad & 48), "%d forks: unlock of a lock the thread held before the forks "
		      "failed (0x%x)", forks, bad);
		CHECK(!(bad & ~51), "%d forks: the child failed (0x%x)", forks, bad);
		CHECK_RC(hl_mutex_unlock(&fork_m), 0);
		CHECK_RC(hl_rwlock_unlock(&fork_rw), 0);
	}
}

/* ---- a thread that exits holding locks --------------------------------- */

static hl_mutex_t dead_m = HL_MUTEX_INIT;
static hl_rwlock_t dead_w = HL_RWLOCK_INIT, dead_r = HL_RWLOCK_INIT;
static atomic_uint dead_tid;

static void *exit_holding(void *arg)
{
	atomic_store(&dead_tid, test_gettid());
	CHECK_RC(hl_mutex_lock(&dead_m), 0);
	CHECK_RC(hl_rwlock_wrlock(&dead_w), 0);
	CHECK_RC(hl_rwlock_rdlock(&dead_r), 0);
	return NULL;            /* exits holding all three */
}

static void test_exit_holding(void)
{
	pthread_t t;
	REQUIRE(pthread_create(&t, NULL, exit_holding, NULL) == 0, "pthread_create");
	pthread_join(t, NULL);
	uint32_t tid = atomic_load(&dead_tid), w, r;
	struct timespec dl = deadline_in(CLOCK_MONOTONIC, 20 * NSEC_PER_MSEC);

	CHECK(hl_mutex_owner(&dead_m) == tid, "hl_mutex_owner %u, expected the dead thread %u",
	      hl_mutex_owner(&dead_m), tid);
	CHECK_RC(hl_mutex_trylock(&dead_m), EBUSY);
	CHECK_RC(hl_mutex_timedlock(&dead_m, CLOCK_MONOTONIC, &dl), ETIMEDOUT);
	CHECK_RC(hl_mutex_unlock(&dead_m), EPERM);
	CHECK_RC(hl_mutex_destroy(&dead_m), EBUSY);

	hl_rwlock_holders(&dead_w, &w, &r);
	CHECK(w == tid && r == 0, "rwlock holders %u/%u, expected writer %u", w, r, tid);
	CHECK_RC(hl_rwlock_tryrdlock(&dead_w), EBUSY);
	CHECK_RC(hl_rwlock_trywrlock(&dead_w), EBUSY);
	dl = deadline_in(CLOCK_MONOTONIC, 20 * NSEC_PER_MSEC);
	CHECK_RC(hl_rwlock_timedwrlock(&dead_w, CLOCK_MONOTONIC, &dl), ETIMEDOUT);
	CHECK_RC(hl_rwlock_unlock(&dead_w), EPERM);
	CHECK_RC(hl_rwlock_destroy(&dead_w), EBUSY);

	hl_rwlock_holders(&dead_r, &w, &r);
	CHECK(w == 0 && r == 1, "rwlock holders %u/%u, expected one reader", w, r);
	CHECK_RC(hl_rwlock_trywrlock(&dead_r), EBUSY);
	dl = deadline_in(CLOCK_MONOTONIC, 20 * NSEC_PER_MSEC);
	CHECK_RC(hl_rwlock_timedwrlock(&dead_r, CLOCK_MONOTONIC, &dl), ETIMEDOUT);
	CHECK_RC(hl_rwlock_destroy(&dead_r), EBUSY);
	/* A read share is its thread's (docs/rwlock.md, "Nested reads"):
	 * another thread's unlock of it is EPERM, and it stays. */
	CHECK_RC(hl_rwlock_unlock(&dead_r), EPERM);
	hl_rwlock_holders(&dead_r, &w, &r);
	CHECK(w == 0 && r == 1, "after EPERM: rwlock holders %u/%u, expected one reader", w, r);
	CHECK_RC(hl_rwlock_trywrlock(&dead_r), EBUSY);
	printf("a thread that exited holding locks: they stay held (EBUSY, ETIMEDOUT, EPERM), "
	       "its read share too\n");
}

/* ---- TID reuse ---------------------------------------------------------- */

static atomic_uint reuse_tid;
static int reuse_lock_rc, reuse_unlock_rc, reuse_wr_rc, reuse_wunlock_rc;

static void *take_tid(void *arg)
{
	atomic_store(&reuse_tid, test_gettid());
	if (test_gettid() == atomic_load(&dead_tid)) {
		reuse_lock_rc = hl_mutex_lock(&dead_m);
		reuse_unlock_rc = hl_mutex_unlock(&dead_m);
		reuse_wr_rc = hl_rwlock_wrlock(&dead_w);
		reuse_wunlock_rc = hl_rwlock_unlock(&dead_w);
	}
	return NULL;
}

/* Makes the next thread get TID want, if this process may (root) and no
 * other process takes it first. */
static bool next_tid_is(uint32_t want)
{
	int fd = open("/proc/sys/kernel/ns_last_pid", O_WRONLY);
	if (fd < 0)
		return false;
	char buf[32];
	int len = snprintf(buf, sizeof(buf), "%u", want - 1);
	bool ok = write(fd, buf, (size_t)len) == len;
	close(fd);
	return ok;
}

static void test_tid_reuse(void)
{
	uint32_t dead = atomic_load(&dead_tid);
	for (int attempt = 0; attempt < 20; attempt++) {
		if (!next_tid_is(dead)) {
			printf("TID reuse: skipped (ns_last_pid cannot be written here: %s)\n",
			       strerror(errno));
			return;
		}
		pthread_t t;
		REQUIRE(pthread_create(&t, NULL, take_tid, NULL) == 0, "pthread_create");
		pthread_join(t, NULL);
		if (atomic_load(&reuse_tid) != dead)
			continue;       /* another task took it first: try again */
		printf("TID reuse: a new thread got TID %u of the thread that exited holding the "
		       "locks: lock %d (EDEADLK), unlock %d, then wrlock %d (EDEADLK), unlock %d\n",
		       dead, reuse_lock_rc, reuse_unlock_rc, reuse_wr_rc, reuse_wunlock_rc);
		CHECK_RC(reuse_lock_rc, EDEADLK);
		CHECK_RC(reuse_unlock_rc, 0);
		CHECK_RC(reuse_wr_rc, EDEADLK);
		CHECK_RC(reuse_wunlock_rc, 0);
		CHECK(hl_mutex_owner(&dead_m) == 0, "the mutex is still held");
		CHECK_RC(hl_mutex_destroy(&dead_m), 0);
		CHECK_RC(hl_rwlock_destroy(&dead_w), 0);
		return;
	}
	printf("TID reuse: skipped (other tasks took TID %u each time)\n", dead);
}

int main(void)
{
	test_nested_forks();    /* first: no other thread exists yet */
	test_exit_holding();
	test_tid_reuse();
	return test_finish("test_owner");
}
