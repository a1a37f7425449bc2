/* SPDX-License-Identifier: MIT */
/* What the deadlock detector's test programs share (tests/deadlocks/,
 * run by tests/deadlocks.sh; docs/deadlocks.md).
 *
 * Each program is a plain pthread program, not linked with hotlock: the
 * shim meets it as it meets any program.  What the runner checks in a
 * report is said on stdout, one line at a time, flushed at once (a program
 * that deadlocks never reaches its exit):
 *
 *   PROG: pid N                   the process, as the report's header names it
 *   PROG: thread NAME tid N       each thread, named so by itself before it
 *                                 takes a lock (the report's "thread N (NAME)")
 *
 * Every lock call of a program is made in a function of its own, never
 * inlined nor merged with another (DL_SITE, and the build's -fno-inline
 * -fno-optimize-sibling-calls), and checks what the call returned, so
 * that the call is never a tail call: the return address the shim
 * records for the call is inside that function, and the report names the
 * site by it.  No such function has a word in its name that the report
 * takes for lock plumbing and looks past (tools/report.c: mutex, lock,
 * rwlock, cond, guard, sem, futex, ...). */
#ifndef DL_H
#define DL_H

#ifndef _GNU_SOURCE            /* the build defines it; a copy built alone may not */
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define DL_SITE __attribute__((noinline, noclone))

/* A pthread call that must succeed: the program ends with status 1 if it
 * does not, so that a run that did not do what it says cannot pass. */
static inline void dl_check(int err, const char *what)
{
	if (err) {
		fprintf(stderr, "%s: %s\n", what, strerror(err));
		exit(1);
	}
}

static inline void dl_fail(const char *what)
{
	fprintf(stderr, "%s\n", what);
	exit(1);
}

/* One line on stdout, whole (threads print theirs at the same time) and
 * flushed: it is there even if the program never ends. */
__attribute__((format(printf, 1, 2)))
static inline void dl_say(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	flockfile(stdout);
	vprintf(fmt, ap);
	putchar('\n');
	fflush(stdout);
	funlockfile(stdout);
	va_end(ap);
}

/* The calling thread takes NAME (at most 15 characters, the kernel's
 * limit) and says it, with its TID, as "PROG: thread NAME tid N". */
static inline void dl_name(const char *prog, const char *name)
{
	dl_check(pthread_setname_np(pthread_self(), name), "pthread_setname_np");
	dl_say("%s: thread %s tid %d", prog, name, gettid());
}

static inline pthread_t dl_start(void *(*fn)(void *), void *arg)
{
	pthread_t t;
	dl_check(pthread_create(&t, NULL, fn, arg), "pthread_create");
	return t;
}

/* Waits for t.  In a program that deadlocks, t never ends, and neither
 * does the program. */
static inline void dl_join(pthread_t t)
{
	dl_check(pthread_join(t, NULL), "pthread_join");
}

static inline void dl_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

#endif
