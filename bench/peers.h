/* SPDX-License-Identifier: MIT */
/* hotlock-bench: the C side of the Rust peers, the static library of
 * bench/peers/ (parking_lot, Rust std): its C ABI, the object size their
 * adapters reserve, and the helpers of peers.c.  (abseil's adapters are
 * C++ and construct absl::Mutex in place: they need none of this.)
 *
 * A Rust lock's size is known to Rust only, so an adapter reserves
 * BENCH_PEER_LOCK_SIZE bytes (the harness aligns them to a cache line) and
 * its init checks the real size and alignment against that (EINVAL if they
 * do not fit: a newer crate grew its lock). */
#ifndef HOTLOCK_BENCH_PEERS_H
#define HOTLOCK_BENCH_PEERS_H

#include <stddef.h>

#define BENCH_PEER_LOCK_SIZE 64

/* parking_lot's RawMutex and RawRwLock (bench/peers/src/lib.rs). */
size_t hl_peer_pl_mutex_size(void);
size_t hl_peer_pl_mutex_align(void);
void hl_peer_pl_mutex_init(void *m);
void hl_peer_pl_mutex_lock(void *m);
void hl_peer_pl_mutex_unlock(void *m);
size_t hl_peer_pl_rwlock_size(void);
size_t hl_peer_pl_rwlock_align(void);
void hl_peer_pl_rwlock_init(void *l);
void hl_peer_pl_rwlock_rdlock(void *l);
void hl_peer_pl_rwlock_wrlock(void *l);
void hl_peer_pl_rwlock_rdunlock(void *l);
void hl_peer_pl_rwlock_wrunlock(void *l);

/* std::sync::Mutex<()> and RwLock<()>: lock leaves its guard in a slot of
 * the calling thread's (hl_peer_std_guard_size() bytes, aligned to
 * hl_peer_std_guard_align()), unlock drops it from there. */
size_t hl_peer_std_guard_size(void);
size_t hl_peer_std_guard_align(void);
size_t hl_peer_std_mutex_size(void);
size_t hl_peer_std_mutex_align(void);
void hl_peer_std_mutex_init(void *m);
void hl_peer_std_mutex_destroy(void *m);
void hl_peer_std_mutex_lock(void *m, void *slot);
void hl_peer_std_mutex_unlock(void *slot);
size_t hl_peer_std_rwlock_size(void);
size_t hl_peer_std_rwlock_align(void);
void hl_peer_std_rwlock_init(void *l);
void hl_peer_std_rwlock_destroy(void *l);
void hl_peer_std_rwlock_rdlock(void *l, void *slot);
void hl_peer_std_rwlock_wrlock(void *l, void *slot);
void hl_peer_std_rwlock_rdunlock(void *slot);
void hl_peer_std_rwlock_wrunlock(void *slot);

/* The guard slot (peers.c): the guard of the Rust std lock the calling
 * thread holds (a thread of a run holds at most one lock at a time), for
 * rust-std and rust-std-rw.  Twice the 16 bytes of Rust's guards today. */
#define BENCH_RUST_STD_GUARD_SIZE 32
#define BENCH_RUST_STD_GUARD_ALIGN 16
extern _Thread_local unsigned char bench_rust_std_guard[BENCH_RUST_STD_GUARD_SIZE];
/* bench_peer_fits for a Rust std lock, which also checks that its guards
 * fit the slot. */
int bench_rust_std_fits(const char *name, size_t size, size_t align);

/* 0 when an object of `size` bytes aligned to `align` fits the
 * BENCH_PEER_LOCK_SIZE bytes the harness gives on a cache line, else
 * EINVAL (and one line on stderr naming the lock). */
int bench_peer_fits(const char *name, size_t size, size_t align);

#endif
