/* SPDX-License-Identifier: MIT */
/* hotlock-bench adapter: parking_lot-rw, the raw lock under Rust's
 * parking_lot::RwLock (one word: reader count and flags; writers and
 * readers park in parking_lot's global table of wait queues; a waiting
 * writer stops new readers; an unlock hands over directly about every
 * 0.5 ms, "eventual fairness").  Built in bench/peers/; its futex calls
 * are its own, not counted.  The memory orders are parking_lot's; this file
 * only forwards. */
#include "peers.h"
#include "rwlocks.h"

static int pl_rw_init(void *l)
{
	int err = bench_peer_fits("parking_lot-rw", hl_peer_pl_rwlock_size(),
				  hl_peer_pl_rwlock_align());

	if (!err)
		hl_peer_pl_rwlock_init(l);
	return err;
}

static int pl_rw_destroy(void *l)
{
	(void)l; /* a RawRwLock owns nothing */
	return 0;
}

static int pl_rw_rdlock(void *l)
{
	hl_peer_pl_rwlock_rdlock(l);
	return 0;
}

static int pl_rw_wrlock(void *l)
{
	hl_peer_pl_rwlock_wrlock(l);
	return 0;
}

static int pl_rw_rdunlock(void *l)
{
	hl_peer_pl_rwlock_rdunlock(l);
	return 0;
}

static int pl_rw_wrunlock(void *l)
{
	hl_peer_pl_rwlock_wrunlock(l);
	return 0;
}

const struct bench_rwlock bench_rwlock_parking_lot = {
	.name = "parking_lot-rw",
	.summary = "Rust parking_lot::RawRwLock: one word, parks in a global queue table (calls not counted)",
	.size = BENCH_PEER_LOCK_SIZE,
	.init = pl_rw_init,
	.destroy = pl_rw_destroy,
	.rdlock = pl_rw_rdlock,
	.wrlock = pl_rw_wrlock,
	.rdunlock = pl_rw_rdunlock,
	.wrunlock = pl_rw_wrunlock,
	.futex_counted = false,
	.peer = true,
};
