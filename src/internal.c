/* SPDX-License-Identifier: MIT */
/* What internal.h declares beyond inline code: the library's one way of
 * stopping on a broken invariant, and a small file's read.  It sits at the
 * bottom of src/ (it calls nothing of the library but, in the
 * controlled-schedule build, the schedule's report), so every layer may
 * call it. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "internal.h"

void hl__bug(const char *what, unsigned long value)
{
#ifdef HOTLOCK_SCHED
	hl__sched_bug(what, value);
#endif
	fprintf(stderr, "hotlock: internal error: %s (0x%lx)\n", what, value);
	abort();
}

ssize_t hl__read_small_file(const char *path, char *buf, size_t len)
{
	int saved = errno;
	ssize_t n = -1;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, buf, len - 1);
		close(fd);
	}
	errno = saved;
	if (n <= 0)
		return -1;
	buf[n] = 0;
	return n;
}
