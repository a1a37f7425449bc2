/* SPDX-License-Identifier: MIT */
/* hotlock-bench adapter: rust-std, Rust's std::sync::Mutex<()> (on Linux a
 * futex word: a CAS to take it, a spin of about 100 loads while it is
 * held, then futex wait; unlock wakes one waiter when the word says
 * someone waits).  Built in bench/peers/.  Rust releases its locks by
 * dropping a guard, so lock leaves the guard in this thread's slot
 * (bench/peers.c) and unlock drops it from there.  Its futex calls
 * are its own, not counted.  The memory orders are Rust std's; this file
 * only forwards. */
#include "locks.h"
#include "peers.h"

static int std_init(void *l)
{
	int err = bench_rust_std_fits("rust-std", hl_peer_std_mutex_size(),
				       hl_peer_std_mutex_align());

	if (!err)
		hl_peer_std_mutex_init(l);
	return err;
}

static int std_destroy(void *l)
{
	hl_peer_std_mutex_destroy(l);
	return 0;
}

static int std_lock(void *l)
{
	hl_peer_std_mutex_lock(l, bench_rust_std_guard);
	return 0;
}

static int std_unlock(void *l)
{
	(void)l; /* the guard names the lock */
	hl_peer_std_mutex_unlock(bench_rust_std_guard);
	return 0;
}

const struct bench_lock bench_lock_rust_std = {
	.name = "rust-std",
	.summary = "Rust std::sync::Mutex: futex word, spins ~100 loads, then waits (calls not counted)",
	.size = BENCH_PEER_LOCK_SIZE,
	.init = std_init,
	.destroy = std_destroy,
	.lock = std_lock,
	.unlock = std_unlock,
	.futex_counted = false,
	.peer = true,
};
