/* What internal.h declares beyond inline code: the library's one way of
 * stopping on a broken invariant.  It sits at the bottom of src/ (it calls
 * nothing of the library but, in the controlled-schedule build, the
 * schedule's report), so every layer may call it. */
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"

void hl__bug(const char *what, unsigned long value)
{
#ifdef HOTLOCK_SCHED
	hl__sched_bug(what, value);
#endif
	fprintf(stderr, "hotlock: internal error: %s (0x%lx)\n", what, value);
	abort();
}
