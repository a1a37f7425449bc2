/* SPDX-License-Identifier: MIT */
/* thread_state: the state letter of one of this process's threads, from
 * /proc ('S' while it sleeps in the kernel), for the stats test programs
 * (C and C++) that must know a thread waits for a lock before they let it
 * go.  0 if it cannot be read. */
#ifndef HOTLOCK_TEST_THREAD_STATE_H
#define HOTLOCK_TEST_THREAD_STATE_H

#include <stdio.h>
#include <string.h>

static inline char thread_state(long tid)
{
	char path[64], buf[512];
	snprintf(path, sizeof path, "/proc/self/task/%ld/stat", tid);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	/* The name, in parentheses, may hold anything: the state follows
	 * the last ')'. */
	const char *close = strrchr(buf, ')');
	return close && close[1] == ' ' ? close[2] : 0;
}

#endif
