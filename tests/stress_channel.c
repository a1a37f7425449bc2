/* SPDX-License-Identifier: MIT */
/* Stress test of hl_channel through the stress harness (stress.h): K
 * client threads (the harness's workers) call one server thread.  Each
 * worker's critical section (on a private hl_mutex, as stress_cond.c
 * does) calls relock(), which here releases that mutex, makes one channel
 * call and takes the mutex again; so the harness's watchdog fails a run in
 * which a client makes no progress for HOTLOCK_WATCHDOG_MS (default 10 s),
 * printing the state line below: the mutex's describe line, the channel's
 * fields and the workload's counters.  A server that does not return after
 * the clients are done is reported the same way.
 *
 * Usage: test_stress_channel MULT
 *   MULT x the online CPU count clients (ctest runs 2, 4 and 8; and 4 with
 *   spinning off).  Rounds of exactly N calls per client (ops_per_thread),
 *   for HOTLOCK_STRESS_MS (default 1500 ms, 700 ms in sanitizer builds);
 *   each round a fresh channel (calloc'd zero bytes or hl_channel_init) and
 *   a server that runs hl_channel_serve or, by hand, receive (sometimes
 *   with a short deadline), reply_receive (sometimes with a short deadline)
 *   or reply then receive, with random yields and short sleeps while it
 *   serves.
 *
 *   Calls: 50% hl_channel_call; 50% hl_channel_call_timed with a deadline
 *   -20..300 us away (one in ten already past; one in ten 1-3 ms away), on
 *   either clock.  Every other round ends with a shutdown racing the calls:
 *   one client shuts the channel down after a random number of its calls
 *   while the others go on calling; otherwise the main thread shuts it down
 *   once the clients are done.
 *
 * Asserts, on every call: a return of 0 carries exactly its own request's
 * response (requests are REQ(client, seq), the response is req + 1);
 * ETIMEDOUT only for a timed call, and not before its deadline; ESHUTDOWN
 * only once the shutdown has begun, and always for a call made after it
 * returned; no other code.  On every request the server takes: never seen
 * before, and later than the last one it took from that client.  After each
 * round (every thread joined): for each call, its outcome and the server's
 * record agree: 0 <-> the reply was delivered; ETIMEDOUT <-> never taken or
 * its reply refused (ECANCELED, or serve's undelivered callback with that
 * response); ESHUTDOWN <-> never taken; so replies delivered = calls that
 * returned 0 and delivered + refused = requests taken; the channel has no
 * call left (destroy 0) and the server returned 0 (serve) or ESHUTDOWN.
 * Seed: HOTLOCK_SEED (printed). */
#include "common.h"
#include "mutex_ops.h"
#include "stress.h"

#include <hotlock/hotlock.h>

#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>

#define EFAIL EPROTO            /* relock's result when a check failed */
#define MAXCLIENTS 4096

#define REQ(client, seq) ((void *)(uintptr_t)((((uint64_t)(client) << 32 | (uint64_t)(seq)) + 1) << 4))
#define RESP(req) ((void *)((uintptr_t)(req) + 1))
#define REQ_CLIENT(req) ((long)((((uintptr_t)(req) >> 4) - 1) >> 32))
#define REQ_SEQ(req) ((long)((((uintptr_t)(req) >> 4) - 1) & 0xffffffffu))

/* A call's outcome (client side), and the server's record of it. */
enum { OUT_NONE, OUT_OK, OUT_TIMEDOUT, OUT_SHUTDOWN };
enum { SV_NONE, SV_TAKEN, SV_DELIVERED, SV_REFUSED };

struct S {
	hl_mutex_t m;           /* the harness's lock: first member */
	hl_channel_t *ch;
	int clients;
	long cap;               /* calls per client this round */
	int server_mode;        /* 0: hl_channel_serve; 1: by hand */
	long shutdown_at;       /* client 0 shuts down before this call; -1: main */
	uint8_t **out;          /* [client][seq]: written by the client */
	uint8_t **sv;           /* [client][seq]: written by the server */
	long *next_seq;         /* per client: calls made (client-owned) */
	long *last_taken;       /* per client: last seq the server took */
	atomic_int shut_begun, shut_done;
	atomic_int failed;
	/* Server-owned counters and its pending request. */
	void *pending;
	uint64_t taken, delivered, refused, server_timeouts;
	test_rng_t server_rng;
	/* For the watchdog. */
	atomic_ullong d_calls, d_ok, d_timedout, d_shutdown, d_taken;
	atomic_int d_server_where;
	pthread_t server;
	int server_rc;
};

static const char *const where_names[] = { "not started", "receiving", "in the handler",
					   "replying", "returned" };
enum { W_NONE, W_RECEIVING, W_HANDLER, W_REPLYING, W_RETURNED };

static _Thread_local int t_index;
static _Thread_local test_rng_t t_rng;
static uint64_t g_seed;
static int g_round;

static int failf(struct S *S, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int failf(struct S *S, const char *fmt, ...)
{
	va_list ap;
	test_failures++;
	if (!atomic_exchange(&S->failed, 1)) {
		fprintf(stderr, "FAIL [round %d, thread %d]: ", g_round, t_index);
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
		fputc('\n', stderr);
		fflush(stderr);
	}
	return EFAIL;
}

/* ---- the server ---- */

static void server_where(struct S *S, int w)
{
	atomic_store_explicit(&S->d_server_where, w, memory_order_relaxed);
}

/* The pending request's reply was delivered or refused. */
static void settle(struct S *S, int how)
{
	if (!S->pending)
		return;
	long c = REQ_CLIENT(S->pending), seq = REQ_SEQ(S->pending);
	if (S->sv[c][seq] != SV_TAKEN)
		failf(S, "server: request %ld of client %ld settled twice", seq, c);
	S->sv[c][seq] = (uint8_t)how;
	if (how == SV_DELIVERED)
		S->delivered++;
	else
		S->refused++;
	S->pending = NULL;
}

static void *handler(void *req, void *arg)
{
	struct S *S = arg;
	settle(S, SV_DELIVERED);        /* serve: the last reply was not refused */
	server_where(S, W_HANDLER);
	long c = REQ_CLIENT(req), seq = REQ_SEQ(req);
	if (c < 0 || c >= S->clients || seq < 0 || seq >= S->cap) {
		failf(S, "server: request %p is no request of this round", req);
		return NULL;
	}
	if (S->sv[c][seq] != SV_NONE)
		failf(S, "server: request %ld of client %ld taken twice", seq, c);
	if (seq <= S->last_taken[c])
		failf(S, "server: request %ld of client %ld taken after its request %ld", seq, c,
		      S->last_taken[c]);
	S->last_taken[c] = seq;
	S->sv[c][seq] = SV_TAKEN;
	S->taken++;
	S->pending = req;
	atomic_fetch_add_explicit(&S->d_taken, 1, memory_order_relaxed);
	uint64_t x = rng_below(&S->server_rng, 100);
	if (x < 10)
		sched_yield();
	else if (x < 13)
		sleep_ns((int64_t)rng_below(&S->server_rng, 200) * NSEC_PER_USEC);
	server_where(S, W_REPLYING);
	return RESP(req);
}

static void undelivered(void *resp, void *arg)
{
	struct S *S = arg;
	if (!S->pending || resp != RESP(S->pending))
		failf(S, "server: undelivered response %p, the pending request is %p", resp,
		      S->pending);
	settle(S, SV_REFUSED);
}

static const struct timespec *short_deadline(struct S *S, struct timespec *ts)
{
	if (rng_below(&S->server_rng, 8))
		return NULL;
	*ts = deadline_in(CLOCK_MONOTONIC, (int64_t)rng_below(&S->server_rng, 500) *
			  NSEC_PER_USEC);
	return ts;
}

static int serve_by_hand(struct S *S)
{
	hl_channel_t *ch = S->ch;
	struct timespec ts;
	void *req;
	int rc;
	for (;;) {
		server_where(S, W_RECEIVING);
		rc = hl_channel_receive(ch, &req, CLOCK_MONOTONIC, short_deadline(S, &ts));
		if (rc == ETIMEDOUT) {
			S->server_timeouts++;
			continue;
		}
		while (rc == 0) {
			void *resp = handler(req, S);
			if (rng_below(&S->server_rng, 4) == 0) {
				rc = hl_channel_reply(ch, resp);
				if (rc != 0 && rc != ECANCELED)
					return failf(S, "server: reply returned %d", rc);
				settle(S, rc ? SV_REFUSED : SV_DELIVERED);
				server_where(S, W_RECEIVING);
				rc = hl_channel_receive(ch, &req, CLOCK_MONOTONIC,
							short_deadline(S, &ts));
			} else {
				server_where(S, W_RECEIVING);
				rc = hl_channel_reply_receive(ch, resp, &req, CLOCK_MONOTONIC,
							      short_deadline(S, &ts));
				settle(S, rc == ECANCELED ? SV_REFUSED : SV_DELIVERED);
				if (rc == ECANCELED) {
					server_where(S, W_RECEIVING);
					rc = hl_channel_receive(ch, &req, CLOCK_MONOTONIC,
								short_deadline(S, &ts));
				}
			}
			if (rc == ETIMEDOUT)
				S->server_timeouts++;
		}
		if (rc != ETIMEDOUT)
			return rc;
	}
}

static void *server_main(void *arg)
{
	struct S *S = arg;
	t_index = -1;
	S->server_rc = S->server_mode ? serve_by_hand(S)
				      : hl_channel_serve(S->ch, handler, undelivered, S);
	settle(S, SV_DELIVERED);        /* serve: its last reply was delivered */
	server_where(S, W_RETURNED);
	return NULL;
}

/* ---- the clients ---- */

static void do_shutdown(struct S *S)
{
	atomic_store(&S->shut_begun, 1);
	int rc = hl_channel_shutdown(S->ch);
	if (rc)
		failf(S, "hl_channel_shutdown returned %d", rc);
	atomic_store(&S->shut_done, 1);
}

static int client_relock(void *o)
{
	struct S *S = o;
	long c = t_index, seq = S->next_seq[c];
	if (atomic_load_explicit(&S->failed, memory_order_relaxed) || seq >= S->cap)
		return 0;
	S->next_seq[c] = seq + 1;
	int rc = hl_mutex_unlock(&S->m);
	if (rc)
		return failf(S, "unlock returned %d", rc);
	if (c == 0 && seq == S->shutdown_at)
		do_shutdown(S);
	void *req = REQ(c, seq), *resp = NULL;
	bool timed = rng_below(&t_rng, 2);
	bool after_shutdown = atomic_load(&S->shut_done);
	clockid_t clk = rng_below(&t_rng, 2) ? CLOCK_REALTIME : CLOCK_MONOTONIC;
	struct timespec abs = { 0, 0 };
	atomic_fetch_add_explicit(&S->d_calls, 1, memory_order_relaxed);
	if (timed) {
		uint64_t x = rng_below(&t_rng, 10);
		int64_t rel = x == 0 ? -(int64_t)rng_below(&t_rng, 20) * NSEC_PER_USEC :
			      x == 1 ? (int64_t)(1000 + rng_below(&t_rng, 2000)) * NSEC_PER_USEC :
			      (int64_t)rng_below(&t_rng, 300) * NSEC_PER_USEC;
		abs = deadline_in(clk, rel);
		rc = hl_channel_call_timed(S->ch, req, &resp, clk, &abs);
	} else {
		rc = hl_channel_call(S->ch, req, &resp);
	}
	int64_t after = timed ? clock_ns(clk) : 0;
	int bad = 0;
	if (rc == 0) {
		S->out[c][seq] = OUT_OK;
		atomic_fetch_add_explicit(&S->d_ok, 1, memory_order_relaxed);
		if (resp != RESP(req))
			bad = failf(S, "client %ld call %ld: response %p, expected %p", c, seq, resp,
				    RESP(req));
		if (after_shutdown)
			bad = failf(S, "client %ld call %ld made after the shutdown returned 0", c,
				    seq);
	} else if (rc == ETIMEDOUT) {
		S->out[c][seq] = OUT_TIMEDOUT;
		atomic_fetch_add_explicit(&S->d_timedout, 1, memory_order_relaxed);
		if (!timed)
			bad = failf(S, "client %ld call %ld: an untimed call returned ETIMEDOUT", c,
				    seq);
		else if (after < ts_to_ns(&abs))
			bad = failf(S, "client %ld call %ld: ETIMEDOUT %lld ns before the deadline",
				    c, seq, (long long)(ts_to_ns(&abs) - after));
		if (after_shutdown)
			bad = failf(S, "client %ld call %ld made after the shutdown returned "
				    "ETIMEDOUT", c, seq);
	} else if (rc == ESHUTDOWN) {
		S->out[c][seq] = OUT_SHUTDOWN;
		atomic_fetch_add_explicit(&S->d_shutdown, 1, memory_order_relaxed);
		if (!atomic_load(&S->shut_begun))
			bad = failf(S, "client %ld call %ld: ESHUTDOWN before any shutdown", c, seq);
	} else {
		bad = failf(S, "client %ld call %ld: returned %d (%s)", c, seq, rc, strerror(rc));
	}
	int rc2 = hl_mutex_lock(&S->m);
	if (rc2)
		return failf(S, "lock returned %d", rc2);
	return bad;
}

static void op_thread_init(void *o, int index)
{
	t_index = index;
	rng_seed(&t_rng, g_seed ^ (uint64_t)g_round * 0x9e3779b97f4a7c15ull, 1000 + (uint64_t)index);
}

/* The state line: the mutex, the channel's fields (under its lock when it
 * is free; else as they are), the counters. */
static int describe(void *o, char *buf, size_t len)
{
	struct S *S = o;
	hl_channel_t *ch = S->ch;
	char mb[384];
	hl_mutex_describe(&S->m, mb, sizeof(mb));
	bool locked = hl_mutex_trylock(&ch->lock_) == 0;
	void *first = *(void *volatile *)&ch->first_, *last = *(void *volatile *)&ch->last_;
	void *cur = *(void *volatile *)&ch->current_;
	unsigned sw = *(volatile uint32_t *)&ch->server_waiting_;
	unsigned cl = *(volatile uint32_t *)&ch->closed_;
	unsigned rcv = *(volatile uint32_t *)&ch->receiving_;
	unsigned gone = *(volatile uint32_t *)&ch->current_gone_;
	unsigned spst = __atomic_load_n(&ch->server_.state_, __ATOMIC_RELAXED);
	if (locked)
		hl_mutex_unlock(&ch->lock_);
	char lb[384];
	hl_mutex_describe(&ch->lock_, lb, sizeof(lb));
	int w = atomic_load_explicit(&S->d_server_where, memory_order_relaxed);
	return snprintf(buf, len, "%s | channel (%s): first %p last %p current %p server_waiting "
			"%u closed %u receiving %u current_gone %u, server point state %u; "
			"channel lock: %s | server %s (%s), %llu taken | clients: %llu calls, %llu "
			"ok, %llu ETIMEDOUT, %llu ESHUTDOWN; shutdown begun %d done %d%s", mb,
			locked ? "read under its lock" : "its lock is held: read as is", first,
			last, cur, sw, cl, rcv, gone, spst, lb,
			w >= 0 && w <= W_RETURNED ? where_names[w] : "?",
			S->server_mode ? "by hand" : "hl_channel_serve",
			(unsigned long long)atomic_load(&S->d_taken),
			(unsigned long long)atomic_load(&S->d_calls),
			(unsigned long long)atomic_load(&S->d_ok),
			(unsigned long long)atomic_load(&S->d_timedout),
			(unsigned long long)atomic_load(&S->d_shutdown), atomic_load(&S->shut_begun),
			atomic_load(&S->shut_done), atomic_load(&S->failed) ? ", FAILED" : "");
}

/* ---- a round ---- */

struct totals {
	uint64_t calls, ok, timedout, shutdown, taken, refused, server_timeouts;
	int rounds, shutdown_rounds;
};

static bool run_round(int clients, int ops, int round, uint64_t seed, struct totals *T,
		      const char *label)
{
	struct S *S = calloc(1, sizeof(*S));
	REQUIRE(S, "calloc");
	S->ch = round % 3 == 1 ? malloc(sizeof(hl_channel_t)) : calloc(1, sizeof(hl_channel_t));
	REQUIRE(S->ch, "alloc");
	if (round % 3 == 1) {
		memset(S->ch, 0xff, sizeof(*S->ch));
		CHECK_RC(hl_channel_init(S->ch), 0);
	}
	S->clients = clients;
	S->cap = ops;
	S->server_mode = round % 2;
	S->out = calloc((size_t)clients, sizeof(*S->out));
	S->sv = calloc((size_t)clients, sizeof(*S->sv));
	S->next_seq = calloc((size_t)clients, sizeof(long));
	S->last_taken = calloc((size_t)clients, sizeof(long));
	REQUIRE(S->out && S->sv && S->next_seq && S->last_taken, "calloc");
	for (int c = 0; c < clients; c++) {
		S->out[c] = calloc((size_t)ops, 1);
		S->sv[c] = calloc((size_t)ops, 1);
		REQUIRE(S->out[c] && S->sv[c], "calloc");
		S->last_taken[c] = -1;
	}
	test_rng_t rr;
	rng_seed(&rr, seed, 77 + (uint64_t)round);
	S->server_rng = rr;
	rng_next(&S->server_rng);
	/* Every other round (the second of each pair, so both server kinds
	 * see it): a shutdown racing the calls. */
	S->shutdown_at = (round / 2) % 2 ? (long)(ops / 4 + rng_below(&rr, (uint64_t)ops)) : -1;
	if (S->shutdown_at >= ops)
		S->shutdown_at = ops - 1;
	g_round = round;

	REQUIRE(pthread_create(&S->server, NULL, server_main, S) == 0, "pthread_create");
	stress_ops_t o = mutex_stress_ops(&S->m);
	o.name = "hl_channel";
	o.obj = S;
	o.describe = describe;
	o.relock = client_relock;
	o.thread_init = op_thread_init;
	stress_config_t cfg;
	stress_result_t res;
	stress_config_default(&cfg);
	cfg.label = label;
	cfg.threads = clients;
	cfg.seed = seed + (uint64_t)round;
	cfg.pct_relock = 100;
	cfg.pct_cs_sleep = 1;
	cfg.cs_sleep_max_us = 50;
	cfg.pct_cs_yield = 2;
	cfg.cs_work = 10;
	cfg.quiet = 1;
	cfg.ops_per_thread = ops;
	int bad = stress_run(&o, &cfg, &res);
	CHECK(bad == 0 && !S->failed, "%s round %d: %d violations, %d unexpected results", label,
	      round, res.violations, res.errors);
	if (S->shutdown_at < 0)
		do_shutdown(S);
	else if (!atomic_load(&S->shut_done) && !S->failed)
		CHECK(0, "%s round %d: client 0 did not shut down (made %ld calls)", label, round,
		      S->next_seq[0]);
	if (!atomic_load(&S->shut_done))
		do_shutdown(S);
	/* The server returns once it has replied to what it took. */
	struct timespec dl = deadline_in(CLOCK_REALTIME, (int64_t)cfg.watchdog_ms * NSEC_PER_MSEC);
	if (pthread_timedjoin_np(S->server, NULL, &dl) != 0) {
		char buf[1536];
		describe(S, buf, sizeof(buf));
		fprintf(stderr, "FATAL (hang) [%s round %d]: the server did not return %d ms after "
			"the shutdown; state: %s\n", label, round, cfg.watchdog_ms, buf);
		fflush(stderr);
		_exit(STRESS_EXIT_HANG);
	}
	int want = S->server_mode ? ESHUTDOWN : 0;
	CHECK(S->server_rc == want, "%s round %d: the server returned %d, expected %d", label,
	      round, S->server_rc, want);

	/* Every call: the client's outcome and the server's record agree. */
	uint64_t ok = 0, to = 0, sd = 0, refused_seen = 0;
	int mismatches = 0;
	for (int c = 0; c < clients && !S->failed; c++) {
		CHECK(S->next_seq[c] == ops, "%s round %d: client %d made %ld of %d calls", label,
		      round, c, S->next_seq[c], ops);
		for (long i = 0; i < S->next_seq[c]; i++) {
			int out = S->out[c][i], sv = S->sv[c][i];
			bool agree = (out == OUT_OK && sv == SV_DELIVERED) ||
				     (out == OUT_TIMEDOUT && (sv == SV_NONE || sv == SV_REFUSED)) ||
				     (out == OUT_SHUTDOWN && sv == SV_NONE);
			if (!agree && mismatches++ < 5)
				CHECK(0, "%s round %d: client %d call %ld returned %s, the server's "
				      "record says %s", label, round, c, i,
				      (const char *[]){ "nothing", "0", "ETIMEDOUT", "ESHUTDOWN" }[out],
				      (const char *[]){ "never taken", "taken, never settled",
							"delivered", "refused" }[sv]);
			ok += out == OUT_OK;
			to += out == OUT_TIMEDOUT;
			sd += out == OUT_SHUTDOWN;
			refused_seen += sv == SV_REFUSED;
		}
	}
	if (!S->failed) {
		CHECK(mismatches == 0, "%s round %d: %d calls whose outcome the server's record "
		      "contradicts", label, round, mismatches);
		CHECK(S->delivered == ok && S->delivered + S->refused == S->taken &&
		      S->refused == refused_seen && S->refused <= to,
		      "%s round %d: server delivered %llu, refused %llu, took %llu; clients: %llu "
		      "ok, %llu ETIMEDOUT", label, round, (unsigned long long)S->delivered,
		      (unsigned long long)S->refused, (unsigned long long)S->taken,
		      (unsigned long long)ok, (unsigned long long)to);
		CHECK_RC(hl_channel_destroy(S->ch), 0);
	}
	T->calls += ok + to + sd;
	T->ok += ok;
	T->timedout += to;
	T->shutdown += sd;
	T->taken += S->taken;
	T->refused += S->refused;
	T->server_timeouts += S->server_timeouts;
	T->rounds++;
	T->shutdown_rounds += S->shutdown_at >= 0;
	bool good = bad == 0 && !S->failed && !test_failures;
	if (!good)
		stress_print_summary(&o, &cfg, &res);
	stress_result_free(&res);
	for (int c = 0; c < clients; c++) {
		free(S->out[c]);
		free(S->sv[c]);
	}
	free(S->out);
	free(S->sv);
	free(S->next_seq);
	free(S->last_taken);
	free(S->ch);
	free(S);
	return good;
}

int main(int argc, char **argv)
{
	long mult = argc > 1 ? strtol(argv[1], NULL, 10) : 2;
	long cpus = online_cpus();
	int clients = (int)(mult * cpus);
	hl_config_t hc;
	char label[64];

	REQUIRE(argc <= 2, "usage: test_stress_channel MULT");
	REQUIRE(mult > 0 && clients >= 2 && clients <= MAXCLIENTS, "bad multiplier %s",
		argc > 1 ? argv[1] : "");
	g_seed = test_seed(0x5eedc0d7);
	hl_config_get(&hc);
	printf("test_stress_channel: %d clients (%ldx %ld CPUs) and one server, %d ms, seed 0x%llx, "
	       "spin_ns %llu%s\n", clients, mult, cpus, stress_duration_ms(),
	       (unsigned long long)g_seed, (unsigned long long)hc.spin_ns,
	       HOTLOCK_SANITIZED ? ", sanitizer build" : "");
	fflush(stdout);
	snprintf(label, sizeof(label), "channel x%d", clients);

	const int64_t dur = (int64_t)stress_duration_ms() * NSEC_PER_MSEC;
	const int64_t t0 = now_ns();
	struct totals T = { 0 };
	int ops = 32;
	bool ok = true;
	/* At least 4 rounds: both server kinds, with and without a shutdown
	 * racing the calls. */
	while (ok && (now_ns() - t0 < dur || T.rounds < 4)) {
		int64_t r0 = now_ns();
		ok = run_round(clients, ops, T.rounds, g_seed, &T, label);
		ops = stress_next_round_ops(ops, now_ns() - r0, t0 + dur - now_ns(), dur / 8);
	}
	printf("stress [%s]: %d rounds (%d with a shutdown racing the calls), %.0f ms: %llu calls: "
	       "%llu answered, %llu ETIMEDOUT (%llu of them after the server took them: reply "
	       "refused), %llu ESHUTDOWN; server: %llu taken, %llu receive timeouts%s\n", label,
	       T.rounds, T.shutdown_rounds, (double)(now_ns() - t0) / 1e6,
	       (unsigned long long)T.calls, (unsigned long long)T.ok,
	       (unsigned long long)T.timedout, (unsigned long long)T.refused,
	       (unsigned long long)T.shutdown, (unsigned long long)T.taken,
	       (unsigned long long)T.server_timeouts, ok ? "" : "  ** FAILED **");
	fflush(stdout);
	return test_finish("test_stress_channel");
}
