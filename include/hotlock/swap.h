/* SPDX-License-Identifier: MIT */
/* hotlock: hl_swap, "wake that thread and wait" in one call (the FUTEX_SWAP
 * operation of seed 003, built in user space), and hl_channel, a
 * request/response channel between client threads and a server thread on
 * top of it.  See docs/swap.md and the design comments in src/swap.c and
 * src/channel.c. */
#ifndef HOTLOCK_SWAP_H
#define HOTLOCK_SWAP_H

#include <stdint.h>
#include <sys/types.h> /* clockid_t, also in strict ISO C mode */
#include <time.h>

#include <hotlock/mutex.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A wait point: where one thread waits to be woken by another.  Each
 * thread that takes part in a swap has its own (one waiter at a time per
 * point), and wakes its peer through the peer's point.
 *
 * A wake is never lost: a wake that finds nobody waiting is kept (one, like
 * a binary semaphore: two wakes before a wait leave one) and the next wait
 * on that point returns at once.  So a thread may wake its peer before the
 * peer has begun to wait.
 *
 * All-zero bytes are a point with no waiter and no wake kept.  The fields
 * are private: accessed atomically by the library only (src/swap.c pins the
 * layout). */
typedef struct hl_swap_point {
	uint32_t state_;    /* futex word: idle, woken, spinning, parked */
	uint32_t cpu_;      /* 1 + the CPU its waiter last waited on, 0: unknown */
	uint32_t spin_;     /* the waiter's spin record (owner only) */
	uint32_t unused_;
} hl_swap_point_t;

#define HL_SWAP_POINT_INIT { 0, 0, 0, 0 }

/* Every call returns 0 or an errno value, as pthread does. */
int hl_swap_point_init(hl_swap_point_t *p);
/* EBUSY while a thread waits on p.  A wake kept on p is dropped. */
int hl_swap_point_destroy(hl_swap_point_t *p);

/* Wakes the thread waiting on peer, or, if none waits, keeps the wake for
 * peer's next wait.  Never blocks; at most one futex call. */
int hl_wake(hl_swap_point_t *peer);

/* Waits on self until a wake arrives (or takes the one kept there).
 * Acquire: what the waker wrote before its wake is visible after it.
 * EBUSY: another thread is already waiting on self (nothing waited). */
int hl_wait_self(hl_swap_point_t *self);
/* hl_wait_self until the absolute time abstime on clock (CLOCK_MONOTONIC or
 * CLOCK_REALTIME): ETIMEDOUT when it passed with no wake; a wake that comes
 * later is kept for the next wait.  EINVAL for another clock or a tv_nsec
 * outside [0, 1e9), checked before anything else. */
int hl_wait_self_timed(hl_swap_point_t *self, clockid_t clock, const struct timespec *abstime);

/* hl_wake(peer), then hl_wait_self(self), as one operation that decides
 * how to wait from what the wake found: it spins on self for a reply only
 * when peer runs (or is about to run) on another CPU and the machine has a
 * CPU to spare, and parks at once otherwise (src/swap.c says why).  peer
 * and self must differ (EINVAL).  The errors are hl_wait_self's; the wake
 * is made whatever the wait returns. */
int hl_swap(hl_swap_point_t *peer, hl_swap_point_t *self);
int hl_swap_timed(hl_swap_point_t *peer, hl_swap_point_t *self, clockid_t clock,
		  const struct timespec *abstime);

/* ---- hl_channel: calls from many client threads to one server thread ----
 *
 * A client's hl_channel_call hands the server a request pointer and sleeps
 * until the server replies with a response pointer: the server takes the
 * calls one at a time, in the order they were made.  A server that replies
 * and takes the next call in one step (hl_channel_reply_receive) and a
 * client that is the only one calling hand the CPU back and forth through
 * hl_swap, one call and one reply per round trip (a "flipcall").
 *
 * No request or response is lost: every call returns 0 with the server's
 * response to exactly that request, or an error that says the request was
 * not served (ETIMEDOUT before the server took it, ESHUTDOWN) or that the
 * reply will not come (ETIMEDOUT after: the server's hl_channel_reply then
 * returns ECANCELED and keeps the response).
 *
 * All-zero bytes are an open channel with no calls. */
typedef struct hl_channel {
	hl_mutex_t lock_;           /* guards everything below */
	void *first_;               /* calls not yet taken, oldest first */
	void *last_;
	void *current_;             /* the call the server has taken, not replied */
	hl_swap_point_t server_;    /* where the server waits for a call */
	uint32_t server_waiting_;   /* 1: the server waits (or is about to) */
	uint32_t closed_;           /* 1: hl_channel_shutdown was called */
	uint32_t receiving_;        /* 1: a thread is in a receive call */
	uint32_t current_gone_;     /* 1: the call taken last gave up waiting */
} hl_channel_t;

#define HL_CHANNEL_INIT { HL_MUTEX_INIT, 0, 0, 0, HL_SWAP_POINT_INIT, 0, 0, 0, 0 }

int hl_channel_init(hl_channel_t *ch);
/* EBUSY while calls are pending or a thread is in a receive call.  As
 * with any lock, destroy (or free) a channel only once no thread is inside
 * a call on it: every hl_channel_* call that began has returned. */
int hl_channel_destroy(hl_channel_t *ch);

/* Client: sends req and waits for the server's response (*resp).
 * ESHUTDOWN: the channel was shut down before the server took req (req was
 * not served). */
int hl_channel_call(hl_channel_t *ch, void *req, void **resp);
/* hl_channel_call until the absolute time abstime on clock.  ETIMEDOUT:
 * the time passed before a reply; if the server had taken req by then, it
 * may still be serving it, and its reply is refused (ECANCELED there).
 * EINVAL for a bad clock or tv_nsec, checked before anything else. */
int hl_channel_call_timed(hl_channel_t *ch, void *req, void **resp, clockid_t clock,
			  const struct timespec *abstime);

/* Server: waits for the next call and sets *req to its request; the server
 * then owes that call a reply.  abstime NULL waits forever (clock is then
 * ignored).  ESHUTDOWN: the channel is shut down and no call is left.
 * ETIMEDOUT: no call came in time.  EBUSY: another thread is receiving.
 * EALREADY: the call taken last has not been replied to. */
int hl_channel_receive(hl_channel_t *ch, void **req, clockid_t clock,
		       const struct timespec *abstime);
/* Server: replies resp to the call it took last.  ECANCELED: that client
 * gave up waiting (a timed call); resp was not delivered and stays the
 * server's.  EPERM: no call is owed a reply. */
int hl_channel_reply(hl_channel_t *ch, void *resp);
/* hl_channel_reply, then hl_channel_receive, with one swap where a client
 * waits for the next call.  If the reply fails (ECANCELED, EPERM) that is
 * returned and nothing is received. */
int hl_channel_reply_receive(hl_channel_t *ch, void *resp, void **req, clockid_t clock,
			     const struct timespec *abstime);
/* Server loop: receives each call, replies handler(req, arg), until the
 * channel is shut down (returns 0) or a receive fails (returns its error).
 * A response the client no longer waits for is passed to undelivered(resp,
 * arg) when that is not NULL. */
int hl_channel_serve(hl_channel_t *ch, void *(*handler)(void *req, void *arg),
		     void (*undelivered)(void *resp, void *arg), void *arg);

/* Shuts the channel down: calls made from now on, and calls waiting that
 * the server has not taken, fail with ESHUTDOWN at once; a call being
 * served still gets its reply; the server's receive returns ESHUTDOWN once
 * it has replied.  Idempotent. */
int hl_channel_shutdown(hl_channel_t *ch);

#ifdef __cplusplus
}
#endif
#endif
