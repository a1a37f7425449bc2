/* SPDX-License-Identifier: MIT */
/* hotlock-bench adapter: parking_lot, Rust's most used third-party mutex
 * (the raw lock under parking_lot::Mutex, one byte: a CAS to take it,
 * then a short spin with exponential backoff and yields, then parking in
 * parking_lot's global table of wait queues; an unlock hands the lock
 * directly to the woken waiter about every 0.5 ms, "eventual fairness").
 * Built in bench/peers/ (Rust, with its Cargo.lock); its futex calls are
 * its own, not counted.  The memory orders are parking_lot's; this file
 * only forwards. */
#include "locks.h"
#include "peers.h"

static int pl_init(void *l)
{
	int err = bench_peer_fits("parking_lot", hl_peer_pl_mutex_size(),
				  hl_peer_pl_mutex_align());

	if (!err)
		hl_peer_pl_mutex_init(l);
	return err;
}

static int pl_destroy(void *l)
{
	(void)l; /* a RawMutex owns nothing */
	return 0;
}

static int pl_lock(void *l)
{
	hl_peer_pl_mutex_lock(l);
	return 0;
}

static int pl_unlock(void *l)
{
	hl_peer_pl_mutex_unlock(l);
	return 0;
}

const struct bench_lock bench_lock_parking_lot = {
	.name = "parking_lot",
	.summary = "Rust parking_lot::RawMutex: spin, then park in a global queue table (calls not counted)",
	.size = BENCH_PEER_LOCK_SIZE,
	.init = pl_init,
	.destroy = pl_destroy,
	.lock = pl_lock,
	.unlock = pl_unlock,
	.futex_counted = false,
	.peer = true,
};
