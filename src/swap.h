/* SPDX-License-Identifier: MIT */
/* hl_swap inside the library: the wait point's wake and wait with a
 * deadline as the waiting core takes it (internal.h), for hl_channel
 * (channel.c).  The algorithm is in swap.c. */
#ifndef HOTLOCK_SWAP_INTERNAL_H
#define HOTLOCK_SWAP_INTERNAL_H

#include <hotlock/swap.h>

#include "internal.h"

/* hl_wake, hl_wait_self and hl_swap, with dl NULL for no deadline; the
 * arguments are not checked.  slow: the spin record of the waiting thread
 * (swap.c's rule 3: nonzero when its last wait outlasted the spin budget),
 * read and written by that thread only, for waiters whose point does not
 * persist from one wait to the next (channel.c's calls); NULL keeps the
 * record in the point. */
HL_HIDDEN void hl__swap_wake(hl_swap_point_t *peer);
HL_HIDDEN int hl__swap_wait(hl_swap_point_t *self, const struct hl__deadline *dl,
			    _Atomic uint32_t *slow);
HL_HIDDEN int hl__swap(hl_swap_point_t *peer, hl_swap_point_t *self,
		       const struct hl__deadline *dl, _Atomic uint32_t *slow);

#endif
