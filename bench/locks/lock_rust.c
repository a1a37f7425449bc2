/* SPDX-License-Identifier: MIT */
/* hotlock-bench adapters: the Rust peers, from the static library of
 * bench/peers/ (Rust, with its Cargo.lock; src/lib.rs puts parking_lot's
 * raw locks and Rust std's locks behind a C ABI, declared below):
 * parking_lot and parking_lot-rw, rust-std and rust-std-rw.  Their futex
 * calls are their own, not counted.  The memory orders are theirs; this
 * file only forwards.
 *
 * A Rust lock's size is known to Rust only, so an adapter reserves
 * PEER_LOCK_SIZE bytes (the harness aligns them to a cache line) and its
 * init checks the real size and alignment against that (EINVAL if they do
 * not fit: a newer crate grew its lock). */
#include <errno.h>
#include <stdalign.h>
#include <stdio.h>

#include "locks.h"
#include "rwlocks.h"

#define PEER_LOCK_SIZE 64

/* Inits the Rust lock at l by init, once its size and alignment (Rust's
 * answers) are known to fit the PEER_LOCK_SIZE bytes the harness gives on a
 * cache line; else EINVAL, and one line on stderr naming the lock. */
static int peer_init(void *l, const char *name, size_t size, size_t align,
		     void (*init)(void *))
{
	if (size > PEER_LOCK_SIZE || align > PEER_LOCK_SIZE) {
		fprintf(stderr, "hotlock-bench: %s: the lock needs %zu bytes aligned to "
			"%zu, more than the %d the adapter reserves "
			"(bench/locks/lock_rust.c)\n", name, size, align, PEER_LOCK_SIZE);
		return EINVAL;
	}
	init(l);
	return 0;
}

/* ---- parking_lot -------------------------------------------------------- */

/* parking_lot's RawMutex and RawRwLock (bench/peers/src/lib.rs). */
size_t hl_peer_pl_mutex_size(void);
size_t hl_peer_pl_mutex_align(void);
void hl_peer_pl_mutex_init(void *m);
int hl_peer_pl_mutex_lock(void *m);
int hl_peer_pl_mutex_unlock(void *m);
size_t hl_peer_pl_rwlock_size(void);
size_t hl_peer_pl_rwlock_align(void);
void hl_peer_pl_rwlock_init(void *l);
int hl_peer_pl_rwlock_rdlock(void *l);
int hl_peer_pl_rwlock_wrlock(void *l);
int hl_peer_pl_rwlock_rdunlock(void *l);
int hl_peer_pl_rwlock_wrunlock(void *l);

static int pl_destroy(void *l)
{
	(void)l; /* a raw parking_lot lock owns nothing */
	return 0;
}

/* parking_lot, Rust's most used third-party mutex (the raw lock under
 * parking_lot::Mutex, one byte: a CAS to take it, then a short spin with
 * exponential backoff and yields, then parking in parking_lot's global
 * table of wait queues; an unlock hands the lock directly to the woken
 * waiter about every 0.5 ms, "eventual fairness"). */
static int pl_init(void *l)
{
	return peer_init(l, "parking_lot", hl_peer_pl_mutex_size(),
			 hl_peer_pl_mutex_align(), hl_peer_pl_mutex_init);
}

BENCH_FORWARD(pl_lock, hl_peer_pl_mutex_lock)
BENCH_FORWARD(pl_unlock, hl_peer_pl_mutex_unlock)

const struct bench_lock bench_lock_parking_lot = {
	.name = "parking_lot",
	.summary = "Rust parking_lot::RawMutex: spin, then park in a global queue table (calls not counted)",
	.size = PEER_LOCK_SIZE,
	.init = pl_init,
	.destroy = pl_destroy,
	.lock = pl_lock,
	.unlock = pl_unlock,
	.futex_counted = false,
	.peer = true,
};

/* parking_lot-rw, the raw lock under Rust's parking_lot::RwLock (one word:
 * reader count and flags; writers and readers park in parking_lot's global
 * table of wait queues; a waiting writer stops new readers; an unlock hands
 * over directly about every 0.5 ms, "eventual fairness"). */
static int pl_rw_init(void *l)
{
	return peer_init(l, "parking_lot-rw", hl_peer_pl_rwlock_size(),
			 hl_peer_pl_rwlock_align(), hl_peer_pl_rwlock_init);
}

BENCH_FORWARD(pl_rw_rdlock, hl_peer_pl_rwlock_rdlock)
BENCH_FORWARD(pl_rw_wrlock, hl_peer_pl_rwlock_wrlock)
BENCH_FORWARD(pl_rw_rdunlock, hl_peer_pl_rwlock_rdunlock)
BENCH_FORWARD(pl_rw_wrunlock, hl_peer_pl_rwlock_wrunlock)

const struct bench_rwlock bench_rwlock_parking_lot = {
	.name = "parking_lot-rw",
	.summary = "Rust parking_lot::RawRwLock: one word, parks in a global queue table (calls not counted)",
	.size = PEER_LOCK_SIZE,
	.init = pl_rw_init,
	.destroy = pl_destroy,
	.rdlock = pl_rw_rdlock,
	.wrlock = pl_rw_wrlock,
	.rdunlock = pl_rw_rdunlock,
	.wrunlock = pl_rw_wrunlock,
	.futex_counted = false,
	.peer = true,
};

/* ---- Rust std ----------------------------------------------------------- */

/* std::sync::Mutex<()> and RwLock<()>: lock leaves its guard in a slot of
 * the calling thread's (hl_peer_std_guard_size() bytes, aligned to
 * hl_peer_std_guard_align()), unlock drops it from there. */
size_t hl_peer_std_guard_size(void);
size_t hl_peer_std_guard_align(void);
size_t hl_peer_std_mutex_size(void);
size_t hl_peer_std_mutex_align(void);
void hl_peer_std_mutex_init(void *m);
int hl_peer_std_mutex_destroy(void *m);
int hl_peer_std_mutex_lock(void *m, void *slot);
int hl_peer_std_mutex_unlock(void *slot);
size_t hl_peer_std_rwlock_size(void);
size_t hl_peer_std_rwlock_align(void);
void hl_peer_std_rwlock_init(void *l);
int hl_peer_std_rwlock_destroy(void *l);
int hl_peer_std_rwlock_rdlock(void *l, void *slot);
int hl_peer_std_rwlock_wrlock(void *l, void *slot);
int hl_peer_std_rwlock_rdunlock(void *slot);
int hl_peer_std_rwlock_wrunlock(void *slot);

/* The guard slot: the guard of the Rust std lock the calling thread holds
 * (a thread of a run holds at most one lock at a time), for rust-std and
 * rust-std-rw.  Twice the 16 bytes of Rust's guards today. */
#define STD_GUARD_SIZE 32
#define STD_GUARD_ALIGN 16
static _Thread_local alignas(STD_GUARD_ALIGN) unsigned char std_guard[STD_GUARD_SIZE];

/* peer_init for a Rust std lock, once its guards are known to fit the
 * slot. */
static int std_init(void *l, const char *name, size_t size, size_t align,
		    void (*init)(void *))
{
	if (hl_peer_std_guard_size() > STD_GUARD_SIZE ||
	    hl_peer_std_guard_align() > STD_GUARD_ALIGN) {
		fprintf(stderr, "hotlock-bench: %s: Rust std's guard needs %zu bytes aligned "
			"to %zu, more than the slot's %d aligned to %d "
			"(bench/locks/lock_rust.c)\n", name, hl_peer_std_guard_size(),
			hl_peer_std_guard_align(), STD_GUARD_SIZE, STD_GUARD_ALIGN);
		return EINVAL;
	}
	return peer_init(l, name, size, align, init);
}

/* rust-std, Rust's std::sync::Mutex<()> (on Linux a futex word: a CAS to
 * take it, a spin of about 100 loads while it is held, then futex wait;
 * unlock wakes one waiter when the word says someone waits).  Rust releases
 * its locks by dropping a guard, so lock leaves the guard in this thread's
 * slot and unlock drops it from there (the guard names the lock). */
static int std_mutex_init(void *l)
{
	return std_init(l, "rust-std", hl_peer_std_mutex_size(),
			hl_peer_std_mutex_align(), hl_peer_std_mutex_init);
}

static int std_lock(void *l)
{
	return hl_peer_std_mutex_lock(l, std_guard);
}

static int std_unlock(void *l)
{
	return hl_peer_std_mutex_unlock(std_guard);
}

BENCH_FORWARD(std_destroy, hl_peer_std_mutex_destroy)

const struct bench_lock bench_lock_rust_std = {
	.name = "rust-std",
	.summary = "Rust std::sync::Mutex: futex word, spins ~100 loads, then waits (calls not counted)",
	.size = PEER_LOCK_SIZE,
	.init = std_mutex_init,
	.destroy = std_destroy,
	.lock = std_lock,
	.unlock = std_unlock,
	.futex_counted = false,
	.peer = true,
};

/* rust-std-rw, Rust's std::sync::RwLock<()> (on Linux a futex word with the
 * reader count and waiting flags and a second futex for writers; a waiting
 * writer stops new readers; spins about 100 loads before it waits); the
 * guard of each hold lives in the thread's slot. */
static int std_rw_init(void *l)
{
	return std_init(l, "rust-std-rw", hl_peer_std_rwlock_size(),
			hl_peer_std_rwlock_align(), hl_peer_std_rwlock_init);
}

static int std_rw_rdlock(void *l)
{
	return hl_peer_std_rwlock_rdlock(l, std_guard);
}

static int std_rw_wrlock(void *l)
{
	return hl_peer_std_rwlock_wrlock(l, std_guard);
}

static int std_rw_rdunlock(void *l)
{
	return hl_peer_std_rwlock_rdunlock(std_guard);
}

static int std_rw_wrunlock(void *l)
{
	return hl_peer_std_rwlock_wrunlock(std_guard);
}

BENCH_FORWARD(std_rw_destroy, hl_peer_std_rwlock_destroy)

const struct bench_rwlock bench_rwlock_rust_std = {
	.name = "rust-std-rw",
	.summary = "Rust std::sync::RwLock: futex words, writers stop new readers (calls not counted)",
	.size = PEER_LOCK_SIZE,
	.init = std_rw_init,
	.destroy = std_rw_destroy,
	.rdlock = std_rw_rdlock,
	.wrlock = std_rw_wrlock,
	.rdunlock = std_rw_rdunlock,
	.wrunlock = std_rw_wrunlock,
	.futex_counted = false,
	.peer = true,
};
