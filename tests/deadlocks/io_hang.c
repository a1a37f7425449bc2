/* SPDX-License-Identifier: MIT */
/* io_hang: a mutex held for seconds by a thread that waits for something
 * else than a lock, and a thread that waits for the mutex: a hang, not a
 * deadlock (tests/deadlocks.sh, docs/deadlocks.md).
 *
 *   io_hang [io|condvar|ended] [SECONDS]   (io, 3)
 *
 * Thread hang-holder takes mutex m (hang_holder_takes_m), then, holding
 * it, waits SECONDS for the main thread:
 *   io       in read() on a pipe that stays empty until the main thread
 *            writes a byte to it;
 *   condvar  on condvar later, with mutex n (taken at hang_holder_takes_n,
 *            waited at hang_holder_sleeps), until the main thread sets go
 *            and signals;
 *   ended    not at all: the thread ends, holding m (having waited once
 *            for another mutex, so that it has a record, whose name must
 *            be the one it gave itself: it is gone before the collector
 *            could read it from /proc).
 * Thread hang-waiter asks for m (hang_waiter_wants_m) once the holder has
 * it, and waits.  After SECONDS the holder releases m, the waiter gets it,
 * and the program says "io_hang: done (MODE)" and ends with status 0; in
 * ended mode the waiter waits for ever (the test ends the program).
 *
 * What hotlock-run --deadlocks --deadlocks-after=0.5 reports: one hang,
 * hang-waiter waiting for mutex m at hang_waiter_wants_m, m held by
 * hang-holder, taken at hang_holder_takes_m, which is not waiting for a
 * lock (in io mode: asleep in the kernel's pipe read; in condvar mode: on
 * condvar later at hang_holder_sleeps; in ended mode: it has ended,
 * holding the lock).  No deadlock. */
#include "dl.h"

#include <stdatomic.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t n = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t gate = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t later = PTHREAD_COND_INITIALIZER;
static bool go;                         /* under n */
static int io_mode = 1, ended_mode;
static int pipe_fd[2];
static atomic_int holder_has_m;

DL_SITE static void hang_holder_takes_m(void)
{
	dl_check(pthread_mutex_lock(&m), "holder: m");
}

DL_SITE static void hang_holder_takes_n(void)
{
	dl_check(pthread_mutex_lock(&n), "holder: n");
}

DL_SITE static void hang_holder_sleeps(void)
{
	dl_check(pthread_cond_wait(&later, &n), "holder: wait for later");
}

DL_SITE static void hang_waiter_wants_m(void)
{
	dl_check(pthread_mutex_lock(&m), "waiter: m");
}

static void *holder(void *arg)
{
	dl_name("io_hang", "hang-holder");
	if (ended_mode) {               /* held by main: a wait */
		dl_check(pthread_mutex_lock(&gate), "holder: gate");
		dl_check(pthread_mutex_unlock(&gate), "holder: unlock gate");
	}
	hang_holder_takes_m();
	atomic_store(&holder_has_m, 1);
	if (ended_mode)
		return arg;
	if (io_mode) {
		char c;
		if (read(pipe_fd[0], &c, 1) != 1)
			dl_fail("holder: read from the pipe failed");
	} else {
		hang_holder_takes_n();
		while (!go)
			hang_holder_sleeps();
		dl_check(pthread_mutex_unlock(&n), "holder: unlock n");
	}
	dl_check(pthread_mutex_unlock(&m), "holder: unlock m");
	return arg;
}

static void *waiter(void *arg)
{
	dl_name("io_hang", "hang-waiter");
	hang_waiter_wants_m();
	dl_check(pthread_mutex_unlock(&m), "waiter: unlock m");
	return arg;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "io";
	double seconds = argc > 2 ? atof(argv[2]) : 3;
	io_mode = !strcmp(mode, "io");
	ended_mode = !strcmp(mode, "ended");
	if ((!io_mode && !ended_mode && strcmp(mode, "condvar")) || !(seconds > 0))
		dl_fail("usage: io_hang [io|condvar|ended] [SECONDS]");
	if (pipe(pipe_fd) != 0)
		dl_fail("pipe failed");
	dl_say("io_hang: pid %d", getpid());
	dl_check(pthread_mutex_lock(&gate), "main: gate");
	pthread_t t1 = dl_start(holder, NULL);
	dl_sleep_ms(50);
	dl_check(pthread_mutex_unlock(&gate), "main: unlock gate");
	while (!atomic_load(&holder_has_m))
		dl_sleep_ms(1);
	if (ended_mode)
		dl_join(t1);
	pthread_t t2 = dl_start(waiter, NULL);
	dl_sleep_ms((long)(seconds * 1000));
	if (io_mode) {
		if (write(pipe_fd[1], "x", 1) != 1)
			dl_fail("write to the pipe failed");
	} else {
		dl_check(pthread_mutex_lock(&n), "main: n");
		go = true;
		dl_check(pthread_cond_signal(&later), "main: signal later");
		dl_check(pthread_mutex_unlock(&n), "main: unlock n");
	}
	dl_join(t1);
	dl_join(t2);
	dl_say("io_hang: done (%s)", mode);
	return 0;
}
