/* SPDX-License-Identifier: MIT */
/* rwlock_writer: a deadlock between a reader and a writer of an rwlock,
 * through a mutex (tests/deadlocks.sh, docs/deadlocks.md).
 *
 * Thread rw-reader holds a read lock of l (glibc's default kind, which
 * prefers readers: only a writer's hold keeps a reader out), then asks for
 * mutex m; thread rw-writer holds m, then asks for the write lock of l.  A
 * barrier between each one's first and second lock makes the deadlock
 * certain: the writer waits for the read to be released, the reader for
 * the writer's mutex, forever, and the main thread waits for them in
 * pthread_join.  The lock word of l names no reader: the detector must
 * find the read hold in rw-reader's own list.
 *
 * What hotlock-run --deadlocks reports: a deadlock of 2 threads,
 *   rw-reader waits for mutex m at reader_then_m, and holds l for reading,
 *     taken at reader_reads_l;
 *   rw-writer waits for rwlock (write) l at writer_then_l, and holds m,
 *     taken at writer_takes_m. */
#include "dl.h"

static pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t both_hold_one;

DL_SITE static void reader_reads_l(void)
{
	dl_check(pthread_rwlock_rdlock(&l), "reader: l");
}

DL_SITE static void reader_then_m(void)
{
	dl_check(pthread_mutex_lock(&m), "reader: m");
}

DL_SITE static void writer_takes_m(void)
{
	dl_check(pthread_mutex_lock(&m), "writer: m");
}

DL_SITE static void writer_then_l(void)
{
	dl_check(pthread_rwlock_wrlock(&l), "writer: l");
}

static void *reader(void *arg)
{
	dl_name("rwlock_writer", "rw-reader");
	reader_reads_l();
	pthread_barrier_wait(&both_hold_one);
	reader_then_m();                /* never returns: rw-writer holds m */
	dl_fail("rw-reader got m while rw-writer held it");
	return arg;
}

static void *writer(void *arg)
{
	dl_name("rwlock_writer", "rw-writer");
	writer_takes_m();
	pthread_barrier_wait(&both_hold_one);
	writer_then_l();                /* never returns: rw-reader holds a read of l */
	dl_fail("rw-writer got l while rw-reader held a read of it");
	return arg;
}

int main(void)
{
	dl_say("rwlock_writer: pid %d", getpid());
	dl_check(pthread_barrier_init(&both_hold_one, NULL, 2), "pthread_barrier_init");
	pthread_t t1 = dl_start(reader, NULL), t2 = dl_start(writer, NULL);
	dl_join(t1);
	dl_join(t2);
	return 1;       /* not reached */
}
