/* SPDX-License-Identifier: MIT */
/* hotlock-bench swap, mode "uring": the single-syscall swap the kernel
 * allows (Linux 6.7+), with raw io_uring syscalls, no liburing.
 *
 * One io_uring_enter submits IORING_OP_FUTEX_WAKE on the peer's word linked
 * (IOSQE_IO_LINK) to IORING_OP_FUTEX_WAIT on the caller's own word, and
 * waits for both completions.  Each thread has its own ring, set up by that
 * thread (IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN where the
 * kernel has them: the completions are then run in the waiting
 * io_uring_enter itself).  See uring.c. */
#ifndef HOTLOCK_BENCH_SWAP_URING_H
#define HOTLOCK_BENCH_SWAP_URING_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct swap_ring;

/* 0 when this kernel and process can run the uring swap (a ring can be set
 * up, and FUTEX_WAKE, FUTEX_WAIT and a linked pair give the expected
 * results); otherwise an errno value, with the reason in why ("io_uring_setup:
 * Operation not permitted (a seccomp filter or kernel.io_uring_disabled?)",
 * "the kernel lacks IORING_OP_FUTEX_WAIT (Linux 6.7+)"). */
int swap_uring_probe(char *why, size_t len);
/* The setup flags the rings get, as text ("SINGLE_ISSUER|DEFER_TASKRUN"),
 * once swap_uring_probe has succeeded. */
const char *swap_uring_setup_flags(void);

/* A ring for the calling thread only (0 or an errno value, reason in why). */
int swap_ring_open(struct swap_ring **out, char *why, size_t len);
void swap_ring_close(struct swap_ring *r);

/* Sets *peer to 1 and, in one io_uring_enter, wakes peer's waiter and waits
 * until *self is 1 (a FUTEX_WAIT that finds it set already completes with
 * -EAGAIN); then clears *self.  If the wait completes with *self still 0,
 * waits again (one io_uring_enter each).  0 or an errno value (what names
 * the failed step). */
int swap_ring_swap(struct swap_ring *r, _Atomic uint32_t *peer, _Atomic uint32_t *self,
		   const char **what);
/* Waits until *self is 1 (FUTEX_WAIT alone), then clears it. */
int swap_ring_wait(struct swap_ring *r, _Atomic uint32_t *self, const char **what);
/* io_uring_enter calls made on r. */
uint64_t swap_ring_enters(const struct swap_ring *r);

#endif
