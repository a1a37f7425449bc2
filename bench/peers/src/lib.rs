// SPDX-License-Identifier: MIT
//! The Rust locks hotlock is measured against, behind a C ABI for
//! hotlock-bench's adapters (bench/locks/lock_rust.c).
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
//! indirect call every adapter pays.  Every operation returns 0, as the
//! adapter's functions do: none of these locks reports an error.
//!
//! Nothing here can panic but a poisoned std lock, which cannot happen
//! (nothing panics while holding one; `panic = "abort"` in any case): the
//! poison is ignored by `into_inner`.

use std::ffi::c_int;
use std::mem::{align_of, size_of, MaybeUninit};
use std::sync::{Mutex, MutexGuard, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use parking_lot::lock_api::{RawMutex as _, RawRwLock as _};
use parking_lot::{RawMutex, RawRwLock};

/// The functions of a lock type `$t` that the adapter's init and destroy
/// call: its size and alignment, `init`, which writes `$value` into the
/// adapter's room for it, and, for a type that owns something, `destroy`,
/// which drops it there.
macro_rules! lock_object {
    ($t:ty = $value:expr; $size:ident, $align:ident, $init:ident $(, $destroy:ident)?) => {
        #[no_mangle]
        pub extern "C" fn $size() -> usize {
            size_of::<$t>()
        }

        #[no_mangle]
        pub extern "C" fn $align() -> usize {
            align_of::<$t>()
        }

        /// # Safety
        /// `l` points to as many writable bytes as the size function says,
        /// aligned as the align function says.
        #[no_mangle]
        pub unsafe extern "C" fn $init(l: *mut $t) {
            l.write($value);
        }

        $(
            /// # Safety
            /// `l` was initialised and is not held.
            #[no_mangle]
            pub unsafe extern "C" fn $destroy(l: *mut $t) -> c_int {
                l.drop_in_place();
                0
            }
        )?
    };
}

// ---- parking_lot --------------------------------------------------------

lock_object!(RawMutex = RawMutex::INIT;
             hl_peer_pl_mutex_size, hl_peer_pl_mutex_align, hl_peer_pl_mutex_init);
lock_object!(RawRwLock = RawRwLock::INIT;
             hl_peer_pl_rwlock_size, hl_peer_pl_rwlock_align, hl_peer_pl_rwlock_init);

/// `fn name(l)`: the operation `op` of the `lock_api` raw lock `$t` at `l`.
///
/// Safety, for each: `l` was initialised by its init; an unlock's caller
/// holds `l` (for a read share, `unlock_shared`; for writing,
/// `unlock_exclusive`).
macro_rules! raw_lock_ops {
    ($t:ty: $($name:ident => $op:ident),+ $(,)?) => {
        $(
            /// # Safety
            /// See `raw_lock_ops`.
            #[no_mangle]
            pub unsafe extern "C" fn $name(l: *const $t) -> c_int {
                (*l).$op();
                0
            }
        )+
    };
}

raw_lock_ops!(RawMutex:
    hl_peer_pl_mutex_lock => lock,
    hl_peer_pl_mutex_unlock => unlock,
);
raw_lock_ops!(RawRwLock:
    hl_peer_pl_rwlock_rdlock => lock_shared,
    hl_peer_pl_rwlock_wrlock => lock_exclusive,
    hl_peer_pl_rwlock_rdunlock => unlock_shared,
    hl_peer_pl_rwlock_wrunlock => unlock_exclusive,
);

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

lock_object!(StdMutex = Mutex::new(());
             hl_peer_std_mutex_size, hl_peer_std_mutex_align, hl_peer_std_mutex_init,
             hl_peer_std_mutex_destroy);
lock_object!(StdRwLock = RwLock::new(());
             hl_peer_std_rwlock_size, hl_peer_std_rwlock_align, hl_peer_std_rwlock_init,
             hl_peer_std_rwlock_destroy);

/// A hold of a std lock `$t` by a guard of type `$guard`: `fn lock(l,
/// slot)` takes the lock at `l` by its method `$take` (lock, read or
/// write) and leaves the guard in `slot`; `fn unlock(slot)` drops it.
///
/// Safety: for lock, `l` was initialised and outlives the hold, and `slot`
/// is the calling thread's, free, and `STD_GUARD_SIZE` bytes aligned to
/// `STD_GUARD_ALIGN`; for unlock, `slot` holds the guard that lock left,
/// from this thread.
macro_rules! std_hold {
    ($t:ty, $take:ident, $guard:ty: $lock:ident, $unlock:ident) => {
        /// # Safety
        /// See `std_hold`.
        #[no_mangle]
        pub unsafe extern "C" fn $lock(l: *const $t, slot: *mut MaybeUninit<$guard>) -> c_int {
            let guard = (*l).$take().unwrap_or_else(PoisonError::into_inner);
            slot.write(MaybeUninit::new(guard));
            0
        }

        /// # Safety
        /// See `std_hold`.
        #[no_mangle]
        pub unsafe extern "C" fn $unlock(slot: *mut MaybeUninit<$guard>) -> c_int {
            drop(slot.read().assume_init());
            0
        }
    };
}

std_hold!(StdMutex, lock, MutexGuard<'static, ()>:
          hl_peer_std_mutex_lock, hl_peer_std_mutex_unlock);
std_hold!(StdRwLock, read, RwLockReadGuard<'static, ()>:
          hl_peer_std_rwlock_rdlock, hl_peer_std_rwlock_rdunlock);
std_hold!(StdRwLock, write, RwLockWriteGuard<'static, ()>:
          hl_peer_std_rwlock_wrlock, hl_peer_std_rwlock_wrunlock);
