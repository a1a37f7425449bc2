/* SPDX-License-Identifier: MIT */
/* hotlock-bench: the C side of the Rust peers (bench/peers/, see peers.h):
 * the checks that a Rust lock, and a Rust std guard, fit the room the
 * adapters give them, and the thread's guard slot of the Rust std
 * adapters. */
#include "peers.h"

#include <errno.h>
#include <stdalign.h>
#include <stdio.h>

_Thread_local alignas(BENCH_RUST_STD_GUARD_ALIGN)
	unsigned char bench_rust_std_guard[BENCH_RUST_STD_GUARD_SIZE];

int bench_peer_fits(const char *name, size_t size, size_t align)
{
	if (size <= BENCH_PEER_LOCK_SIZE && align <= BENCH_PEER_LOCK_SIZE)
		return 0;
	fprintf(stderr, "hotlock-bench: %s: the lock needs %zu bytes aligned to %zu, "
		"more than the %d the adapter reserves (bench/peers.h)\n",
		name, size, align, BENCH_PEER_LOCK_SIZE);
	return EINVAL;
}

int bench_rust_std_fits(const char *name, size_t size, size_t align)
{
	if (hl_peer_std_guard_size() > BENCH_RUST_STD_GUARD_SIZE ||
	    hl_peer_std_guard_align() > BENCH_RUST_STD_GUARD_ALIGN) {
		fprintf(stderr, "hotlock-bench: %s: Rust std's guard needs %zu bytes aligned "
			"to %zu, more than the slot's %d aligned to %d (bench/peers.h)\n",
			name, hl_peer_std_guard_size(), hl_peer_std_guard_align(),
			BENCH_RUST_STD_GUARD_SIZE, BENCH_RUST_STD_GUARD_ALIGN);
		return EINVAL;
	}
	return bench_peer_fits(name, size, align);
}
