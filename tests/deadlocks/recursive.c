/* SPDX-License-Identifier: MIT */
/* recursive: a recursive mutex taken again by its owner while the owner
 * holds another mutex taken after it (tests/deadlocks.sh,
 * docs/deadlocks.md).
 *
 *   recursive [ROUNDS]     (1000)
 *
 * Threads rec-1 and rec-2 each, ROUNDS times: take recursive mutex r
 * (rec_takes_r), then normal mutex n (rec_then_n), then r again
 * (rec_again_r: the owner's relock, which only counts), and release r, n
 * and r.  The threads take r in turn.  The only order is
 * r before n: the relock of r under n is no edge n -> r, since it cannot
 * wait (lockdep does the same), and the program ends with status 0 after
 * "recursive: done".  Neither hotlock-run --deadlocks nor --lock-order
 * reports anything. */
#include "dl.h"

static pthread_mutex_t r = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static pthread_mutex_t n = PTHREAD_MUTEX_INITIALIZER;
static int rounds = 1000;
static long work;                       /* under n */

DL_SITE static void rec_takes_r(void)
{
	dl_check(pthread_mutex_lock(&r), "r");
}

DL_SITE static void rec_then_n(void)
{
	dl_check(pthread_mutex_lock(&n), "n");
}

DL_SITE static void rec_again_r(void)
{
	dl_check(pthread_mutex_lock(&r), "r again");
}

static void *worker(void *arg)
{
	dl_name("recursive", arg);
	for (int i = 0; i < rounds; i++) {
		rec_takes_r();
		rec_then_n();
		rec_again_r();
		work++;
		dl_check(pthread_mutex_unlock(&r), "unlock r (inner)");
		dl_check(pthread_mutex_unlock(&n), "unlock n");
		dl_check(pthread_mutex_unlock(&r), "unlock r (outer)");
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		rounds = atoi(argv[1]);
	if (rounds < 1)
		dl_fail("usage: recursive [ROUNDS]");
	dl_say("recursive: pid %d", getpid());
	pthread_t t1 = dl_start(worker, "rec-1"), t2 = dl_start(worker, "rec-2");
	dl_join(t1);
	dl_join(t2);
	if (work != 2L * rounds)
		dl_fail("recursive: the count is wrong");
	dl_say("recursive: done");
	return 0;
}
