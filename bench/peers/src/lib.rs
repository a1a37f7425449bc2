// SPDX-License-Identifier: MIT
//! The Rust locks hotlock is measured against, behind a C ABI for
//! hotlock-bench's adapters (bench/locks/lock_parking_lot*.c, lock_rust_std*.c).
//!
//! * parking_lot: its raw mutex and raw rwlock (`lock_api` traits), the
//!   lock words under `parking_lot::Mutex` and `RwLock`: one byte and one
//!   word, spinning briefly then parking in a global hash table of queues,
//!   with "eventual fairness" (an unlock hands the lock over directly about
//!   every 0.5 ms).
//! * Rust std: `std::sync::Mutex<()>` and `RwLock<()>`, futex-based on
//!   Linux (a spin of about 100 loads, then futex wait).
//!
//! The adapter allocates the lock object (`*_size`/`*_align` bytes, checked
//! by the adapter's init) and calls init/destroy around a run.  parking_lot's
//! raw locks take an explicit unlock.  Rust std's locks release on a guard's
//! drop only, so lock moves the guard into a slot the caller gives (a
//! thread-local of the adapter, `STD_GUARD_SIZE` bytes) and unlock drops it
//! from there: the same thread that locked, as the guard requires.  The
//! slot costs a thread-local address, a few instructions, against the
//! indirect call every adapter pays.
//!
//! Nothing here can panic but a poisoned std lock, which cannot happen
//! (nothing panics while holding one; `panic = "abort"` in any case): the
//! poison is ignored by `into_inner`.

use std::mem::{align_of, size_of, MaybeUninit};
use std::sync::{Mutex, MutexGuard, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use parking_lot::lock_api::{RawMutex as _, RawRwLock as _};
use parking_lot::{RawMutex, RawRwLock};

// ---- parking_lot --------------------------------------------------------

#[no_mangle]
pub extern "C" fn hl_peer_pl_mutex_size() -> usize {
    size_of::<RawMutex>()
}

#[no_mangle]
pub extern "C" fn hl_peer_pl_mutex_align() -> usize {
    align_of::<RawMutex>()
}

/// # Safety
/// `m` points to `hl_peer_pl_mutex_size()` writable bytes, suitably aligned.
#[no_mangle]
pub unsafe extern "C" fn hl_peer_pl_mutex_init(m: *mut RawMutex) {
    m.write(RawMutex::INIT);
}

/// # Safety
/// `m` was initialised by `hl_peer_pl_mutex_init`.
#[no_mangle]
pub unsafe extern "C" fn hl_peer_pl_mutex_lock(m: *const RawMutex) {
    (*m).lock();
}

/// # Safety
/// The caller holds `m`.
#[no_mangle]
pub unsafe extern "C" fn hl_peer_pl_mutex_unlock(m: *const RawMutex) {
    (*m).unlock();
}

#[no_mangle]
pub extern "C" fn hl_peer_pl_rwlock_size() -> usize {
    size_of::<RawRwLock>()
}

#[no_mangle]
pub extern "C" fn hl_peer_pl_rwlock_align() -> usize {
    align_of::<RawRwLock>()
}

/// # Safety
/// `l` points to `hl_peer_pl_rwlock_size()` writable bytes, suitably aligned.
#[no_mangle]
pub unsafe extern "C" fn hl_peer_pl_rwlock_init(l: *mut RawRwLock) {
    l.write(RawRwLock::INIT);
}

/// # Safety
/// `l` was initialised by `hl_peer_pl_rwlock_init`.
#[no_mangle]
pub unsafe extern "C" fn hl_peer_pl_rwlock_rdlock(l: *const RawRwLock) {
    (*l).lock_shared();
}

/// # Safety
/// `l` was initialised by `hl_peer_pl_rwlock_init`.
#[no_mangle]
pub unsafe extern "C" fn hl_peer_pl_rwlock_wrlock(l: *const RawRwLock) {
    (*l).lock_exclusive();
}

/// # Safety
/// The caller holds a read share of `l`.
#[no_mangle]
pub unsafe extern "C" fn hl_peer_pl_rwlock_rdunlock(l: *const RawRwLock) {
    (*l).unlock_shared();
}

/// # Safety
/// The caller holds `l` for writing.
#[no_mangle]
pub unsafe extern "C" fn hl_peer_pl_rwlock_wrunlock(l: *const RawRwLock) {
    (*l).unlock_exclusive();
}

// ---- Rust std -----------------------------------------------------------

type StdMutex = Mutex<()>;
type StdRwLock = RwLock<()>;

/// The bytes of the largest guard the slot holds; the adapter's slot is
/// at least this big and aligned to `STD_GUARD_ALIGN`.
const STD_GUARD_SIZE: usize = max(
    size_of::<MutexGuard<'static, ()>>(),
    max(size_of::<RwLockReadGuard<'static, ()>>(), size_of::<RwLockWriteGuard<'static, ()>>()),
);
const STD_GUARD_ALIGN: usize = max(
    align_of::<MutexGuard<'static, ()>>(),
    max(align_of::<RwLockReadGuard<'static, ()>>(), align_of::<RwLockWriteGuard<'static, ()>>()),
);

const fn max(a: usize, b: usize) -> usize {
    if a > b {
        a
    } else {
        b
    }
}

#[no_mangle]
pub extern "C" fn hl_peer_std_guard_size() -> usize {
    STD_GUARD_SIZE
}

#[no_mangle]
pub extern "C" fn hl_peer_std_guard_align() -> usize {
    STD_GUARD_ALIGN
}

#[no_mangle]
pub extern "C" fn hl_peer_std_mutex_size() -> usize {
    size_of::<StdMutex>()
}

#[no_mangle]
pub extern "C" fn hl_peer_std_mutex_align() -> usize {
    align_of::<StdMutex>()
}

/// # Safety
/// `m` points to `hl_peer_std_mutex_size()` writable bytes, suitably aligned.
#[no_mangle]
pub unsafe extern "C" fn hl_peer_std_mutex_init(m: *mut StdMutex) {
    m.write(Mutex::new(()));
}

/// # Safety
/// `m` was initialised and is not held.
#[no_mangle]
pub unsafe extern "C" fn hl_peer_std_mutex_destroy(m: *mut StdMutex) {
    m.drop_in_place();
}

/// Locks `m` and leaves its guard in `slot`.
///
/// # Safety
/// `m` was initialised and outlives the hold; `slot` is the calling
/// thread's, free, and `STD_GUARD_SIZE` bytes aligned to `STD_GUARD_ALIGN`.
#[no_mangle]
pub unsafe extern "C" fn hl_peer_std_mutex_lock(
    m: *const StdMutex,
    slot: *mut MaybeUninit<MutexGuard<'static, ()>>,
) {
    let guard = (*m).lock().unwrap_or_else(PoisonError::into_inner);
    slot.write(MaybeUninit::new(guard));
}

/// Unlocks by dropping the guard `hl_peer_std_mutex_lock` left in `slot`.
///
/// # Safety
/// `slot` holds that guard, from this thread.
#[no_mangle]
pub unsafe extern "C" fn hl_peer_std_mutex_unlock(slot: *mut MaybeUninit<MutexGuard<'static, ()>>) {
    drop(slot.read().assume_init());
}

#[no_mangle]
pub extern "C" fn hl_peer_std_rwlock_size() -> usize {
    size_of::<StdRwLock>()
}

#[no_mangle]
pub extern "C" fn hl_peer_std_rwlock_align() -> usize {
    align_of::<StdRwLock>()
}

/// # Safety
/// `l` points to `hl_peer_std_rwlock_size()` writable bytes, suitably aligned.
#[no_mangle]
pub unsafe extern "C" fn hl_peer_std_rwlock_init(l: *mut StdRwLock) {
    l.write(RwLock::new(()));
}

/// # Safety
/// `l` was initialised and is not held.
#[no_mangle]
pub unsafe extern "C" fn hl_peer_std_rwlock_destroy(l: *mut StdRwLock) {
    l.drop_in_place();
}

/// # Safety
/// As `hl_peer_std_mutex_lock`.
#[no_mangle]
pub unsafe extern "C" fn hl_peer_std_rwlock_rdlock(
    l: *const StdRwLock,
    slot: *mut MaybeUninit<RwLockReadGuard<'static, ()>>,
) {
    let guard = (*l).read().unwrap_or_else(PoisonError::into_inner);
    slot.write(MaybeUninit::new(guard));
}

/// # Safety
/// As `hl_peer_std_mutex_lock`.
#[no_mangle]
pub unsafe extern "C" fn hl_peer_std_rwlock_wrlock(
    l: *const StdRwLock,
    slot: *mut MaybeUninit<RwLockWriteGuard<'static, ()>>,
) {
    let guard = (*l).write().unwrap_or_else(PoisonError::into_inner);
    slot.write(MaybeUninit::new(guard));
}

/// # Safety
/// `slot` holds the guard `hl_peer_std_rwlock_rdlock` left, from this thread.
#[no_mangle]
pub unsafe extern "C" fn hl_peer_std_rwlock_rdunlock(
    slot: *mut MaybeUninit<RwLockReadGuard<'static, ()>>,
) {
    drop(slot.read().assume_init());
}

/// # Safety
/// `slot` holds the guard `hl_peer_std_rwlock_wrlock` left, from this thread.
#[no_mangle]
pub unsafe extern "C" fn hl_peer_std_rwlock_wrunlock(
    slot: *mut MaybeUninit<RwLockWriteGuard<'static, ()>>,
) {
    drop(slot.read().assume_init());
}
