/* SPDX-License-Identifier: MIT */
/* hl_channel API test: every call, every documented error, and the
 * request/response guarantees of include/hotlock/swap.h, with real threads.
 *
 * Requests are integers in pointers, REQ(client, seq), and the response to
 * a request is RESP(req) = req + 1: a response that belongs to another
 * request is seen at once.  Where a test must know that a call is queued,
 * that the server waits, or that a call is being served, it reads the
 * channel's fields under the channel's own mutex (white-box, read only).
 *
 * Asserts:
 *  - HL_CHANNEL_INIT is all-zero bytes; static and automatic
 *    HL_CHANNEL_INIT, memset 0, calloc'd memory and hl_channel_init over
 *    0xff bytes are open channels: a call served by hl_channel_serve,
 *    shutdown, destroy 0;
 *  - EINVAL for every NULL argument, a NULL handler, 8 bad clocks and
 *    tv_nsec -1 and 1e9 (call_timed, receive, reply_receive); checked
 *    before anything else: on a shut-down channel (EINVAL, not ESHUTDOWN),
 *    while another thread receives (not EBUSY), while a reply is owed
 *    (receive: not EALREADY; reply_receive: the reply is not made, the call
 *    still gets a later reply); receive with no deadline ignores its clock;
 *  - 8 clients x N calls to one server, with hl_channel_serve and with
 *    receive/reply_receive by hand (some calls timed with a far deadline):
 *    every call returns 0 with exactly its own request's response, the
 *    server sees each client's requests once and in order, counts match on
 *    both sides;
 *  - FIFO: calls queued one after the other from 4 threads are received
 *    in that order;
 *  - a timed call that times out before the server takes it (deadline in
 *    20 ms, or already past; both clocks): ETIMEDOUT, not before the
 *    deadline, and the server never sees it (a receive with a past deadline
 *    gets ETIMEDOUT; the next call received is the next one made);
 *  - a timed call that times out after the server took it: ETIMEDOUT for
 *    the client; then receive is EALREADY, the server's reply (or
 *    reply_receive) returns ECANCELED, a second reply EPERM, and the
 *    channel goes on; with hl_channel_serve the undelivered callback gets
 *    exactly that response, once, and serve goes on serving;
 *  - hl_channel_shutdown with clients queued (each gets ESHUTDOWN, the
 *    server never sees them), with the server waiting in receive (untimed
 *    and timed: ESHUTDOWN; hl_channel_serve returns 0), with a call being
 *    served (queued ones get ESHUTDOWN, it gets its reply; reply_receive
 *    returns ESHUTDOWN after delivering it; serve returns 0); afterwards
 *    call, call_timed and receive are ESHUTDOWN at once, reply EPERM, a
 *    second shutdown 0;
 *  - receive with a deadline (both clocks): ETIMEDOUT, not early; past
 *    deadlines at once; the channel is usable afterwards;
 *  - EALREADY (receive while a reply is owed), EPERM (reply and
 *    reply_receive with nothing owed), EBUSY (receive and reply_receive
 *    while another thread receives; the first receiver still gets the next
 *    call), destroy EBUSY while a call is queued, while one is being
 *    served, and while a thread receives; 0 afterwards;
 *  - docs/swap.md rule 3 across calls (client and servers pinned to two
 *    CPUs, spin budget raised to 1 ms, counted through the client point's
 *    first waiting state, which the handler reads): after a 5 ms reply, at
 *    most 2 of the client's next 29 calls to that server spin (each call
 *    has a fresh point; the record is the client's), and at most 2 of 20
 *    when its calls alternate with calls to a fast server (the record is
 *    per channel); once that server answers at once, its calls spin again
 *    (3 within 1 s, unless the machine had more runnable threads than
 *    CPUs, which may delay the server's replies past the budget).
 * A thread that does not return is reported after 10 s; a main thread stuck
 * in a call, by the phase alarm (45 s).  Seed: HOTLOCK_SEED (printed). */
#include "call.h"
#include "common.h"

#include <hotlock/hotlock.h>

#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdatomic.h>

#define HANG_MS 10000
#define SHORT_NS (20 * NSEC_PER_MSEC)
#define FAR_NS (60 * NSEC_PER_SEC)
#define NCLIENTS 8

#define REQ(client, seq) ((void *)(uintptr_t)((((uint64_t)(client) << 24 | (uint64_t)(seq)) + 1) << 4))
#define RESP(req) ((void *)((uintptr_t)(req) + 1))
#define REQ_CLIENT(req) ((int)((((uintptr_t)(req) >> 4) - 1) >> 24))
#define REQ_SEQ(req) ((long)((((uintptr_t)(req) >> 4) - 1) & 0xffffff))


static const char *clock_name(clockid_t c)
{
	return c == CLOCK_MONOTONIC ? "CLOCK_MONOTONIC" : "CLOCK_REALTIME";
}

/* ---- the channel's fields, read under its mutex ---- */

struct peek {
	void *first, *last, *current;
	uint32_t server_waiting, closed, receiving, current_gone;
};

static struct peek peek(hl_channel_t *ch)
{
	struct peek p;
	REQUIRE(hl_mutex_lock(&ch->lock_) == 0, "lock the channel's mutex");
	p.first = ch->first_;
	p.last = ch->last_;
	p.current = ch->current_;
	p.server_waiting = ch->server_waiting_;
	p.closed = ch->closed_;
	p.receiving = ch->receiving_;
	p.current_gone = ch->current_gone_;
	hl_mutex_unlock(&ch->lock_);
	return p;
}

static void describe(hl_channel_t *ch, char *buf, size_t len)
{
	struct peek p = peek(ch);
	snprintf(buf, len, "first %p last %p current %p server_waiting %u closed %u receiving %u "
		 "current_gone %u", p.first, p.last, p.current, p.server_waiting, p.closed,
		 p.receiving, p.current_gone);
}

enum cond { Q_CHANGED, Q_SERVER_WAITING, Q_CURRENT, Q_RECEIVING };

/* Polls (up to HANG_MS) until the channel shows cond; for Q_CHANGED, until
 * last_ differs from *prev (a call was appended), which it updates. */
static void await(hl_channel_t *ch, enum cond c, void **prev, const char *what)
{
	int64_t end = now_ns() + HANG_MS * NSEC_PER_MSEC;
	for (;;) {
		struct peek p = peek(ch);
		bool ok = c == Q_CHANGED ? p.last != *prev && p.last :
			  c == Q_SERVER_WAITING ? p.server_waiting :
			  c == Q_CURRENT ? p.current != NULL : p.receiving;
		if (ok) {
			if (prev)
				*prev = p.last;
			return;
		}
		if (now_ns() > end) {
			char buf[256];
			describe(ch, buf, sizeof(buf));
			REQUIRE(0, "%s: the channel never showed state %d: %s", what, c, buf);
		}
		sleep_ns(100 * NSEC_PER_USEC); /* polling: not synchronisation */
	}
}

/* ---- a client on its own thread ---- */

struct client {
	struct call call;
	hl_channel_t *ch;
	void *req, *resp;
	bool timed;
	clockid_t clk;
	struct timespec abs;
	int64_t after_ns;
};

static int client_fn(void *arg)
{
	struct client *c = arg;
	c->resp = NULL;
	int rc = c->timed ? hl_channel_call_timed(c->ch, c->req, &c->resp, c->clk, &c->abs)
			  : hl_channel_call(c->ch, c->req, &c->resp);
	c->after_ns = clock_ns(c->clk);
	return rc;
}

static void client_start(struct client *c, hl_channel_t *ch, void *req, bool timed,
			 clockid_t clk, int64_t rel_ns)
{
	c->ch = ch;
	c->req = req;
	c->timed = timed;
	c->clk = clk;
	c->abs = deadline_in(clk, rel_ns);
	call_start(&c->call, client_fn, c);
}

/* Starts a client and waits until its call is queued. */
static void client_queued(struct client *c, hl_channel_t *ch, void *req, bool timed,
			  int64_t rel_ns, void **last, const char *what)
{
	client_start(c, ch, req, timed, CLOCK_MONOTONIC, rel_ns);
	await(ch, Q_CHANGED, last, what);
}

/* Joins a client that must have got exactly its response. */
static void client_join_ok(struct client *c, const char *what)
{
	int rc = call_join(&c->call, HANG_MS, what);
	CHECK(rc == 0, "%s: call returned %d (%s)", what, rc, strerror(rc));
	CHECK(rc || c->resp == RESP(c->req), "%s: response %p to request %p, expected %p", what,
	      c->resp, c->req, RESP(c->req));
}

/* ---- a server on its own thread ---- */

struct server {
	struct call call;
	hl_channel_t *ch;
	int mode;               /* 0: hl_channel_serve; 1: by hand; 2: one receive */
	bool timed;             /* mode 2: a far deadline */
	/* hl_channel_serve's counts (only the server thread writes them). */
	long handled, undelivered;
	void *last_undelivered;
	long per_client[NCLIENTS]; /* next seq expected from each client */
	int bad;
	void *got;              /* mode 2: the request received */
	sem_t *gate;            /* if set: the handler waits on it first */
	sem_t in_handler;       /* posted as the handler begins */
};

static void *handler(void *req, void *arg)
{
	struct server *s = arg;
	sem_post(&s->in_handler);
	if (s->gate)
		while (sem_wait(s->gate) && errno == EINTR)
			;
	int c = REQ_CLIENT(req);
	if (c >= 0 && c < NCLIENTS) {
		if (REQ_SEQ(req) != s->per_client[c] && !s->bad++)
			fprintf(stderr, "FAIL server: request %ld of client %d, expected %ld\n",
				REQ_SEQ(req), c, s->per_client[c]);
		s->per_client[c] = REQ_SEQ(req) + 1;
	}
	s->handled++;
	return RESP(req);
}

static void on_undelivered(void *resp, void *arg)
{
	struct server *s = arg;
	s->undelivered++;
	s->last_undelivered = resp;
}

static int server_fn(void *arg)
{
	struct server *s = arg;
	if (s->mode == 0)
		return hl_channel_serve(s->ch, handler, on_undelivered, s);
	if (s->mode == 2) {
		struct timespec far = deadline_in(CLOCK_REALTIME, FAR_NS);
		return hl_channel_receive(s->ch, &s->got, CLOCK_REALTIME, s->timed ? &far : NULL);
	}
	void *req;
	int rc = hl_channel_receive(s->ch, &req, CLOCK_MONOTONIC, NULL);
	while (rc == 0) {
		void *resp = handler(req, s);
		rc = hl_channel_reply_receive(s->ch, resp, &req, CLOCK_MONOTONIC, NULL);
		if (rc == ECANCELED) {
			on_undelivered(resp, s);
			rc = hl_channel_receive(s->ch, &req, CLOCK_MONOTONIC, NULL);
		}
	}
	return rc;
}

static void server_start(struct server *s, hl_channel_t *ch, int mode, bool timed, sem_t *gate)
{
	memset(s, 0, sizeof(*s));
	s->ch = ch;
	s->mode = mode;
	s->timed = timed;
	s->gate = gate;
	sem_init(&s->in_handler, 0, 0);
	call_start(&s->call, server_fn, s);
}

/* ---- init forms ---- */

static hl_channel_t static_ch = HL_CHANNEL_INIT;

static void check_usable(hl_channel_t *ch, const char *what)
{
	struct server s;
	struct client c;
	server_start(&s, ch, 0, false, NULL);
	for (int i = 0; i < 3; i++) {
		client_start(&c, ch, REQ(0, i), i == 1, CLOCK_MONOTONIC, FAR_NS);
		client_join_ok(&c, what);
	}
	CHECK_RC(hl_channel_shutdown(ch), 0);
	CHECK_RC(call_join(&s.call, HANG_MS, what), 0);
	CHECK(s.handled == 3, "%s: server handled %ld of 3", what, s.handled);
	CHECK_RC(hl_channel_destroy(ch), 0);
}

static void test_init_forms(void)
{
	hl_channel_t zero, init = HL_CHANNEL_INIT;
	memset(&zero, 0, sizeof(zero));
	CHECK(memcmp(&zero, &init, sizeof(zero)) == 0, "HL_CHANNEL_INIT is not all-zero bytes");
	check_usable(&static_ch, "static HL_CHANNEL_INIT");
	check_usable(&init, "automatic HL_CHANNEL_INIT");
	check_usable(&zero, "memset 0");
	hl_channel_t *heap = calloc(1, sizeof(*heap));
	REQUIRE(heap, "calloc");
	check_usable(heap, "calloc");
	memset(heap, 0xff, sizeof(*heap));
	CHECK_RC(hl_channel_init(heap), 0);
	check_usable(heap, "hl_channel_init over 0xff bytes");
	free(heap);
	printf("init forms: 5 kinds of fresh channel serve calls\n");
}

/* ---- EINVAL ---- */

static void *null_handler(void *req, void *arg)
{
	return req;
}

static void test_einval(void)
{
	hl_channel_t ch = HL_CHANNEL_INIT;
	void *req, *resp;
	struct timespec ok = deadline_in(CLOCK_MONOTONIC, FAR_NS);
	const clockid_t bad_clocks[] = { CLOCK_PROCESS_CPUTIME_ID, CLOCK_THREAD_CPUTIME_ID,
					 CLOCK_MONOTONIC_RAW, CLOCK_BOOTTIME,
					 CLOCK_REALTIME_COARSE, CLOCK_MONOTONIC_COARSE,
					 12345, -1 };

	CHECK_RC(hl_channel_init(NULL), EINVAL);
	CHECK_RC(hl_channel_destroy(NULL), EINVAL);
	CHECK_RC(hl_channel_shutdown(NULL), EINVAL);
	CHECK_RC(hl_channel_call(NULL, REQ(0, 0), &resp), EINVAL);
	CHECK_RC(hl_channel_call(&ch, REQ(0, 0), NULL), EINVAL);
	CHECK_RC(hl_channel_call_timed(NULL, REQ(0, 0), &resp, CLOCK_MONOTONIC, &ok), EINVAL);
	CHECK_RC(hl_channel_call_timed(&ch, REQ(0, 0), NULL, CLOCK_MONOTONIC, &ok), EINVAL);
	CHECK_RC(hl_channel_call_timed(&ch, REQ(0, 0), &resp, CLOCK_MONOTONIC, NULL), EINVAL);
	CHECK_RC(hl_channel_receive(NULL, &req, CLOCK_MONOTONIC, NULL), EINVAL);
	CHECK_RC(hl_channel_receive(&ch, NULL, CLOCK_MONOTONIC, NULL), EINVAL);
	CHECK_RC(hl_channel_reply(NULL, RESP(0)), EINVAL);
	CHECK_RC(hl_channel_reply_receive(NULL, RESP(0), &req, CLOCK_MONOTONIC, NULL), EINVAL);
	CHECK_RC(hl_channel_reply_receive(&ch, RESP(0), NULL, CLOCK_MONOTONIC, NULL), EINVAL);
	CHECK_RC(hl_channel_serve(NULL, null_handler, NULL, NULL), EINVAL);
	CHECK_RC(hl_channel_serve(&ch, NULL, NULL, NULL), EINVAL);
	for (size_t i = 0; i < sizeof(bad_clocks) / sizeof(bad_clocks[0]); i++) {
		struct timespec ts = { ok.tv_sec, 0 };
		CHECK_RC(hl_channel_call_timed(&ch, REQ(0, 0), &resp, bad_clocks[i], &ts), EINVAL);
		CHECK_RC(hl_channel_receive(&ch, &req, bad_clocks[i], &ts), EINVAL);
		CHECK_RC(hl_channel_reply_receive(&ch, RESP(0), &req, bad_clocks[i], &ts), EINVAL);
	}
	for (int n = 0; n < 2; n++) {
		struct timespec ts = { ok.tv_sec, n ? 1000000000l : -1 };
		for (int c = 0; c < 2; c++) {
			clockid_t clk = c ? CLOCK_REALTIME : CLOCK_MONOTONIC;
			CHECK_RC(hl_channel_call_timed(&ch, REQ(0, 0), &resp, clk, &ts), EINVAL);
			CHECK_RC(hl_channel_receive(&ch, &req, clk, &ts), EINVAL);
			CHECK_RC(hl_channel_reply_receive(&ch, RESP(0), &req, clk, &ts), EINVAL);
		}
	}
	struct timespec badns = { ok.tv_sec, -1 };
	struct peek p = peek(&ch);
	CHECK(!p.first && !p.current && !p.receiving && !p.closed, "refused calls left state");

	/* Before anything else: while another thread receives (not EBUSY). */
	struct server s;
	server_start(&s, &ch, 2, false, NULL);
	await(&ch, Q_RECEIVING, NULL, "einval receiver");
	CHECK_RC(hl_channel_receive(&ch, &req, CLOCK_MONOTONIC, &badns), EINVAL);
	CHECK_RC(hl_channel_reply_receive(&ch, RESP(0), &req, 12345, &ok), EINVAL);
	/* Receive without a deadline ignores the clock: the call is taken. */
	struct client c;
	client_start(&c, &ch, REQ(0, 0), false, CLOCK_MONOTONIC, 0);
	CHECK_RC(call_join(&s.call, HANG_MS, "receiver"), 0);
	CHECK(s.got == REQ(0, 0), "received %p, expected %p", s.got, REQ(0, 0));
	/* While a reply is owed: EINVAL, not EALREADY; reply_receive makes no reply. */
	CHECK_RC(hl_channel_receive(&ch, &req, CLOCK_MONOTONIC, &badns), EINVAL);
	CHECK_RC(hl_channel_reply_receive(&ch, RESP(REQ(0, 0)), &req, CLOCK_BOOTTIME, &ok),
		 EINVAL);
	CHECK(!call_done_within(&c.call, 0), "reply_receive refused with EINVAL replied");
	CHECK_RC(hl_channel_reply(&ch, RESP(REQ(0, 0))), 0);
	client_join_ok(&c, "client of the EINVAL test");
	/* Receive with no deadline and a bad clock: the clock is ignored. */
	client_start(&c, &ch, REQ(0, 1), false, CLOCK_MONOTONIC, 0);
	CHECK_RC(hl_channel_receive(&ch, &req, 12345, NULL), 0);
	CHECK(req == REQ(0, 1), "received %p, expected %p", req, REQ(0, 1));
	CHECK_RC(hl_channel_reply(&ch, RESP(req)), 0);
	client_join_ok(&c, "client of a receive with a bad clock and no deadline");
	/* On a shut-down channel: EINVAL, not ESHUTDOWN. */
	CHECK_RC(hl_channel_shutdown(&ch), 0);
	CHECK_RC(hl_channel_call_timed(&ch, REQ(0, 0), &resp, CLOCK_MONOTONIC, &badns), EINVAL);
	CHECK_RC(hl_channel_call_timed(&ch, REQ(0, 0), &resp, 12345, &ok), EINVAL);
	CHECK_RC(hl_channel_call(&ch, REQ(0, 0), NULL), EINVAL);
	CHECK_RC(hl_channel_receive(&ch, &req, CLOCK_MONOTONIC, &badns), EINVAL);
	CHECK_RC(hl_channel_destroy(&ch), 0);
	printf("EINVAL: NULLs, 8 bad clocks, tv_nsec -1 and 1e9; before EBUSY, EALREADY, "
	       "ESHUTDOWN and the reply; receive without a deadline ignores its clock\n");
}

/* ---- many clients ---- */

struct mclient {
	pthread_t th;
	hl_channel_t *ch;
	int index;
	long n, ok;
	int bad;
	test_rng_t rng;
};

static void *mclient_main(void *arg)
{
	struct mclient *m = arg;
	for (long i = 0; i < m->n; i++) {
		void *req = REQ(m->index, i), *resp = NULL;
		int rc;
		if (rng_below(&m->rng, 4) == 0) {
			clockid_t clk = rng_below(&m->rng, 2) ? CLOCK_REALTIME : CLOCK_MONOTONIC;
			struct timespec far = deadline_in(clk, FAR_NS);
			rc = hl_channel_call_timed(m->ch, req, &resp, clk, &far);
		} else {
			rc = hl_channel_call(m->ch, req, &resp);
		}
		if (rc || resp != RESP(req)) {
			if (!m->bad++)
				fprintf(stderr, "FAIL client %d call %ld: returned %d, response %p, "
					"expected %p\n", m->index, i, rc, resp, RESP(req));
			if (rc)
				break;
		} else {
			m->ok++;
		}
		if (rng_below(&m->rng, 16) == 0)
			sched_yield();
	}
	return NULL;
}

static void test_many_clients(int mode, test_rng_t *rng)
{
	const char *what = mode ? "8 clients, receive/reply_receive by hand"
				: "8 clients, hl_channel_serve";
	long n = HOTLOCK_SANITIZED ? 600 : 3000;
	hl_channel_t ch = HL_CHANNEL_INIT;
	struct server s;
	struct mclient m[NCLIENTS];
	server_start(&s, &ch, mode, false, NULL);
	for (int i = 0; i < NCLIENTS; i++) {
		m[i] = (struct mclient){ .ch = &ch, .index = i, .n = n };
		rng_seed(&m[i].rng, rng_next(rng), (uint64_t)i);
		REQUIRE(pthread_create(&m[i].th, NULL, mclient_main, &m[i]) == 0, "pthread_create");
	}
	long total = 0;
	for (int i = 0; i < NCLIENTS; i++) {
		pthread_join(m[i].th, NULL);
		CHECK(m[i].ok == n && !m[i].bad, "%s: client %d got %ld of %ld responses right (%d "
		      "wrong)", what, i, m[i].ok, n, m[i].bad);
		total += m[i].ok;
	}
	CHECK_RC(hl_channel_shutdown(&ch), 0);
	int rc = call_join(&s.call, HANG_MS, what);
	CHECK(rc == (mode ? ESHUTDOWN : 0), "%s: server returned %d", what, rc);
	CHECK(s.handled == NCLIENTS * n && s.undelivered == 0 && !s.bad, "%s: server handled "
	      "%ld of %ld, %ld undelivered, %d out of order", what, s.handled, NCLIENTS * n,
	      s.undelivered, s.bad);
	for (int i = 0; i < NCLIENTS; i++)
		CHECK(s.per_client[i] == n, "%s: server saw %ld calls of client %d", what,
		      s.per_client[i], i);
	CHECK_RC(hl_channel_destroy(&ch), 0);
	printf("%s: %ld calls, each answered with its own response, counted on both sides\n",
	       what, total);
}

/* ---- FIFO ---- */

static void test_fifo(void)
{
	hl_channel_t ch = HL_CHANNEL_INIT;
	struct client c[4];
	void *last = NULL, *req;
	for (int i = 0; i < 4; i++)
		client_queued(&c[i], &ch, REQ(i, 0), i == 2, FAR_NS, &last, "fifo");
	for (int i = 0; i < 4; i++) {
		int rc = i ? hl_channel_reply_receive(&ch, RESP(req), &req, CLOCK_MONOTONIC, NULL)
			   : hl_channel_receive(&ch, &req, CLOCK_MONOTONIC, NULL);
		CHECK_RC(rc, 0);
		CHECK(req == REQ(i, 0), "fifo: received %p as call %d, expected %p", req, i,
		      REQ(i, 0));
	}
	CHECK_RC(hl_channel_reply(&ch, RESP(req)), 0);
	for (int i = 0; i < 4; i++)
		client_join_ok(&c[i], "fifo client");
	CHECK_RC(hl_channel_destroy(&ch), 0);
	printf("fifo: 4 queued calls received in the order they were made\n");
}

/* ---- timed calls ---- */

static void test_timed_before_taken(void)
{
	for (int k = 0; k < 4; k++) {
		clockid_t clk = k % 2 ? CLOCK_REALTIME : CLOCK_MONOTONIC;
		bool past = k >= 2;
		hl_channel_t ch = HL_CHANNEL_INIT;
		struct client c;
		void *req;
		client_start(&c, &ch, REQ(1, 0), true, clk, past ? -NSEC_PER_MSEC : SHORT_NS);
		int rc = call_join(&c.call, HANG_MS, "timed client");
		CHECK(rc == ETIMEDOUT, "timed call (%s, %s) returned %d, expected ETIMEDOUT",
		      clock_name(clk), past ? "past deadline" : "20 ms", rc);
		CHECK(c.after_ns >= ts_to_ns(&c.abs), "timed call returned %lld ns early",
		      (long long)(ts_to_ns(&c.abs) - c.after_ns));
		struct peek p = peek(&ch);
		CHECK(!p.first && !p.last && !p.current, "a call that timed out is still queued");
		struct timespec pst = { 0, 0 };
		CHECK_RC(hl_channel_receive(&ch, &req, clk, &pst), ETIMEDOUT);
		CHECK_RC(hl_channel_destroy(&ch), 0);
		CHECK_RC(hl_channel_init(&ch), 0);
		/* The next call received is the next one made. */
		client_start(&c, &ch, REQ(1, 1), false, clk, 0);
		CHECK_RC(hl_channel_receive(&ch, &req, clk, NULL), 0);
		CHECK(req == REQ(1, 1), "received %p after a call timed out, expected %p", req,
		      REQ(1, 1));
		CHECK_RC(hl_channel_reply(&ch, RESP(req)), 0);
		client_join_ok(&c, "call after a timed-out one");
		CHECK_RC(hl_channel_destroy(&ch), 0);
	}
	printf("timed call before the server took it (both clocks, 20 ms and past): ETIMEDOUT, "
	       "not early, never received\n");
}

/* A timed call that the server takes before its deadline and does not
 * reply to until the client has given up.  Variants: 0 receive EALREADY,
 * reply ECANCELED; 1 reply_receive ECANCELED; 2 hl_channel_serve. */
static void timed_after_taken(int variant, clockid_t clk)
{
	hl_channel_t ch = HL_CHANNEL_INIT;
	struct client c;
	void *req = NULL;
	int64_t rel = (HOTLOCK_SANITIZED ? 300 : 100) * NSEC_PER_MSEC;
	if (variant == 2) {
		struct server s;
		sem_t gate;
		sem_init(&gate, 0, 0);
		server_start(&s, &ch, 0, false, &gate);
		await(&ch, Q_SERVER_WAITING, NULL, "serve");
		client_start(&c, &ch, REQ(2, 0), true, clk, rel);
		/* The handler has the request; the client gives up. */
		while (sem_wait(&s.in_handler) && errno == EINTR)
			;
		int rc = call_join(&c.call, HANG_MS, "timed client of serve");
		CHECK(rc == ETIMEDOUT, "timed call taken by serve returned %d, expected ETIMEDOUT",
		      rc);
		CHECK(c.after_ns >= ts_to_ns(&c.abs), "timed call returned early");
		sem_post(&gate);
		/* A normal call after it is served. */
		client_start(&c, &ch, REQ(2, 1), false, clk, 0);
		sem_post(&gate);
		client_join_ok(&c, "call after a cancelled one (serve)");
		CHECK_RC(hl_channel_shutdown(&ch), 0);
		CHECK_RC(call_join(&s.call, HANG_MS, "serve"), 0);
		CHECK(s.undelivered == 1 && s.last_undelivered == RESP(REQ(2, 0)),
		      "serve: %ld undelivered, last %p, expected 1, %p", s.undelivered,
		      s.last_undelivered, RESP(REQ(2, 0)));
		CHECK(s.handled == 2, "serve handled %ld of 2", s.handled);
		sem_destroy(&gate);
		CHECK_RC(hl_channel_destroy(&ch), 0);
		return;
	}
	int tries = 0, rc;
	do {
		client_start(&c, &ch, REQ(2, 0), true, clk, rel);
		/* Receive by the client's deadline (a loaded machine may let it
		 * pass first: then the call was never taken; try again). */
		rc = hl_channel_receive(&ch, &req, clk, &c.abs);
		if (rc == ETIMEDOUT)
			CHECK_RC(call_join(&c.call, HANG_MS, "timed client"), ETIMEDOUT);
	} while (rc == ETIMEDOUT && ++tries < 5);
	REQUIRE(rc == 0, "receive of a timed call: %d (%d tries)", rc, tries);
	CHECK(req == REQ(2, 0), "received %p", req);
	rc = call_join(&c.call, HANG_MS, "timed client");
	CHECK(rc == ETIMEDOUT, "timed call taken by the server returned %d, expected ETIMEDOUT",
	      rc);
	CHECK(c.after_ns >= ts_to_ns(&c.abs), "timed call returned early");
	if (variant == 0) {
		CHECK_RC(hl_channel_receive(&ch, &req, clk, NULL), EALREADY);
		CHECK_RC(hl_channel_reply(&ch, RESP(REQ(2, 0))), ECANCELED);
	} else {
		void *next = (void *)1;
		struct timespec pst = { 0, 0 };
		CHECK_RC(hl_channel_reply_receive(&ch, RESP(REQ(2, 0)), &next, clk, &pst),
			 ECANCELED);
		CHECK(next == (void *)1, "reply_receive that failed received %p", next);
	}
	CHECK_RC(hl_channel_reply(&ch, RESP(REQ(2, 0))), EPERM);
	client_start(&c, &ch, REQ(2, 1), true, clk, FAR_NS);
	CHECK_RC(hl_channel_receive(&ch, &req, clk, NULL), 0);
	CHECK(req == REQ(2, 1), "received %p after a cancelled call, expected %p", req, REQ(2, 1));
	CHECK_RC(hl_channel_reply(&ch, RESP(req)), 0);
	client_join_ok(&c, "call after a cancelled one");
	CHECK_RC(hl_channel_destroy(&ch), 0);
}

static void test_timed_after_taken(void)
{
	for (int v = 0; v < 3; v++)
		for (int k = 0; k < 2; k++)
			timed_after_taken(v, k ? CLOCK_REALTIME : CLOCK_MONOTONIC);
	printf("timed call after the server took it (both clocks): ETIMEDOUT; receive EALREADY, "
	       "reply and reply_receive ECANCELED, then EPERM; serve's undelivered callback "
	       "gets the response\n");
}

/* ---- shutdown ---- */

static void check_closed(hl_channel_t *ch, const char *what)
{
	void *req, *resp = (void *)1;
	struct timespec far = deadline_in(CLOCK_MONOTONIC, FAR_NS);
	CHECK_RC(hl_channel_call(ch, REQ(3, 9), &resp), ESHUTDOWN);
	CHECK_RC(hl_channel_call_timed(ch, REQ(3, 9), &resp, CLOCK_MONOTONIC, &far), ESHUTDOWN);
	CHECK(resp == (void *)1, "%s: a call refused with ESHUTDOWN wrote *resp", what);
	CHECK_RC(hl_channel_receive(ch, &req, CLOCK_MONOTONIC, NULL), ESHUTDOWN);
	CHECK_RC(hl_channel_receive(ch, &req, CLOCK_MONOTONIC, &far), ESHUTDOWN);
	CHECK_RC(hl_channel_reply(ch, RESP(0)), EPERM);
	CHECK_RC(hl_channel_shutdown(ch), 0);
	CHECK_RC(hl_channel_destroy(ch), 0);
}

static void test_shutdown(void)
{
	/* Clients queued. */
	{
		hl_channel_t ch = HL_CHANNEL_INIT;
		struct client c[3];
		void *last = NULL;
		for (int i = 0; i < 3; i++)
			client_queued(&c[i], &ch, REQ(i, 0), i == 1, FAR_NS, &last, "queued");
		CHECK_RC(hl_channel_shutdown(&ch), 0);
		for (int i = 0; i < 3; i++)
			CHECK(call_join(&c[i].call, HANG_MS, "queued client") == ESHUTDOWN,
			      "queued client %d: not ESHUTDOWN", i);
		check_closed(&ch, "shutdown with clients queued");
	}
	/* The server waiting: receive (untimed, timed), serve. */
	for (int k = 0; k < 3; k++) {
		hl_channel_t ch = HL_CHANNEL_INIT;
		struct server s;
		server_start(&s, &ch, k == 2 ? 0 : 2, k == 1, NULL);
		await(&ch, Q_SERVER_WAITING, NULL, "server waiting");
		CHECK_RC(hl_channel_shutdown(&ch), 0);
		int want = k == 2 ? 0 : ESHUTDOWN;
		CHECK_RC(call_join(&s.call, HANG_MS, "waiting server"), want);
		check_closed(&ch, "shutdown with the server waiting");
	}
	/* A call being served, two queued: by reply, reply_receive, serve. */
	for (int k = 0; k < 3; k++) {
		hl_channel_t ch = HL_CHANNEL_INIT;
		struct client a, q[2];
		struct server s;
		sem_t gate;
		void *req = NULL, *last = NULL;
		if (k == 2) {
			sem_init(&gate, 0, 0);
			server_start(&s, &ch, 0, false, &gate);
			await(&ch, Q_SERVER_WAITING, NULL, "serve");
			client_start(&a, &ch, REQ(0, 0), false, CLOCK_MONOTONIC, 0);
			while (sem_wait(&s.in_handler) && errno == EINTR)
				;
		} else {
			client_queued(&a, &ch, REQ(0, 0), false, 0, &last, "served");
			CHECK_RC(hl_channel_receive(&ch, &req, CLOCK_MONOTONIC, NULL), 0);
			CHECK(req == REQ(0, 0), "received %p", req);
		}
		last = peek(&ch).last;
		for (int i = 0; i < 2; i++)
			client_queued(&q[i], &ch, REQ(1 + i, 0), i == 1, FAR_NS, &last, "queued");
		CHECK_RC(hl_channel_shutdown(&ch), 0);
		for (int i = 0; i < 2; i++)
			CHECK(call_join(&q[i].call, HANG_MS, "queued client") == ESHUTDOWN,
			      "queued client %d behind a call being served: not ESHUTDOWN", i);
		CHECK(!call_done_within(&a.call, 0), "the call being served returned at shutdown");
		if (k == 0) {
			CHECK_RC(hl_channel_reply(&ch, RESP(req)), 0);
		} else if (k == 1) {
			CHECK_RC(hl_channel_reply_receive(&ch, RESP(req), &req, CLOCK_MONOTONIC, NULL),
				 ESHUTDOWN);
		} else {
			sem_post(&gate);
			CHECK_RC(call_join(&s.call, HANG_MS, "serve"), 0);
			CHECK(s.handled == 1 && s.undelivered == 0, "serve handled %ld, %ld "
			      "undelivered", s.handled, s.undelivered);
			sem_destroy(&gate);
		}
		client_join_ok(&a, "the call being served at shutdown");
		check_closed(&ch, "shutdown with a call being served");
	}
	printf("shutdown: queued calls ESHUTDOWN, a waiting server ESHUTDOWN (serve 0), a call "
	       "being served gets its reply; afterwards ESHUTDOWN at once, reply EPERM\n");
}

/* ---- receive with a deadline, and the errors ---- */

static void test_receive_timed(void)
{
	hl_channel_t ch = HL_CHANNEL_INIT;
	void *req = (void *)1;
	for (int c = 0; c < 2; c++) {
		clockid_t clk = c ? CLOCK_REALTIME : CLOCK_MONOTONIC;
		struct timespec abs = deadline_in(clk, SHORT_NS);
		int rc = hl_channel_receive(&ch, &req, clk, &abs);
		int64_t after = clock_ns(clk);
		CHECK(rc == ETIMEDOUT, "receive on %s returned %d, expected ETIMEDOUT",
		      clock_name(clk), rc);
		CHECK(after >= ts_to_ns(&abs), "receive on %s returned %lld ns early",
		      clock_name(clk), (long long)(ts_to_ns(&abs) - after));
		const struct timespec pasts[] = { { 0, 0 }, { -1, 0 },
						  ns_to_ts(clock_ns(clk) - NSEC_PER_MSEC) };
		for (int i = 0; i < 3; i++)
			CHECK_RC(hl_channel_receive(&ch, &req, clk, &pasts[i]), ETIMEDOUT);
		CHECK(req == (void *)1, "a receive that timed out wrote *req");
	}
	struct peek p = peek(&ch);
	CHECK(!p.receiving && !p.server_waiting, "a receive that timed out left receiving %u, "
	      "server_waiting %u", p.receiving, p.server_waiting);
	struct client c;
	client_start(&c, &ch, REQ(0, 0), false, CLOCK_MONOTONIC, 0);
	struct timespec far = deadline_in(CLOCK_MONOTONIC, FAR_NS);
	CHECK_RC(hl_channel_receive(&ch, &req, CLOCK_MONOTONIC, &far), 0);
	CHECK(req == REQ(0, 0), "received %p", req);
	CHECK_RC(hl_channel_reply(&ch, RESP(req)), 0);
	client_join_ok(&c, "call after receives that timed out");
	CHECK_RC(hl_channel_destroy(&ch), 0);
	printf("receive with a deadline (both clocks): ETIMEDOUT not early, past deadlines at "
	       "once, the channel usable afterwards\n");
}

static void test_errors(void)
{
	hl_channel_t ch = HL_CHANNEL_INIT;
	void *req, *last = NULL;
	struct client c;
	struct timespec pst = { 0, 0 };

	/* EPERM: nothing owed. */
	CHECK_RC(hl_channel_reply(&ch, RESP(0)), EPERM);
	CHECK_RC(hl_channel_reply_receive(&ch, RESP(0), &req, CLOCK_MONOTONIC, NULL), EPERM);
	CHECK_RC(hl_channel_reply_receive(&ch, RESP(0), &req, CLOCK_MONOTONIC, &pst), EPERM);
	/* destroy EBUSY with a call queued, then being served. */
	client_queued(&c, &ch, REQ(0, 0), false, 0, &last, "errors");
	CHECK_RC(hl_channel_destroy(&ch), EBUSY);
	CHECK_RC(hl_channel_receive(&ch, &req, CLOCK_MONOTONIC, NULL), 0);
	CHECK_RC(hl_channel_destroy(&ch), EBUSY);
	/* EALREADY: a reply is owed. */
	CHECK_RC(hl_channel_receive(&ch, &req, CLOCK_MONOTONIC, NULL), EALREADY);
	CHECK_RC(hl_channel_receive(&ch, &req, CLOCK_MONOTONIC, &pst), EALREADY);
	CHECK(!call_done_within(&c.call, 0), "the client returned without a reply");
	CHECK_RC(hl_channel_reply(&ch, RESP(req)), 0);
	client_join_ok(&c, "errors client");
	CHECK_RC(hl_channel_reply(&ch, RESP(req)), EPERM);
	CHECK_RC(hl_channel_destroy(&ch), 0);

	/* EBUSY: two receivers; destroy EBUSY while one receives. */
	for (int k = 0; k < 2; k++) {
		struct server s;
		server_start(&s, &ch, 2, k, NULL);
		await(&ch, Q_RECEIVING, NULL, "first receiver");
		CHECK_RC(hl_channel_receive(&ch, &req, CLOCK_MONOTONIC, NULL), EBUSY);
		CHECK_RC(hl_channel_receive(&ch, &req, CLOCK_MONOTONIC, &pst), EBUSY);
		CHECK_RC(hl_channel_reply_receive(&ch, RESP(0), &req, CLOCK_MONOTONIC, NULL), EBUSY);
		CHECK_RC(hl_channel_destroy(&ch), EBUSY);
		client_start(&c, &ch, REQ(1, k), false, CLOCK_MONOTONIC, 0);
		CHECK_RC(call_join(&s.call, HANG_MS, "first receiver"), 0);
		CHECK(s.got == REQ(1, k), "the first receiver got %p, expected %p", s.got,
		      REQ(1, k));
		CHECK_RC(hl_channel_reply(&ch, RESP(s.got)), 0);
		client_join_ok(&c, "client of the first receiver");
		CHECK_RC(hl_channel_destroy(&ch), 0);
	}
	printf("errors: EPERM, EALREADY, EBUSY (two receivers), destroy EBUSY (queued, being "
	       "served, receiving)\n");
}

/* ---- rule 3 across calls: a slow server's client parks ---- */

/* The server's handler sees how the client waits for its reply: the state
 * word of the client's wait point, the first member of the call record
 * that current_ names (src/channel.c), read atomically and never written,
 * until it leaves 0 at the client's first CAS, which says whether that
 * wait began by spinning (src/swap.c's states).  The record stays valid
 * until the reply: an untimed call cannot return before it. */
enum { PT_SPINNING = 2, PT_PARKED = 3 };

struct watched {
	hl_channel_t ch;
	struct call call;
	int cpu;
	_Atomic int64_t delay_ns;       /* the handler's time per call */
	_Atomic uint32_t state;         /* the last call's first waiting state */
};

static void *watch_handler(void *req, void *arg)
{
	struct watched *w = arg;
	REQUIRE(hl_mutex_lock(&w->ch.lock_) == 0, "lock the channel's mutex");
	hl_swap_point_t *p = w->ch.current_;
	hl_mutex_unlock(&w->ch.lock_);
	uint32_t s = 0;
	int64_t end = now_ns() + HANG_MS * NSEC_PER_MSEC;
	while (p && !(s = __atomic_load_n(&p->state_, __ATOMIC_RELAXED)) && now_ns() < end)
		test_cpu_relax();
	atomic_store(&w->state, s);
	int64_t d = atomic_load(&w->delay_ns);
	if (d)
		sleep_ns(d);
	return RESP(req);
}

static bool pin(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
}

static int watch_server(void *arg)
{
	struct watched *w = arg;
	if (!pin(w->cpu))
		return -1;
	return hl_channel_serve(&w->ch, watch_handler, NULL, w);
}

/* The kernel's runnable threads now (/proc/loadavg's 4th field), or -1. */
static long runnable_now(void)
{
	FILE *f = fopen("/proc/loadavg", "r");
	long r = -1;
	if (f) {
		if (fscanf(f, "%*s %*s %*s %ld/", &r) != 1)
			r = -1;
		fclose(f);
	}
	return r;
}

struct rule3 {
	struct watched slow, fast;
	int cpu;
	long first_spun;                /* phase 1's first call (a fresh record) */
	long slow_spun, slow_calls;     /* phase 1: calls 2.. on the slow channel */
	long alt_slow_spun, alt_fast_spun, alt_rounds; /* phase 2 */
	long back_spun, back_calls;     /* phase 3 */
	long back_runnable;             /* the most runnable threads seen in phase 3 */
};

static bool watched_call(struct watched *w, long i)
{
	void *req = REQ(0, i), *resp = NULL;
	int rc = hl_channel_call(&w->ch, req, &resp);
	CHECK(rc == 0 && resp == RESP(req), "rule 3: call %ld returned %d, response %p, "
	      "expected %p", i, rc, resp, RESP(req));
	uint32_t s = atomic_load(&w->state);
	CHECK(s == PT_SPINNING || s == PT_PARKED, "rule 3: call %ld: the client's point was "
	      "never seen waiting (state %u)", i, s);
	return s == PT_SPINNING;
}

static int rule3_client(void *arg)
{
	struct rule3 *t = arg;
	if (!pin(t->cpu))
		return -1;
	/* 1: the slow channel, 30 calls; the first has a fresh record. */
	t->first_spun = watched_call(&t->slow, 0);
	for (long i = 1; i < 30; i++, t->slow_calls++)
		t->slow_spun += watched_call(&t->slow, i);
	/* 2: a fast channel and the slow one, in turn: each keeps its own. */
	for (long i = 0; i < 20; i++, t->alt_rounds++) {
		t->alt_fast_spun += watched_call(&t->fast, i);
		t->alt_slow_spun += watched_call(&t->slow, 30 + i);
	}
	/* 3: the slow channel turns fast: its calls spin again. */
	atomic_store(&t->slow.delay_ns, 0);
	int64_t end = now_ns() + NSEC_PER_SEC;
	while (t->back_spun < 3 && now_ns() < end) {
		t->back_spun += watched_call(&t->slow, 50 + t->back_calls++);
		long r = runnable_now();
		if (r > t->back_runnable)
			t->back_runnable = r;
	}
	return 0;
}

/* docs/swap.md rule 3 across calls: a client whose server takes longer
 * than the spin budget to reply parks on its next calls without spinning,
 * although every call waits on a fresh point; the record is the client's
 * own for each channel; a server that turns fast is caught by spinning
 * again.  The spin budget is raised to 1 ms (2 ms in a swap) so that a
 * spin is a window the handler cannot miss; the slow server takes 5 ms. */
static void test_slow_server(void)
{
	int c0 = -1, c1 = -1;
	cpu_set_t set;
	if (!pthread_getaffinity_np(pthread_self(), sizeof(set), &set))
		for (int c = 0; c < CPU_SETSIZE && c1 < 0; c++)
			if (CPU_ISSET(c, &set))
				*(c0 < 0 ? &c0 : &c1) = c;
	if (c1 < 0 || online_cpus() < 2) {
		printf("rule 3 across calls: skipped (one CPU allowed: no spinning at all)\n");
		return;
	}
	hl_config_t old, cfg;
	hl_config_get(&old);
	cfg = old;
	cfg.spin_ns = NSEC_PER_MSEC;
	CHECK_RC(hl_config_set(&cfg), 0);
	struct rule3 *t = calloc(1, sizeof(*t));
	REQUIRE(t, "calloc");
	t->cpu = c0;
	t->slow.cpu = t->fast.cpu = c1;
	atomic_store(&t->slow.delay_ns, 5 * NSEC_PER_MSEC);
	call_start(&t->slow.call, watch_server, &t->slow);
	call_start(&t->fast.call, watch_server, &t->fast);
	struct call client;
	call_start(&client, rule3_client, t);
	CHECK_RC(call_join(&client, HANG_MS, "rule 3 client"), 0);
	CHECK_RC(hl_channel_shutdown(&t->slow.ch), 0);
	CHECK_RC(hl_channel_shutdown(&t->fast.ch), 0);
	CHECK_RC(call_join(&t->slow.call, HANG_MS, "slow server"), 0);
	CHECK_RC(call_join(&t->fast.call, HANG_MS, "fast server"), 0);
	CHECK_RC(hl_config_set(&old), 0);
	CHECK(t->slow_spun <= 2, "rule 3: after a 5 ms reply, %ld of the next %ld calls to "
	      "that server spun (at most 2 allowed)", t->slow_spun, t->slow_calls);
	CHECK(t->alt_slow_spun <= 2, "rule 3: calls to a slow and a fast server in turn: %ld "
	      "of %ld calls to the slow one spun (at most 2 allowed)", t->alt_slow_spun,
	      t->alt_rounds);
	bool over = t->back_runnable > online_cpus();
	CHECK(t->back_spun >= 3 || over, "rule 3: the server turned fast, and %ld of %ld calls "
	      "in 1 s spun (3 expected; at most %ld threads runnable)", t->back_spun,
	      t->back_calls, t->back_runnable);
	printf("rule 3 across calls (CPUs %d/%d): first call %s; %ld of %ld later calls to a "
	       "5 ms server spun; in turn with a fast server %ld/%ld and %ld/%ld spun; fast "
	       "again: %ld of %ld spun%s\n", c0, c1, t->first_spun ? "spun" : "parked",
	       t->slow_spun, t->slow_calls, t->alt_slow_spun, t->alt_rounds, t->alt_fast_spun,
	       t->alt_rounds, t->back_spun, t->back_calls,
	       t->back_spun < 3 ? " (machine overloaded: not asserted)" : "");
	CHECK_RC(hl_channel_destroy(&t->slow.ch), 0);
	CHECK_RC(hl_channel_destroy(&t->fast.ch), 0);
	free(t);
}

int main(void)
{
	uint64_t seed = test_seed(0x5eedc0d6);
	test_rng_t rng;
	rng_seed(&rng, seed, 0);
	printf("test_channel: seed 0x%llx, %ld CPUs%s\n", (unsigned long long)seed, online_cpus(),
	       HOTLOCK_SANITIZED ? ", sanitizer build" : "");
	fflush(stdout);
	set_phase("test_init_forms");
	test_init_forms();
	set_phase("test_einval");
	test_einval();
	set_phase("test_many_clients serve");
	test_many_clients(0, &rng);
	set_phase("test_many_clients by hand");
	test_many_clients(1, &rng);
	set_phase("test_fifo");
	test_fifo();
	set_phase("test_timed_before_taken");
	test_timed_before_taken();
	set_phase("test_timed_after_taken");
	test_timed_after_taken();
	set_phase("test_shutdown");
	test_shutdown();
	set_phase("test_receive_timed");
	test_receive_timed();
	set_phase("test_errors");
	test_errors();
	set_phase("test_slow_server");
	test_slow_server();
	alarm(0);
	return test_finish("test_channel");
}
