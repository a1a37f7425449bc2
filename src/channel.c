/* SPDX-License-Identifier: MIT */
/* hl_channel: request/response calls from client threads to one server
 * thread, on hl_swap (swap.c).
 *
 * A call is a record on the client's stack: its request, the response and
 * status the server or a shutdown fills in, and the client's own wait
 * point (its first member: tests/channel.c finds it through
 * `current`).  The channel (all-zero = open, empty) is guarded by an
 * hl_mutex:
 *
 *   field            meaning
 *   ---------------  ----------------------------------------------------
 *   first, last      the calls not yet taken, oldest first (list: next)
 *   current          the call the server took and owes a reply, or NULL
 *   current_gone     1: the call taken last gave up waiting (timed out)
 *                    while the server served it; its reply is refused
 *   server_waiting   1: the server waits on `server` for a call (or is
 *                    about to): the next caller must wake it
 *   receiving        1: a thread is inside a receive; a second one is EBUSY
 *   closed           1: shut down
 *
 * The rule that keeps a record valid: a call is woken by exactly one
 * thread, the one that under the lock took the record off the list or
 * out of `current` to finish it (a reply, a shutdown), and that thread
 * writes the record's status and response before its wake (the wake's
 * release exchange orders them); a wake is the last time it touches the
 * record.  A client whose timed wait ran out takes the lock and looks: a
 * record still on the list is unlinked (ETIMEDOUT, never served); one that
 * is `current` is taken back (ETIMEDOUT; the server's reply then finds
 * current_gone and returns ECANCELED, keeping its response); a record in
 * neither has been finished by someone who is about to wake it, so the
 * client waits for that wake, with no deadline, and returns what it says.
 * No record is left while someone may still write to it, and no call
 * returns without a response or a status saying why not.
 *
 * The client's spin record.  Whether a client spins for its reply depends,
 * among swap.c's rules, on how long its last wait took (rule 3: a wait
 * answered within the spin budget lets the next one spin, a longer one
 * makes it park at once).  That record cannot live in the call's point,
 * which is new with every call: each call would start afresh and spin,
 * and a client whose server takes milliseconds would burn a spin budget
 * of CPU on every call.  Nor in the channel, which its clients share: one
 * client's wait includes the calls queued ahead of it.  So each thread
 * keeps one record per channel it calls, in a small thread-local table
 * (`records`: the last 8 channels it called, looked up by address; a
 * ninth takes the slots in turn, and a channel that lost its slot starts
 * afresh, as a first call does), read and written by that thread alone,
 * during its own waits: the server never sees it, and nothing outlives
 * the thread.  The table is a hint: a channel freed and another made at
 * its address inherits a record that one wait puts right.  The server's
 * own point is the channel's and persists, so its record stays in it.
 *
 * Call (client):
 *  1. Under the lock: ESHUTDOWN if closed; append the record; if the
 *     server waits, clear server_waiting (this caller wakes it).
 *  2. hl_swap(server, own point) if it must wake the server, else wait on
 *     its own point; either way with the thread's record for this channel.
 *  3. Woken: return the record's status and response.  Timed out: as above
 *     (the wait for a wake already coming keeps no record: it says nothing
 *     about how fast the server answers).
 * Receive (server):
 *  1. Under the lock: EBUSY if another receives, EALREADY if a reply is
 *     owed; receiving = 1.
 *  2. A call on the list: make it current, read its request (under the
 *     lock: a record that is current may be taken back by a client that
 *     timed out the moment the lock is free), return it.
 *  3. Closed: ESHUTDOWN.  Else server_waiting = 1, unlock, wait on the
 *     server point (the first time in reply_receive: swap with the client
 *     just replied to), lock, and go to 2; a wake that finds nothing (a
 *     caller that timed out meanwhile, a wake kept from earlier) only
 *     costs a look.
 * Reply: under the lock, take `current` (ECANCELED if current_gone, EPERM
 * if none), write the response; after the unlock, wake the client.
 * Shutdown: under the lock, closed = 1, unlink every waiting call with
 * status ESHUTDOWN, and take server_waiting; after the unlock, wake them
 * all (each one's `next` read before its wake) and the server.
 */
#include <errno.h>
#include <stddef.h>

#include <hotlock/swap.h>

#include "internal.h"
#include "swap.h"

struct call {
	hl_swap_point_t point;  /* the client waits here */
	struct call *next;      /* on the channel's list */
	void *req;
	void *resp;             /* written by the finisher before its wake */
	int status;             /* 0 or ESHUTDOWN, likewise */
};

/* The client records: 8 slots of 16 bytes and the next slot to replace,
 * thread-local, initial-exec (static TLS, as rwlock.c's read counts).  A
 * lookup compares at most 8 addresses; a thread that calls one channel
 * finds it in the first slot. */
#define RECORD_SLOTS 8
struct client_record {
	const hl_channel_t *ch;         /* the channel this slot is for, NULL: none */
	_Atomic uint32_t slow;          /* swap.c's rule 3 record */
};
static __thread struct client_record records[RECORD_SLOTS]
	__attribute__((tls_model("initial-exec")));
static __thread uint32_t records_next __attribute__((tls_model("initial-exec")));

/* The calling thread's record for its calls on ch (a fresh one, "not
 * slow", if it has none). */
static _Atomic uint32_t *client_record(const hl_channel_t *ch)
{
	for (int i = 0; i < RECORD_SLOTS; i++)
		if (records[i].ch == ch)
			return &records[i].slow;
	struct client_record *r = &records[records_next++ % RECORD_SLOTS];
	r->ch = ch;
	/* Relaxed: this thread's own record (swap.c reads and writes it
	 * relaxed too); no other thread has its address. */
	hl__store(&r->slow, 0, HL_RELAXED);
	return &r->slow;
}

static void lock(hl_channel_t *ch)
{
	int err = hl_mutex_lock(&ch->lock_);
	if (err)
		hl__bug("hl_channel: its lock failed", (unsigned long)err);
}

static void unlock(hl_channel_t *ch)
{
	hl_mutex_unlock(&ch->lock_);
}

int hl_channel_init(hl_channel_t *ch)
{
	if (!ch)
		return EINVAL;
	*ch = (hl_channel_t)HL_CHANNEL_INIT;
	return 0;
}

int hl_channel_destroy(hl_channel_t *ch)
{
	if (!ch)
		return EINVAL;
	lock(ch);
	bool busy = ch->first_ || ch->current_ || ch->receiving_;
	unlock(ch);
	if (busy)
		return EBUSY;
	return hl_mutex_destroy(&ch->lock_);
}

/* Unlinks c from the list, if it is there; returns whether it was. */
static bool unlink_call(hl_channel_t *ch, struct call *c)
{
	struct call *prev = NULL;
	for (struct call *p = ch->first_; p; prev = p, p = p->next) {
		if (p != c)
			continue;
		if (prev)
			prev->next = c->next;
		else
			ch->first_ = c->next;
		if (ch->last_ == c)
			ch->last_ = prev;
		return true;
	}
	return false;
}

static int call(hl_channel_t *ch, void *req, void **resp, const struct hl__deadline *dl)
{
	struct call c = { .req = req };
	_Atomic uint32_t *rec = client_record(ch);
	lock(ch);
	if (ch->closed_) {
		unlock(ch);
		return ESHUTDOWN;
	}
	if (ch->last_)
		((struct call *)ch->last_)->next = &c;
	else
		ch->first_ = &c;
	ch->last_ = &c;
	bool wake_server = ch->server_waiting_;
	ch->server_waiting_ = 0;
	unlock(ch);
	int err = wake_server ? hl__swap(&ch->server_, &c.point, dl, rec)
			      : hl__swap_wait(&c.point, dl, rec);
	if (err == ETIMEDOUT) {
		lock(ch);
		if (unlink_call(ch, &c)) {
			unlock(ch);
			return ETIMEDOUT;       /* never taken */
		}
		if (ch->current_ == &c) {
			ch->current_ = NULL;    /* taken, not replied: refuse the reply */
			ch->current_gone_ = 1;
			unlock(ch);
			return ETIMEDOUT;
		}
		unlock(ch);
		/* Finished by a reply or a shutdown whose wake is coming. */
		err = hl__swap_wait(&c.point, NULL, NULL);
	}
	if (err)
		hl__bug("hl_channel: a call's wait failed", (unsigned long)err);
	if (!c.status)
		*resp = c.resp;
	return c.status;
}

int hl_channel_call(hl_channel_t *ch, void *req, void **resp)
{
	if (!ch || !resp)
		return EINVAL;
	return call(ch, req, resp, NULL);
}

int hl_channel_call_timed(hl_channel_t *ch, void *req, void **resp, clockid_t clock,
			  const struct timespec *abstime)
{
	struct hl__deadline dl;
	int err = hl__deadline_init(&dl, clock, abstime);
	if (err)
		return err;
	if (!ch || !resp)
		return EINVAL;
	return call(ch, req, resp, &dl);
}

/* Finishes the call owed a reply (under the lock): the record to wake
 * after the unlock, or NULL with *err set. */
static struct call *take_reply(hl_channel_t *ch, void *resp, int *err)
{
	if (ch->current_gone_) {
		ch->current_gone_ = 0;
		*err = ECANCELED;
		return NULL;
	}
	struct call *c = ch->current_;
	if (!c) {
		*err = EPERM;
		return NULL;
	}
	ch->current_ = NULL;
	c->resp = resp;
	c->status = 0;
	*err = 0;
	return c;
}

/* Receive's steps 2-3, entered under the lock with receiving set; wakes
 * `replied` (a call just finished, or NULL) on the way, with a swap if the
 * server must wait.  Returns with the lock released. */
static int receive_locked(hl_channel_t *ch, void **req, const struct hl__deadline *dl,
			  struct call *replied)
{
	for (;;) {
		struct call *c = ch->first_;
		if (c) {
			ch->first_ = c->next;
			if (!ch->first_)
				ch->last_ = NULL;
			ch->current_ = c;
			*req = c->req;
			ch->receiving_ = 0;
			ch->server_waiting_ = 0;
			unlock(ch);
			if (replied)
				hl__swap_wake(&replied->point);
			return 0;
		}
		if (ch->closed_) {
			ch->receiving_ = 0;
			ch->server_waiting_ = 0;
			unlock(ch);
			if (replied)
				hl__swap_wake(&replied->point);
			return ESHUTDOWN;
		}
		ch->server_waiting_ = 1;
		unlock(ch);
		int err = replied ? hl__swap(&replied->point, &ch->server_, dl, NULL)
				  : hl__swap_wait(&ch->server_, dl, NULL);
		replied = NULL;
		lock(ch);
		if (err == ETIMEDOUT && !ch->first_) {
			ch->server_waiting_ = 0;
			ch->receiving_ = 0;
			unlock(ch);
			return ETIMEDOUT;
		}
		if (err && err != ETIMEDOUT)
			hl__bug("hl_channel: the server's wait failed", (unsigned long)err);
	}
}

/* Receive's step 1, under the lock: 0, or the error that refuses it. */
static int begin_receive(hl_channel_t *ch)
{
	if (ch->receiving_)
		return EBUSY;
	if (ch->current_ || ch->current_gone_)
		return EALREADY;
	ch->receiving_ = 1;
	return 0;
}

static int deadline_or_forever(struct hl__deadline *dl, clockid_t clock,
			       const struct timespec *abstime, const struct hl__deadline **out)
{
	*out = NULL;
	if (!abstime)
		return 0;
	*out = dl;
	return hl__deadline_init(dl, clock, abstime);
}

int hl_channel_receive(hl_channel_t *ch, void **req, clockid_t clock,
		       const struct timespec *abstime)
{
	struct hl__deadline dl;
	const struct hl__deadline *d;
	int err = deadline_or_forever(&dl, clock, abstime, &d);
	if (err)
		return err;
	if (!ch || !req)
		return EINVAL;
	lock(ch);
	if ((err = begin_receive(ch))) {
		unlock(ch);
		return err;
	}
	return receive_locked(ch, req, d, NULL);
}

int hl_channel_reply(hl_channel_t *ch, void *resp)
{
	if (!ch)
		return EINVAL;
	int err;
	lock(ch);
	struct call *c = take_reply(ch, resp, &err);
	unlock(ch);
	if (c)
		hl__swap_wake(&c->point);
	return err;
}

int hl_channel_reply_receive(hl_channel_t *ch, void *resp, void **req, clockid_t clock,
			     const struct timespec *abstime)
{
	struct hl__deadline dl;
	const struct hl__deadline *d;
	int err = deadline_or_forever(&dl, clock, abstime, &d);
	if (err)
		return err;
	if (!ch || !req)
		return EINVAL;
	lock(ch);
	if (ch->receiving_) {
		unlock(ch);
		return EBUSY;   /* before the reply: nothing done */
	}
	struct call *c = take_reply(ch, resp, &err);
	if (!c) {
		unlock(ch);
		return err;
	}
	ch->receiving_ = 1;
	return receive_locked(ch, req, d, c);
}

int hl_channel_serve(hl_channel_t *ch, void *(*handler)(void *req, void *arg),
		     void (*undelivered)(void *resp, void *arg), void *arg)
{
	if (!ch || !handler)
		return EINVAL;
	void *req;
	int err = hl_channel_receive(ch, &req, CLOCK_MONOTONIC, NULL);
	while (!err) {
		void *resp = handler(req, arg);
		err = hl_channel_reply_receive(ch, resp, &req, CLOCK_MONOTONIC, NULL);
		if (err == ECANCELED) {
			if (undelivered)
				undelivered(resp, arg);
			err = hl_channel_receive(ch, &req, CLOCK_MONOTONIC, NULL);
		}
	}
	return err == ESHUTDOWN ? 0 : err;
}

int hl_channel_shutdown(hl_channel_t *ch)
{
	if (!ch)
		return EINVAL;
	lock(ch);
	ch->closed_ = 1;
	struct call *waiting = ch->first_;
	ch->first_ = ch->last_ = NULL;
	for (struct call *c = waiting; c; c = c->next)
		c->status = ESHUTDOWN;
	bool wake_server = ch->server_waiting_;
	ch->server_waiting_ = 0;
	unlock(ch);
	while (waiting) {
		struct call *next = waiting->next;      /* before the wake frees it */
		hl__swap_wake(&waiting->point);
		waiting = next;
	}
	if (wake_server)
		hl__swap_wake(&ch->server_);
	return 0;
}
