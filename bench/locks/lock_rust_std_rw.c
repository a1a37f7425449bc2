/* SPDX-License-Identifier: MIT */
/* hotlock-bench adapter: rust-std-rw, Rust's std::sync::RwLock<()> (on
 * Linux a futex word with the reader count and waiting flags and a second
 * futex for writers; a waiting writer stops new readers; spins about 100
 * loads before it waits).  Built in bench/peers/; the guard of each hold
 * lives in the thread's slot of bench/peers.c.  Its futex calls are its
 * own, not counted.  The memory orders are Rust std's; this file only
 * forwards. */
#include "peers.h"
#include "rwlocks.h"

static int std_rw_init(void *l)
{
	int err = bench_rust_std_fits("rust-std-rw", hl_peer_std_rwlock_size(),
				      hl_peer_std_rwlock_align());

	if (!err)
		hl_peer_std_rwlock_init(l);
	return err;
}

static int std_rw_destroy(void *l)
{
	hl_peer_std_rwlock_destroy(l);
	return 0;
}

static int std_rw_rdlock(void *l)
{
	hl_peer_std_rwlock_rdlock(l, bench_rust_std_guard);
	return 0;
}

static int std_rw_wrlock(void *l)
{
	hl_peer_std_rwlock_wrlock(l, bench_rust_std_guard);
	return 0;
}

static int std_rw_rdunlock(void *l)
{
	(void)l; /* the guard names the lock */
	hl_peer_std_rwlock_rdunlock(bench_rust_std_guard);
	return 0;
}

static int std_rw_wrunlock(void *l)
{
	(void)l;
	hl_peer_std_rwlock_wrunlock(bench_rust_std_guard);
	return 0;
}

const struct bench_rwlock bench_rwlock_rust_std = {
	.name = "rust-std-rw",
	.summary = "Rust std::sync::RwLock: futex words, writers stop new readers (calls not counted)",
	.size = BENCH_PEER_LOCK_SIZE,
	.init = std_rw_init,
	.destroy = std_rw_destroy,
	.rdlock = std_rw_rdlock,
	.wrlock = std_rw_wrlock,
	.rdunlock = std_rw_rdunlock,
	.wrunlock = std_rw_wrunlock,
	.futex_counted = false,
	.peer = true,
};
