/* SPDX-License-Identifier: MIT */
/* The contended workloads the contract tests run (contract_seccomp.c,
 * contract_errno.c), one per lock kind, each with its invariants:
 *
 *   mutex     6 threads: lock (now and then trylock, a timed lock, a
 *             recursive relock), a short critical section that is long now
 *             and then (20-60 us, so that waiters park), unlock; mutual
 *             exclusion and the count checked;
 *   rwlock    6 threads, a quarter of the operations writes: readers and
 *             writers checked for exclusion, the writes counted; try and
 *             timed variants;
 *   cond      3 producers and 3 consumers on a 4-slot queue with two
 *             condvars: signal, broadcast, wait and timed wait; every item
 *             consumed exactly once;
 *   swap      (native) 2 pairs of threads ping-ponging with hl_swap and
 *             hl_swap_timed, strict alternation checked;
 *   channel   (native) 1 server (hl_channel_serve), 5 clients with untimed
 *             and timed calls, every response matched; the last client
 *             shuts the channel down.
 *
 * A run: the main thread starts the workers; each calls
 * contract_thread_init(), then the test's before_loop hook (the seccomp
 * test installs its filter there), waits for the start, runs its loop
 * until the main thread says stop, counts itself done and calls the
 * after_loop hook (the seccomp test blocks there forever).  The main
 * thread waits for every worker to be done, then checks the invariants.
 * A churn thread (the errno test) meanwhile creates short-lived threads
 * that each make a few of the kind's calls, one after another. */
#ifndef HOTLOCK_CONTRACT_WORKLOADS_H
#define HOTLOCK_CONTRACT_WORKLOADS_H

#include "contract.h"

#define WL_MAX_THREADS 8

struct wl_hooks {
	void (*before_loop)(int idx);
	void (*after_loop)(int idx);    /* NULL: the worker returns */
	bool churn;                     /* a thread-churn thread beside the workers */
	int64_t run_ns;
};

struct wl_kind {
	const char *name;
	int threads;
	int arg;                        /* the mutex or rwlock kind */
	void (*init)(const struct wl_kind *k);
	void (*worker)(int idx);
	void (*churn)(int round);       /* a short-lived thread's calls */
	bool (*check)(const char *prog, const struct wl_kind *k);
};

static const struct wl_hooks *wl_hooks;
static const struct wl_kind *wl_cur;
static _Atomic bool wl_go, wl_stop;
static _Atomic int wl_ready, wl_done;
static _Atomic long wl_churned;
static uint64_t wl_seed = 0xc0417ac7;

/* Holds a lock for a while: mostly a few hundred cycles, one in 16 times
 * 20-60 us (longer than a spin budget: the waiters park). */
static inline void wl_hold(test_rng_t *r)
{
	if (rng_below(r, 16) == 0)
		contract_busy_ns(20000 + (int64_t)rng_below(r, 40000));
	else
		for (int i = (int)rng_below(r, 200); i > 0; i--)
			test_cpu_relax();
}

static inline struct timespec wl_deadline(int64_t rel_ns)
{
	return deadline_in(CLOCK_MONOTONIC, rel_ns);
}

/* ---- mutex ---- */

static lk_mutex_t wl_m;
static long wl_m_count;                 /* under wl_m */
static int wl_m_owner;                  /* under wl_m: 1 + worker, 0 */
static _Atomic long wl_m_ops;

static void wl_mutex_init(const struct wl_kind *k)
{
	lk_mutex_init(&wl_m, k->arg);
	wl_m_count = 0;
	wl_m_owner = 0;
	wl_m_ops = 0;
}

/* One operation; false when a try or timed lock did not get the lock. */
static bool wl_mutex_op(test_rng_t *r, int me, int type)
{
	unsigned op = (unsigned)rng_below(r, 32);
	if (op == 0) {
		if (CALL_OR(MUTEX_TRYLOCK, lk_mutex_trylock(&wl_m), EBUSY, EBUSY) != 0)
			return false;
	} else if (op == 1) {
		struct timespec ts = wl_deadline(2 * NSEC_PER_MSEC);
		if (CALL_OR(MUTEX_TIMEDLOCK, lk_mutex_timedlock(&wl_m, &ts), ETIMEDOUT,
			    ETIMEDOUT) != 0)
			return false;
	} else {
		CALL0(MUTEX_LOCK, lk_mutex_lock(&wl_m));
	}
	bool again = type == LK_RECURSIVE && (op & 4);
	if (again)
		CALL0(MUTEX_LOCK, lk_mutex_lock(&wl_m));
	WL_CHECK(wl_m_owner == 0, wl_m_owner);
	wl_m_owner = me;
	wl_m_count++;
	wl_hold(r);
	WL_CHECK(wl_m_owner == me, wl_m_owner);
	wl_m_owner = 0;
	if (again)
		CALL0(MUTEX_UNLOCK, lk_mutex_unlock(&wl_m));
	CALL0(MUTEX_UNLOCK, lk_mutex_unlock(&wl_m));
	atomic_fetch_add_explicit(&wl_m_ops, 1, memory_order_relaxed);
	return true;
}

static void wl_mutex_worker(int idx)
{
	test_rng_t r;
	rng_seed(&r, wl_seed, (uint64_t)idx);
	while (!atomic_load_explicit(&wl_stop, memory_order_relaxed))
		wl_mutex_op(&r, idx + 1, wl_cur->arg);
}

static void wl_mutex_churn(int round)
{
	test_rng_t r;
	rng_seed(&r, wl_seed, 1000u + (uint64_t)round);
	for (int i = 0; i < 20; i++)
		wl_mutex_op(&r, 100 + (round % 1000), wl_cur->arg);
}

static bool wl_mutex_check(const char *prog, const struct wl_kind *k)
{
	if (wl_m_count != wl_m_ops) {
		fprintf(stderr, "%s: FAIL: %s: %ld increments under the lock, %ld operations\n",
			prog, k->name, wl_m_count, (long)wl_m_ops);
		return false;
	}
	printf("%s: %s: %ld operations\n", prog, k->name, (long)wl_m_ops);
	return true;
}

/* ---- rwlock ---- */

static lk_rwlock_t wl_rw;
static long wl_rw_data;                 /* written under the write lock */
static _Atomic int wl_rw_readers, wl_rw_writers;
static _Atomic long wl_rw_writes, wl_rw_reads;

static void wl_rwlock_init(const struct wl_kind *k)
{
	lk_rwlock_init(&wl_rw, k->arg);
	wl_rw_data = 0;
	wl_rw_readers = wl_rw_writers = 0;
	wl_rw_writes = wl_rw_reads = 0;
}

static void wl_rwlock_op(test_rng_t *r)
{
	unsigned op = (unsigned)rng_below(r, 64);
	if (op < 16) {
		int rc;
		if (op == 0) {
			rc = CALL_OR(WR_TRYLOCK, lk_trywrlock(&wl_rw), EBUSY, EBUSY);
		} else if (op == 1) {
			struct timespec ts = wl_deadline(2 * NSEC_PER_MSEC);
			rc = CALL_OR(WR_TIMEDLOCK, lk_timedwrlock(&wl_rw, &ts), ETIMEDOUT,
				     ETIMEDOUT);
		} else {
			rc = CALL(WR_LOCK, lk_wrlock(&wl_rw));
			if (rc)
				contract_fail(W_RC, C_WR_LOCK, rc, 0);
		}
		if (rc)
			return;
		int w = atomic_fetch_add(&wl_rw_writers, 1);
		WL_CHECK(w == 0, w);
		WL_CHECK(atomic_load(&wl_rw_readers) == 0, atomic_load(&wl_rw_readers));
		wl_rw_data++;
		wl_hold(r);
		atomic_fetch_sub(&wl_rw_writers, 1);
		CALL0(RW_UNLOCK, lk_rwunlock(&wl_rw));
		atomic_fetch_add_explicit(&wl_rw_writes, 1, memory_order_relaxed);
	} else {
		int rc;
		if (op == 16) {
			rc = CALL_OR(RD_TRYLOCK, lk_tryrdlock(&wl_rw), EBUSY, EBUSY);
		} else if (op == 17) {
			struct timespec ts = wl_deadline(2 * NSEC_PER_MSEC);
			rc = CALL_OR(RD_TIMEDLOCK, lk_timedrdlock(&wl_rw, &ts), ETIMEDOUT,
				     ETIMEDOUT);
		} else {
			rc = CALL(RD_LOCK, lk_rdlock(&wl_rw));
			if (rc)
				contract_fail(W_RC, C_RD_LOCK, rc, 0);
		}
		if (rc)
			return;
		atomic_fetch_add(&wl_rw_readers, 1);
		WL_CHECK(atomic_load(&wl_rw_writers) == 0, atomic_load(&wl_rw_writers));
		wl_hold(r);
		atomic_fetch_sub(&wl_rw_readers, 1);
		CALL0(RW_UNLOCK, lk_rwunlock(&wl_rw));
		atomic_fetch_add_explicit(&wl_rw_reads, 1, memory_order_relaxed);
	}
}

static void wl_rwlock_worker(int idx)
{
	test_rng_t r;
	rng_seed(&r, wl_seed, (uint64_t)idx);
	while (!atomic_load_explicit(&wl_stop, memory_order_relaxed))
		wl_rwlock_op(&r);
}

static void wl_rwlock_churn(int round)
{
	test_rng_t r;
	rng_seed(&r, wl_seed, 2000u + (uint64_t)round);
	for (int i = 0; i < 20; i++)
		wl_rwlock_op(&r);
}

static bool wl_rwlock_check(const char *prog, const struct wl_kind *k)
{
	if (wl_rw_data != wl_rw_writes) {
		fprintf(stderr, "%s: FAIL: %s: %ld writes seen, %ld made\n", prog, k->name,
			wl_rw_data, (long)wl_rw_writes);
		return false;
	}
	printf("%s: %s: %ld reads, %ld writes\n", prog, k->name, (long)wl_rw_reads,
	       (long)wl_rw_writes);
	return true;
}

/* ---- cond ---- */

#define WL_QCAP 4
static lk_mutex_t wl_cm;
static lk_cond_t wl_not_empty, wl_not_full;
static long wl_q[WL_QCAP];
static int wl_q_head, wl_q_count;       /* under wl_cm */
static int wl_producers_left;           /* under wl_cm */
static long wl_produced, wl_consumed, wl_sum_in, wl_sum_out;   /* under wl_cm */

static void wl_cond_init(const struct wl_kind *k)
{
	lk_mutex_init(&wl_cm, LK_NORMAL);
	lk_cond_init(&wl_not_empty);
	lk_cond_init(&wl_not_full);
	wl_q_head = wl_q_count = 0;
	wl_producers_left = k->threads / 2;
	wl_produced = wl_consumed = wl_sum_in = wl_sum_out = 0;
}

static void wl_cond_wait(test_rng_t *r, lk_cond_t *c)
{
	if (rng_below(r, 8) == 0) {
		struct timespec ts = wl_deadline(2 * NSEC_PER_MSEC);
		CALL_OR(COND_TIMEDWAIT, lk_cond_timedwait(c, &wl_cm, &ts), ETIMEDOUT, ETIMEDOUT);
	} else {
		CALL0(COND_WAIT, lk_cond_wait(c, &wl_cm));
	}
}

static void wl_cond_wake(test_rng_t *r, lk_cond_t *c)
{
	if (rng_below(r, 8) == 0)
		CALL0(COND_BROADCAST, lk_cond_broadcast(c));
	else
		CALL0(COND_SIGNAL, lk_cond_signal(c));
}

static void wl_cond_producer(int idx, test_rng_t *r)
{
	long v = (long)idx << 40;
	while (!atomic_load_explicit(&wl_stop, memory_order_relaxed)) {
		CALL0(MUTEX_LOCK, lk_mutex_lock(&wl_cm));
		while (wl_q_count == WL_QCAP)
			wl_cond_wait(r, &wl_not_full);
		wl_q[(wl_q_head + wl_q_count) % WL_QCAP] = ++v;
		wl_q_count++;
		wl_produced++;
		wl_sum_in += v;
		wl_cond_wake(r, &wl_not_empty);
		if (rng_below(r, 16) == 0)
			wl_hold(r);
		CALL0(MUTEX_UNLOCK, lk_mutex_unlock(&wl_cm));
	}
	CALL0(MUTEX_LOCK, lk_mutex_lock(&wl_cm));
	wl_producers_left--;
	CALL0(COND_BROADCAST, lk_cond_broadcast(&wl_not_empty));
	CALL0(MUTEX_UNLOCK, lk_mutex_unlock(&wl_cm));
}

static void wl_cond_consumer(test_rng_t *r)
{
	for (;;) {
		CALL0(MUTEX_LOCK, lk_mutex_lock(&wl_cm));
		while (wl_q_count == 0 && wl_producers_left > 0)
			wl_cond_wait(r, &wl_not_empty);
		if (wl_q_count == 0) {
			CALL0(MUTEX_UNLOCK, lk_mutex_unlock(&wl_cm));
			return;
		}
		long v = wl_q[wl_q_head];
		wl_q_head = (wl_q_head + 1) % WL_QCAP;
		wl_q_count--;
		wl_consumed++;
		wl_sum_out += v;
		wl_cond_wake(r, &wl_not_full);
		CALL0(MUTEX_UNLOCK, lk_mutex_unlock(&wl_cm));
		if (rng_below(r, 16) == 0)
			contract_busy_ns(20000);
	}
}

static void wl_cond_worker(int idx)
{
	test_rng_t r;
	rng_seed(&r, wl_seed, (uint64_t)idx);
	if (idx < wl_cur->threads / 2)
		wl_cond_producer(idx + 1, &r);
	else
		wl_cond_consumer(&r);
}

/* A short-lived thread's calls: wake-ups nobody asked for (the waiters
 * test their predicates), under the mutex and outside it. */
static void wl_cond_churn(int round)
{
	test_rng_t r;
	rng_seed(&r, wl_seed, 3000u + (uint64_t)round);
	for (int i = 0; i < 10; i++) {
		CALL0(MUTEX_LOCK, lk_mutex_lock(&wl_cm));
		wl_cond_wake(&r, &wl_not_empty);
		wl_cond_wake(&r, &wl_not_full);
		CALL0(MUTEX_UNLOCK, lk_mutex_unlock(&wl_cm));
		wl_cond_wake(&r, &wl_not_full);
	}
}

static bool wl_cond_check(const char *prog, const struct wl_kind *k)
{
	if (wl_produced != wl_consumed || wl_sum_in != wl_sum_out || wl_q_count != 0) {
		fprintf(stderr, "%s: FAIL: %s: %ld items produced, %ld consumed (sums %ld, %ld), "
			"%d left\n", prog, k->name, wl_produced, wl_consumed, wl_sum_in,
			wl_sum_out, wl_q_count);
		return false;
	}
	printf("%s: %s: %ld items through the queue\n", prog, k->name, wl_produced);
	return true;
}

#ifdef CONTRACT_NATIVE
/* ---- swap (native) ---- */

#define WL_PAIRS 2
static hl_swap_point_t wl_pt[2 * WL_PAIRS];
static _Atomic int wl_pair_done[WL_PAIRS];
static int wl_turn[WL_PAIRS];           /* 0: the pinger's turn, 1: the ponger's */
static _Atomic long wl_rounds;

static void wl_swap_init(const struct wl_kind *k)
{
	(void)k;
	for (int i = 0; i < 2 * WL_PAIRS; i++)
		REQUIRE(hl_swap_point_init(&wl_pt[i]) == 0, "hl_swap_point_init");
	for (int i = 0; i < WL_PAIRS; i++) {
		wl_pair_done[i] = 0;
		wl_turn[i] = 0;
	}
	wl_rounds = 0;
}

static int wl_swap_once(hl_swap_point_t *peer, hl_swap_point_t *self, test_rng_t *r)
{
	if (rng_below(r, 4) == 0) {
		struct timespec ts = wl_deadline(5 * NSEC_PER_SEC);
		return CALL(SWAP_TIMED, hl_swap_timed(peer, self, CLOCK_MONOTONIC, &ts));
	}
	return CALL(SWAP, hl_swap(peer, self));
}

static void wl_swap_worker(int idx)
{
	test_rng_t r;
	rng_seed(&r, wl_seed, (uint64_t)idx);
	int pair = idx / 2;
	hl_swap_point_t *ping = &wl_pt[2 * pair], *pong = &wl_pt[2 * pair + 1];
	if (idx % 2 == 0) {
		while (!atomic_load_explicit(&wl_stop, memory_order_relaxed)) {
			WL_CHECK(wl_turn[pair] == 0, wl_turn[pair]);
			wl_turn[pair] = 1;
			atomic_fetch_add_explicit(&wl_rounds, 1, memory_order_relaxed);
			int rc = wl_swap_once(pong, ping, &r);
			if (rc)
				contract_fail(W_RC, C_SWAP, rc, 0);
		}
		atomic_store(&wl_pair_done[pair], 1);
		CALL0(WAKE, hl_wake(pong));
	} else {
		CALL0(WAIT_SELF, hl_wait_self(pong));
		while (!atomic_load(&wl_pair_done[pair])) {
			WL_CHECK(wl_turn[pair] == 1, wl_turn[pair]);
			wl_turn[pair] = 0;
			if (rng_below(&r, 16) == 0)
				contract_busy_ns(20000);
			int rc = wl_swap_once(ping, pong, &r);
			if (rc)
				contract_fail(W_RC, C_SWAP, rc, 0);
		}
	}
}

static bool wl_swap_check(const char *prog, const struct wl_kind *k)
{
	printf("%s: %s: %ld round trips\n", prog, k->name, (long)wl_rounds);
	return true;
}

/* ---- channel (native) ---- */

static hl_channel_t wl_ch;
static _Atomic int wl_clients_left;
static _Atomic long wl_served, wl_calls;
static _Atomic int wl_server_rc;

static void *wl_handler(void *req, void *arg)
{
	(void)arg;
	atomic_fetch_add_explicit(&wl_served, 1, memory_order_relaxed);
	return (void *)((uintptr_t)req + 1);
}

static void wl_channel_init(const struct wl_kind *k)
{
	REQUIRE(hl_channel_init(&wl_ch) == 0, "hl_channel_init");
	wl_clients_left = k->threads - 1;
	wl_served = wl_calls = 0;
	wl_server_rc = -1;
}

/* One call; false when the channel was shut down (a churned client). */
static bool wl_channel_op(test_rng_t *r, uintptr_t v)
{
	void *resp = NULL;
	int rc;
	if (rng_below(r, 4) == 0) {
		struct timespec ts = wl_deadline(5 * NSEC_PER_SEC);
		rc = CALL(CHANNEL_CALL_TIMED, hl_channel_call_timed(&wl_ch, (void *)v, &resp,
								    CLOCK_MONOTONIC, &ts));
	} else {
		rc = CALL(CHANNEL_CALL, hl_channel_call(&wl_ch, (void *)v, &resp));
	}
	if (rc == ESHUTDOWN)
		return false;
	if (rc)
		contract_fail(W_RC, C_CHANNEL_CALL, rc, 0);
	else
		WL_CHECK((uintptr_t)resp == v + 1, (long)((uintptr_t)resp - v));
	atomic_fetch_add_explicit(&wl_calls, 1, memory_order_relaxed);
	return true;
}

static void wl_channel_worker(int idx)
{
	if (idx == 0) {
		wl_server_rc = CALL(CHANNEL_SERVE, hl_channel_serve(&wl_ch, wl_handler, NULL, NULL));
		return;
	}
	test_rng_t r;
	rng_seed(&r, wl_seed, (uint64_t)idx);
	uintptr_t v = (uintptr_t)idx << 32;
	while (!atomic_load_explicit(&wl_stop, memory_order_relaxed)) {
		wl_channel_op(&r, v);
		v += 2;
	}
	if (atomic_fetch_sub(&wl_clients_left, 1) == 1)
		CALL0(CHANNEL_SHUTDOWN, hl_channel_shutdown(&wl_ch));
}

static void wl_channel_churn(int round)
{
	test_rng_t r;
	rng_seed(&r, wl_seed, 4000u + (uint64_t)round);
	uintptr_t v = (uintptr_t)(100 + round % 1000) << 32;
	for (int i = 0; i < 10 && wl_channel_op(&r, v); i++)
		v += 2;
}

static bool wl_channel_check(const char *prog, const struct wl_kind *k)
{
	if (wl_server_rc != 0 || wl_served != wl_calls) {
		fprintf(stderr, "%s: FAIL: %s: hl_channel_serve returned %d; %ld calls served, "
			"%ld answered\n", prog, k->name, (int)wl_server_rc, (long)wl_served,
			(long)wl_calls);
		return false;
	}
	printf("%s: %s: %ld calls\n", prog, k->name, (long)wl_calls);
	return true;
}
#endif

/* ---- the kinds ---- */

static const struct wl_kind wl_kinds[] = {
#ifdef CONTRACT_NATIVE
	{ "hl_mutex", 6, LK_NORMAL, wl_mutex_init, wl_mutex_worker, wl_mutex_churn, wl_mutex_check },
	{ "hl_rwlock (prefer writer)", 6, 0, wl_rwlock_init, wl_rwlock_worker, wl_rwlock_churn,
	  wl_rwlock_check },
	{ "hl_rwlock (prefer reader)", 6, 1, wl_rwlock_init, wl_rwlock_worker, wl_rwlock_churn,
	  wl_rwlock_check },
	{ "hl_rwlock (fair)", 6, 2, wl_rwlock_init, wl_rwlock_worker, wl_rwlock_churn,
	  wl_rwlock_check },
	{ "hl_cond + hl_mutex", 6, 0, wl_cond_init, wl_cond_worker, wl_cond_churn, wl_cond_check },
	{ "hl_swap", 2 * WL_PAIRS, 0, wl_swap_init, wl_swap_worker, NULL, wl_swap_check },
	{ "hl_channel", 6, 0, wl_channel_init, wl_channel_worker, wl_channel_churn,
	  wl_channel_check },
#else
	{ "pthread_mutex (normal)", 6, LK_NORMAL, wl_mutex_init, wl_mutex_worker, wl_mutex_churn,
	  wl_mutex_check },
	{ "pthread_mutex (recursive)", 6, LK_RECURSIVE, wl_mutex_init, wl_mutex_worker,
	  wl_mutex_churn, wl_mutex_check },
	{ "pthread_mutex (errorcheck)", 6, LK_ERRORCHECK, wl_mutex_init, wl_mutex_worker,
	  wl_mutex_churn, wl_mutex_check },
	{ "pthread_rwlock (prefer reader)", 6, 0, wl_rwlock_init, wl_rwlock_worker,
	  wl_rwlock_churn, wl_rwlock_check },
	{ "pthread_rwlock (prefer writer)", 6, 1, wl_rwlock_init, wl_rwlock_worker,
	  wl_rwlock_churn, wl_rwlock_check },
	{ "pthread_cond + pthread_mutex", 6, 0, wl_cond_init, wl_cond_worker, wl_cond_churn,
	  wl_cond_check },
#endif
};
#define WL_NKINDS ((int)(sizeof(wl_kinds) / sizeof(wl_kinds[0])))

/* ---- a run ---- */

static void *wl_thread(void *arg)
{
	int idx = (int)(intptr_t)arg;
	cur_thread = idx;
	contract_thread_init();
	if (wl_hooks->before_loop)
		wl_hooks->before_loop(idx);
	atomic_fetch_add(&wl_ready, 1);
	while (!atomic_load(&wl_go))
		sched_yield();
	wl_cur->worker(idx);
	atomic_fetch_add(&wl_done, 1);
	if (wl_hooks->after_loop)
		wl_hooks->after_loop(idx);
	return NULL;
}

static void *wl_churn_one(void *arg)
{
	int round = (int)(intptr_t)arg;
	cur_thread = 100 + round;
	contract_thread_init();
	wl_cur->churn(round);
	return NULL;
}

/* Creates, runs and joins short-lived threads, one at a time, until stop. */
static void *wl_churn_thread(void *arg)
{
	(void)arg;
	cur_thread = 99;
	contract_thread_init();
	if (wl_hooks->before_loop)
		wl_hooks->before_loop(99);
	atomic_fetch_add(&wl_ready, 1);
	while (!atomic_load(&wl_go))
		sched_yield();
	for (int round = 0; !atomic_load(&wl_stop); round++) {
		pthread_t t;
		int rc = pthread_create(&t, NULL, wl_churn_one, (void *)(intptr_t)round);
		if (rc) {
			contract_fail(W_RC, C_THREAD_INIT, rc, 0);
			break;
		}
		pthread_join(t, NULL);
		atomic_fetch_add(&wl_churned, 1);
	}
	return NULL;
}

/* Runs kind k (in the calling process, which should be a fresh child).
 * Returns 0 when the workers finished and the invariants held; prints one
 * line saying what failed otherwise.  With after_loop set the workers are
 * not joined (they block). */
static int wl_run(const char *prog, const struct wl_kind *k, const struct wl_hooks *h)
{
	pthread_t t[WL_MAX_THREADS + 1];
	bool churn = h->churn && k->churn;
	int n = k->threads + churn;
	wl_hooks = h;
	wl_cur = k;
	wl_go = wl_stop = false;
	wl_ready = wl_done = 0;
	wl_churned = 0;
	k->init(k);
	for (int i = 0; i < k->threads; i++)
		REQUIRE(pthread_create(&t[i], NULL, wl_thread, (void *)(intptr_t)i) == 0,
			"pthread_create");
	if (churn)
		REQUIRE(pthread_create(&t[k->threads], NULL, wl_churn_thread, NULL) == 0,
			"pthread_create");
	int64_t limit = now_ns() + 10 * NSEC_PER_SEC;
	while (atomic_load(&wl_ready) < n && now_ns() < limit)
		sleep_ns(NSEC_PER_MSEC);
	REQUIRE(atomic_load(&wl_ready) == n, "%s: the workers did not start", k->name);
	atomic_store(&wl_go, true);
	sleep_ns(h->run_ns);
	atomic_store(&wl_stop, true);
	limit = now_ns() + 10 * NSEC_PER_SEC;
	while (atomic_load(&wl_done) < k->threads && now_ns() < limit)
		sleep_ns(NSEC_PER_MSEC);
	if (atomic_load(&wl_done) < k->threads) {
		if (!contract_print_fail(prog, k->name))
			fprintf(stderr, "%s: FAIL: %s: %d of %d workers still in their loop 10 s "
				"after the stop (a lock call that does not return)\n", prog,
				k->name, k->threads - atomic_load(&wl_done), k->threads);
		return 1;
	}
	if (!h->after_loop)
		for (int i = 0; i < k->threads; i++)
			pthread_join(t[i], NULL);
	if (churn)
		pthread_join(t[k->threads], NULL);
	bool ok = !contract_print_fail(prog, k->name);
	ok &= k->check(prog, k);
	if (churn)
		printf("%s: %s: %ld short-lived threads made calls\n", prog, k->name,
		       (long)wl_churned);
	return ok ? 0 : 1;
}

#endif
