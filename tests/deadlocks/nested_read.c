/* SPDX-License-Identifier: MIT */
/* nested_read: a thread takes a read lock it already holds while a writer
 * waits for the lock (tests/deadlocks.sh, docs/deadlocks.md).
 *
 *   nested_read [default|prefer-writer-nonrecursive|shared-nonrecursive]
 *
 * Thread nr-reader takes a read of rwlock l (nr_reader_first).  Thread
 * nr-writer then asks for the write lock (nr_writer_takes) and waits for
 * the read to go.  Once the writer is asleep in that wait (its state in
 * /proc is S: it does nothing else after it says it goes), the reader
 * takes a second read of l (nr_reader_again) and releases both; the
 * writer gets l, releases it, and the program says "nested_read: done
 * (KIND)" and ends with status 0.  l is of glibc's default kind, or of
 * PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP
 * (pthread_rwlockattr_setkind_np), whose waiting writers keep new readers
 * out, private or process-shared.
 *
 * Under hotlock-run a thread that holds a read of a lock gets another
 * whatever waits, in every kind (docs/design.md invariant 8): the program
 * ends in the private kinds, and the detector must report nothing (no
 * deadlock, and no lock-order edge from a lock to itself).  On glibc the
 * default kind lets the reader in too, but the nonrecursive kind keeps it
 * out behind the waiting writer, which waits for the reader's first read:
 * a deadlock, and the program never ends.  A process-shared rwlock stays
 * glibc's under the shim (docs/shim.md): there it deadlocks under
 * hotlock-run too, and the detector must report it. */
#include "dl.h"

#include <fcntl.h>
#include <stdatomic.h>
#include <stdbool.h>

static pthread_rwlock_t l;
static atomic_int reader_holds, writer_tid, writer_done;

DL_SITE static void nr_reader_first(void)
{
	dl_check(pthread_rwlock_rdlock(&l), "reader: first read of l");
}

DL_SITE static void nr_reader_again(void)
{
	dl_check(pthread_rwlock_rdlock(&l), "reader: second read of l");
}

DL_SITE static void nr_writer_takes(void)
{
	dl_check(pthread_rwlock_wrlock(&l), "writer: l");
}

/* The state letter of thread tid (R, S, D, ...), or 0 where it is gone. */
static char task_state(int tid)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	char *p = strrchr(buf, ')');    /* the name in parentheses may hold anything */
	return p && p[1] == ' ' ? p[2] : 0;
}

static void *reader(void *arg)
{
	dl_name("nested_read", "nr-reader");
	nr_reader_first();
	atomic_store(&reader_holds, 1);
	int tid;
	while (!(tid = atomic_load(&writer_tid)))
		dl_sleep_ms(1);
	/* The writer has nothing left to do but wait for l: asleep, it waits. */
	for (int ms = 0; task_state(tid) != 'S'; ms++) {
		if (atomic_load(&writer_done) || ms > 10000)
			dl_fail("nr-writer got l, or never slept, while nr-reader read it");
		dl_sleep_ms(1);
	}
	nr_reader_again();              /* on glibc's nonrecursive kind: never returns */
	dl_check(pthread_rwlock_unlock(&l), "reader: unlock");
	dl_check(pthread_rwlock_unlock(&l), "reader: unlock");
	return arg;
}

static void *writer(void *arg)
{
	dl_name("nested_read", "nr-writer");
	while (!atomic_load(&reader_holds))
		dl_sleep_ms(1);
	atomic_store(&writer_tid, gettid());
	nr_writer_takes();
	atomic_store(&writer_done, 1);
	dl_check(pthread_rwlock_unlock(&l), "writer: unlock");
	return arg;
}

int main(int argc, char **argv)
{
	const char *kind = argc > 1 ? argv[1] : "default";
	pthread_rwlockattr_t attr;
	int nonrecursive = PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP;
	dl_check(pthread_rwlockattr_init(&attr), "pthread_rwlockattr_init");
	bool shared = !strcmp(kind, "shared-nonrecursive");
	if (shared || !strcmp(kind, "prefer-writer-nonrecursive"))
		dl_check(pthread_rwlockattr_setkind_np(&attr, nonrecursive),
			 "pthread_rwlockattr_setkind_np");
	else if (strcmp(kind, "default"))
		dl_fail("usage: nested_read [default|prefer-writer-nonrecursive|shared-nonrecursive]");
	if (shared)
		dl_check(pthread_rwlockattr_setpshared(&attr, PTHREAD_PROCESS_SHARED),
			 "pthread_rwlockattr_setpshared");
	dl_check(pthread_rwlock_init(&l, &attr), "pthread_rwlock_init");
	dl_say("nested_read: pid %d", getpid());
	pthread_t t1 = dl_start(reader, NULL), t2 = dl_start(writer, NULL);
	dl_join(t1);
	dl_join(t2);
	dl_say("nested_read: done (%s)", kind);
	return 0;
}
