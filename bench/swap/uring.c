/* SPDX-License-Identifier: MIT */
/* hotlock-bench swap, mode "uring": a swap through io_uring's futex ops.
 *
 * The SQE of a futex op (io_uring/futex.c, io_futex_prep, Linux 6.7+):
 *
 *   field        FUTEX_WAIT                FUTEX_WAKE
 *   -----------  ------------------------  ------------------------
 *   opcode       51                        52
 *   addr         the futex word            the futex word
 *   addr2        the expected value        how many to wake
 *   addr3        bitset mask (not 0)       bitset mask (not 0)
 *   fd           futex2 flags: FUTEX2_SIZE_U32 | FUTEX2_PRIVATE
 *   len, rw_flags ("futex_flags"), buf_index, file_index: 0 (else -EINVAL)
 *
 * A private futex2 wait queued by io_uring hashes like one queued by
 * futex(2) or futex_wake(2) in the same process, so either kind of wake
 * reaches either kind of waiter.
 *
 * One swap, by the thread that owns the ring:
 *  1. store 1 in the peer's word (seq_cst: before the wake is issued);
 *  2. queue FUTEX_WAKE(peer, 1) with IOSQE_IO_LINK, then FUTEX_WAIT(self, 0):
 *     the wait is issued only after the wake completed;
 *  3. one io_uring_enter(to_submit 2, min_complete 2, GETEVENTS); more only
 *     if a signal cut the wait short;
 *  4. the wait's result: 0 (woken), or -EAGAIN: the word was not 0 any more
 *     when the wait was armed, i.e. the peer's reply (its store and its wake)
 *     came before our wait: nothing is lost, the word says so;
 *  5. while the own word is still 0 (a wake meant for an earlier round, or
 *     a spurious one), FUTEX_WAIT alone, one io_uring_enter each;
 *  6. store 0 in the own word (only its owner clears it).
 *
 * The ring: the SQ ring's tail and the CQ ring's head are ours; the kernel
 * moves the SQ head and CQ tail.  We store the SQ tail with release after
 * filling the SQEs (the kernel reads the tail with acquire), and load the CQ
 * tail with acquire before reading the CQEs it covers (the kernel stores it
 * with release); our CQ head store is release, so that the kernel reuses a
 * CQE only after we read it. */
#include <errno.h>
#include <linux/io_uring.h>
#include <linux/futex.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "uring.h"

/* __NR_io_uring_* come with the same kernel headers (5.1+) as the
 * IORING_OP_SENDMSG_ZC (6.0+) asserted below. */
#ifndef FUTEX2_SIZE_U32
#define FUTEX2_SIZE_U32 0x02
#endif
#ifndef FUTEX2_PRIVATE
#define FUTEX2_PRIVATE FUTEX_PRIVATE_FLAG
#endif
#ifndef FUTEX_BITSET_MATCH_ANY
#define FUTEX_BITSET_MATCH_ANY 0xffffffff
#endif
#ifndef IORING_SETUP_SINGLE_ISSUER
#define IORING_SETUP_SINGLE_ISSUER (1U << 12)
#endif
#ifndef IORING_SETUP_DEFER_TASKRUN
#define IORING_SETUP_DEFER_TASKRUN (1U << 13)
#endif

/* The op codes are enum members (no #ifdef can see them); Linux 6.7 added
 * them after READ_MULTISHOT (49) and WAITID (50), which follow SENDMSG_ZC,
 * the last one in the 6.1 headers. */
enum { OP_FUTEX_WAIT = 51, OP_FUTEX_WAKE = 52 };
_Static_assert(IORING_OP_SENDMSG_ZC == 48, "io_uring op numbering");

enum { RING_ENTRIES = 8, TAG_WAKE = 1, TAG_WAIT = 2 };

struct swap_ring {
	int fd;
	void *sq_map, *cq_map;          /* cq_map == sq_map with IORING_FEAT_SINGLE_MMAP */
	size_t sq_len, cq_len;
	struct io_uring_sqe *sqes;
	size_t sqes_len;
	_Atomic uint32_t *sq_head, *sq_tail, *cq_head, *cq_tail;
	uint32_t *sq_array;
	uint32_t sq_mask, cq_mask, sq_entries;
	struct io_uring_cqe *cqes;
	uint64_t enters;
};

/* Set by swap_uring_probe (the main thread, before the measuring threads
 * are created: pthread_create orders it before their reads). */
static unsigned ring_flags;
static bool probed;

static int setup(struct swap_ring *r, unsigned flags, char *why, size_t len)
{
	struct io_uring_params p;

	memset(&p, 0, sizeof p);
	p.flags = flags;
	r->fd = (int)syscall(__NR_io_uring_setup, RING_ENTRIES, &p);
	if (r->fd < 0) {
		int err = errno;
		if (err == ENOSYS)
			snprintf(why, len, "io_uring_setup: %s (kernel without io_uring, or a seccomp filter)", strerror(err));
		else if (err == EPERM || err == EACCES)
			snprintf(why, len, "io_uring_setup: %s (kernel.io_uring_disabled, or a seccomp filter)", strerror(err));
		else
			snprintf(why, len, "io_uring_setup: %s", strerror(err));
		return err;
	}
	r->sq_len = p.sq_off.array + p.sq_entries * sizeof(uint32_t);
	r->cq_len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	bool single = p.features & IORING_FEAT_SINGLE_MMAP;
	if (single && r->cq_len > r->sq_len)
		r->sq_len = r->cq_len;
	r->sq_map = mmap(NULL, r->sq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
			 r->fd, IORING_OFF_SQ_RING);
	if (r->sq_map == MAP_FAILED)
		goto map_failed;
	if (single) {
		r->cq_map = r->sq_map;
		r->cq_len = r->sq_len;
	} else {
		r->cq_map = mmap(NULL, r->cq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
				 r->fd, IORING_OFF_CQ_RING);
		if (r->cq_map == MAP_FAILED) {
			r->cq_map = NULL;
			goto map_failed;
		}
	}
	r->sqes_len = p.sq_entries * sizeof(struct io_uring_sqe);
	r->sqes = mmap(NULL, r->sqes_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
		       r->fd, IORING_OFF_SQES);
	if (r->sqes == MAP_FAILED) {
		r->sqes = NULL;
		goto map_failed;
	}
	char *sq = r->sq_map, *cq = r->cq_map;
	r->sq_head = (_Atomic uint32_t *)(sq + p.sq_off.head);
	r->sq_tail = (_Atomic uint32_t *)(sq + p.sq_off.tail);
	r->sq_mask = *(uint32_t *)(sq + p.sq_off.ring_mask);
	r->sq_array = (uint32_t *)(sq + p.sq_off.array);
	r->sq_entries = p.sq_entries;
	r->cq_head = (_Atomic uint32_t *)(cq + p.cq_off.head);
	r->cq_tail = (_Atomic uint32_t *)(cq + p.cq_off.tail);
	r->cq_mask = *(uint32_t *)(cq + p.cq_off.ring_mask);
	r->cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
	return 0;
map_failed:;
	int err = errno;
	if (r->sq_map == MAP_FAILED)
		r->sq_map = NULL;
	snprintf(why, len, "mmap of an io_uring ring: %s", strerror(err));
	return err;
}

void swap_ring_close(struct swap_ring *r)
{
	if (!r)
		return;
	if (r->sqes)
		munmap(r->sqes, r->sqes_len);
	if (r->cq_map && r->cq_map != r->sq_map)
		munmap(r->cq_map, r->cq_len);
	if (r->sq_map)
		munmap(r->sq_map, r->sq_len);
	if (r->fd >= 0)
		close(r->fd);
	free(r);
}

static int open_flags(struct swap_ring **out, unsigned flags, char *why, size_t len)
{
	struct swap_ring *r = calloc(1, sizeof *r);

	*out = NULL;
	if (!r) {
		snprintf(why, len, "out of memory");
		return ENOMEM;
	}
	int err = setup(r, flags, why, len);
	if (err) {
		swap_ring_close(r);
		return err;
	}
	*out = r;
	return 0;
}

int swap_ring_open(struct swap_ring **out, char *why, size_t len)
{
	return open_flags(out, ring_flags, why, len);
}

uint64_t swap_ring_enters(const struct swap_ring *r)
{
	return r->enters;
}

/* ---- submission and completion -------------------------------------------- */

static void queue_futex(struct swap_ring *r, uint8_t op, _Atomic uint32_t *word, uint64_t val,
			uint8_t sqe_flags, uint64_t tag)
{
	/* Relaxed: the SQ tail is ours alone. */
	uint32_t tail = atomic_load_explicit(r->sq_tail, memory_order_relaxed);
	uint32_t idx = tail & r->sq_mask;
	struct io_uring_sqe *sqe = &r->sqes[idx];

	/* The caller never has more than 2 of RING_ENTRIES in flight, and
	 * waits for their completions, by which time the kernel has consumed
	 * them: no check of the SQ head needed. */
	memset(sqe, 0, sizeof *sqe);
	sqe->opcode = op;
	sqe->flags = sqe_flags;
	sqe->fd = FUTEX2_SIZE_U32 | FUTEX2_PRIVATE;
	sqe->addr = (uint64_t)(uintptr_t)word;
	sqe->addr2 = val;
	sqe->addr3 = FUTEX_BITSET_MATCH_ANY;
	sqe->user_data = tag;
	r->sq_array[idx] = idx;
	/* Release: the kernel's acquire load of the tail sees the SQE. */
	atomic_store_explicit(r->sq_tail, tail + 1, memory_order_release);
}

/* Submits `submit` queued SQEs and collects `expect` completions; *wake_res
 * and *wait_res get the results by tag.  0 or an errno value. */
static int run_ring(struct swap_ring *r, unsigned submit, unsigned expect, int *wake_res,
		    int *wait_res, const char **what)
{
	while (expect) {
		long ret = syscall(__NR_io_uring_enter, r->fd, submit, expect,
				   IORING_ENTER_GETEVENTS, NULL, 0);
		r->enters++;
		if (ret < 0) {
			if (errno == EINTR)
				continue;
			*what = "io_uring_enter";
			return errno;
		}
		submit -= (unsigned)ret <= submit ? (unsigned)ret : submit;
		/* Relaxed: the CQ head is ours.  Acquire: pairs with the
		 * kernel's release store of the tail, orders the CQE reads. */
		uint32_t head = atomic_load_explicit(r->cq_head, memory_order_relaxed);
		uint32_t tail = atomic_load_explicit(r->cq_tail, memory_order_acquire);
		for (; head != tail && expect; head++, expect--) {
			const struct io_uring_cqe *cqe = &r->cqes[head & r->cq_mask];
			if (cqe->user_data == TAG_WAKE)
				*wake_res = cqe->res;
			else
				*wait_res = cqe->res;
		}
		/* Release: our reads of the CQEs come before the kernel may
		 * reuse their slots. */
		atomic_store_explicit(r->cq_head, head, memory_order_release);
	}
	return 0;
}

static int check_wait(int res, const char **what)
{
	/* -EAGAIN: the word was already set when the wait was armed. */
	if (res == 0 || res == -EAGAIN || res == -EINTR)
		return 0;
	*what = res == -ECANCELED ? "IORING_OP_FUTEX_WAIT (cancelled: its linked wake failed)"
				  : "IORING_OP_FUTEX_WAIT";
	return -res;
}

int swap_ring_wait(struct swap_ring *r, _Atomic uint32_t *self, const char **what)
{
	while (!atomic_load(self)) {
		int wake_res = 0, wait_res = 0;
		queue_futex(r, OP_FUTEX_WAIT, self, 0, 0, TAG_WAIT);
		int err = run_ring(r, 1, 1, &wake_res, &wait_res, what);
		if (!err)
			err = check_wait(wait_res, what);
		if (err)
			return err;
	}
	atomic_store(self, 0);
	return 0;
}

int swap_ring_swap(struct swap_ring *r, _Atomic uint32_t *peer, _Atomic uint32_t *self,
		   const char **what)
{
	int wake_res = 0, wait_res = 0;

	atomic_store(peer, 1);
	queue_futex(r, OP_FUTEX_WAKE, peer, 1, IOSQE_IO_LINK, TAG_WAKE);
	queue_futex(r, OP_FUTEX_WAIT, self, 0, 0, TAG_WAIT);
	int err = run_ring(r, 2, 2, &wake_res, &wait_res, what);
	if (err)
		return err;
	if (wake_res < 0) {
		*what = "IORING_OP_FUTEX_WAKE";
		return -wake_res;
	}
	err = check_wait(wait_res, what);
	return err ? err : swap_ring_wait(r, self, what);
}

/* ---- the probe ------------------------------------------------------------- */

static const char *op_missing(int fd)
{
	size_t size = sizeof(struct io_uring_probe) + 256 * sizeof(struct io_uring_probe_op);
	struct io_uring_probe *p = calloc(1, size);
	const char *missing = NULL;

	if (!p)
		return NULL;
	/* An old kernel without IORING_REGISTER_PROBE: the calls below tell. */
	if (syscall(__NR_io_uring_register, fd, IORING_REGISTER_PROBE, p, 256) == 0) {
		if (p->last_op < OP_FUTEX_WAIT || !(p->ops[OP_FUTEX_WAIT].flags & IO_URING_OP_SUPPORTED))
			missing = "IORING_OP_FUTEX_WAIT";
		else if (p->last_op < OP_FUTEX_WAKE ||
			 !(p->ops[OP_FUTEX_WAKE].flags & IO_URING_OP_SUPPORTED))
			missing = "IORING_OP_FUTEX_WAKE";
	}
	free(p);
	return missing;
}

int swap_uring_probe(char *why, size_t len)
{
	static const unsigned tries[] = {
		IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN, 0,
	};
	struct swap_ring *r = NULL;
	int err = EINVAL;

	for (size_t i = 0; i < sizeof tries / sizeof tries[0]; i++) {
		err = open_flags(&r, tries[i], why, len);
		if (!err) {
			ring_flags = tries[i];
			break;
		}
		if (err != EINVAL)
			return err;
	}
	if (err)
		return err;
	const char *missing = op_missing(r->fd);
	if (missing) {
		snprintf(why, len, "the kernel lacks %s (Linux 6.7+)", missing);
		swap_ring_close(r);
		return ENOSYS;
	}
	/* Each op alone, then the linked pair, on a word that is already 1:
	 * the wake finds nobody (0), the wait returns -EAGAIN at once. */
	_Atomic uint32_t word = 1;
	int wake_res = 1, wait_res = 0;
	const char *what = "";
	queue_futex(r, OP_FUTEX_WAKE, &word, 1, 0, TAG_WAKE);
	err = run_ring(r, 1, 1, &wake_res, &wait_res, &what);
	if (!err && wake_res != 0) {
		snprintf(why, len, "IORING_OP_FUTEX_WAKE on an unwaited word gave %d, not 0%s", wake_res,
			 wake_res == -EINVAL ? " (the kernel lacks it: Linux 6.7+)" : "");
		err = wake_res < 0 ? -wake_res : EPROTO;
		goto out;
	}
	wait_res = 0;
	queue_futex(r, OP_FUTEX_WAIT, &word, 0, 0, TAG_WAIT);
	if (!err)
		err = run_ring(r, 1, 1, &wake_res, &wait_res, &what);
	if (!err && wait_res != -EAGAIN) {
		snprintf(why, len, "IORING_OP_FUTEX_WAIT on a changed word gave %d, not -EAGAIN", wait_res);
		err = wait_res < 0 ? -wait_res : EPROTO;
		goto out;
	}
	wake_res = wait_res = 1;
	queue_futex(r, OP_FUTEX_WAKE, &word, 1, IOSQE_IO_LINK, TAG_WAKE);
	queue_futex(r, OP_FUTEX_WAIT, &word, 0, 0, TAG_WAIT);
	if (!err)
		err = run_ring(r, 2, 2, &wake_res, &wait_res, &what);
	if (!err && (wake_res != 0 || wait_res != -EAGAIN)) {
		snprintf(why, len, "FUTEX_WAKE linked to FUTEX_WAIT gave %d and %d, not 0 and -EAGAIN",
			 wake_res, wait_res);
		err = EPROTO;
		goto out;
	}
	if (err)
		snprintf(why, len, "%s: %s", what, strerror(err));
	else
		probed = true;
out:
	swap_ring_close(r);
	return err;
}

const char *swap_uring_setup_flags(void)
{
	if (!probed)
		return "none";
	return ring_flags ? "SINGLE_ISSUER|DEFER_TASKRUN" : "0";
}
