/* SPDX-License-Identifier: MIT */
/* hl_rwlock: bounded waiting for writers under a continuous read hold, and
 * reader grouping in the waiter queue (issue 4, design invariant 3).
 *
 * (a) Writer starvation.  READERS reader threads keep the lock read-held
 *     all the time: each holds it for 0.2..1 ms (sleeping), then leaves only
 *     when another reader is inside (it decrements an "inside" count from
 *     k >= 2 to k - 1 atomically, so the last reader inside never leaves
 *     first), waiting for one at most EXT_MAX (5 ms); then it takes the
 *     lock again at once.  The read holds overlap: the lock is free only
 *     when no reader could come in for 5 ms.  One writer thread takes the
 *     write lock WRITES times (wrlock, 0.1 ms inside, 3..8 ms outside).
 *     A monitor rescues a writer that waited GIVE_UP (1 s): the readers
 *     then stop taking the lock until it got it, so the test never hangs.
 *     Asserts, for hl_rwlock:
 *      - every wrlock returned 0 and no writer needed the rescue (plain and
 *        sanitizer builds);
 *      - plain build: every write wait, less the stall inside it, is at most
 *        handoff_ns + 1 ms + EXT_MAX + 50 ms.  The argument: after
 *        handoff_ns the writer (the queue head) is due a handoff, and from
 *        then on no reader steals; each reader inside leaves within its
 *        hold (at most 1 ms) plus EXT_MAX, and the last release hands the
 *        lock to the writer; 50 ms covers the wake-ups of the parked
 *        writer and readers on this oversubscribed 2-CPU VM (a handful of
 *        handovers, each a few ms at worst).  Stall: a detector thread
 *        sleeps 1 ms in a loop; whatever it oversleeps beyond 3 ms is time
 *        in which the machine (the host, on a VM) did not run us; the part
 *        of a wait that overlaps such stalls is not counted.  Raw waits are
 *        printed beside the adjusted ones.
 *     pthread_rwlock_t (default attributes: readers preferred) is run the
 *     same way, with a 300 ms rescue and 3 writes, and only printed: its
 *     writer may starve.
 * (b) Grouping, in the fair kind (HL_RWLOCK_FAIR: the writer-preferring
 *     default stops a group at every writer).  With spin_ns 0 (waiters park at once) and handoff_ns 1 s
 *     (no writer becomes due during the setup), the main thread write-holds
 *     the lock, then threads enqueue one at a time in the order R1 W1 R2 W2
 *     R3 W3, each started only once the previous one is queued and asleep
 *     (listed by hl_rwlock_describe and in state S in /proc; in TSan
 *     builds asleep only, see rwlock_ops.h).  Then the
 *     main thread unlocks.  Each thread appends its name to a log when it
 *     gets the lock (an atomic index); readers hold 30 ms (sleeping),
 *     writers 1 ms.  What the implementation must give: the unlock wakes
 *     the head R1, which takes a read share and takes out of the queue the
 *     readers behind it, passing writers that are not due, up to the last
 *     node (W3, which stays): R2 and R3.  The queue is then W1 W2 W3, served
 *     in FIFO order once the three readers are gone.  Asserts:
 *      - R W R W R W, handoff 1 s: the log is {R1 R2 R3} (any order) then
 *        W1 W2 W3, and 3 readers were inside at once;
 *      - R W R W R W, handoff 0 (every writer is due at once, so a reader
 *        takes no reader past a writer): the log is R1 W1 R2 W2 R3 W3
 *        exactly, and never more than 1 reader inside;
 *      - R W R W R, handoff 1 s: R1, R2 and R3 are granted together
 *        first (3 readers inside at once: R3, the last node, is taken
 *        with the group by a CAS of the tail, rwlock.c step 5; nobody
 *        enqueues meanwhile), then W1 W2;
 *      - every call returned 0, and afterwards the lock is free and destroy
 *        returns 0.
 *     Grouping does not depend on timing (only the setup waits), so it is
 *     asserted in sanitizer builds too.
 * Seed: HOTLOCK_SEED (printed): the readers' hold times and the writer's
 * pauses. */
#include "common.h"
#include "rwlock_ops.h"

#include <hotlock/hotlock.h>

#include <pthread.h>
#include <stdatomic.h>

#define READERS  4
#define WRITES   20
#define EXT_MAX  (5 * NSEC_PER_MSEC)
#define HOLD_MAX (1 * NSEC_PER_MSEC)
#define SLACK    (50 * NSEC_PER_MSEC)

/* ---- the lock under test, hl_rwlock or pthread_rwlock ---- */

struct rw {
	const char *name;
	void *obj;
	int (*rdlock)(void *);
	int (*wrlock)(void *);
	int (*unlock)(void *);
};

static int hl_rd(void *o) { return hl_rwlock_rdlock(o); }
static int hl_wr(void *o) { return hl_rwlock_wrlock(o); }
static int hl_un(void *o) { return hl_rwlock_unlock(o); }
static int pt_rd(void *o) { return pthread_rwlock_rdlock(o); }
static int pt_wr(void *o) { return pthread_rwlock_wrlock(o); }
static int pt_un(void *o) { return pthread_rwlock_unlock(o); }

/* ---- the stall detector ---- */

#define MAX_STALLS 4096

static struct {
	atomic_int stop;
	atomic_int n;
	int64_t start[MAX_STALLS], end[MAX_STALLS];
} stalls;

static void *stall_main(void *arg)
{
	(void)arg;
	while (!atomic_load(&stalls.stop)) {
		int64_t t0 = now_ns(), t1;
		sleep_ns(NSEC_PER_MSEC);
		t1 = now_ns();
		if (t1 - t0 > 3 * NSEC_PER_MSEC) {
			int i = atomic_load(&stalls.n);
			if (i < MAX_STALLS) {
				stalls.start[i] = t0 + 3 * NSEC_PER_MSEC;
				stalls.end[i] = t1;
				atomic_store(&stalls.n, i + 1); /* seq_cst: publishes the entry */
			}
		}
	}
	return NULL;
}

/* Stall time inside [t0, t1]; call after the detector has been stopped. */
static int64_t stall_within(int64_t t0, int64_t t1)
{
	int64_t sum = 0;
	int n = atomic_load(&stalls.n);
	for (int i = 0; i < n; i++) {
		int64_t a = stalls.start[i] > t0 ? stalls.start[i] : t0;
		int64_t b = stalls.end[i] < t1 ? stalls.end[i] : t1;
		if (b > a)
			sum += b - a;
	}
	return sum;
}

/* ---- (a) writer starvation ---- */

struct starve {
	const struct rw *rw;
	uint64_t seed;
	int writes;
	atomic_int stop;
	atomic_int backoff;             /* rescue: readers stay out */
	atomic_int inside;              /* readers inside, as they count */
	atomic_llong waiting_since;     /* the writer's wrlock call, 0 if none */
	atomic_int cur;                 /* which write that is */
	atomic_int writer_done;
	atomic_llong reader_holds;
	atomic_llong lonely_exits;      /* a reader left with nobody inside */
	int64_t t0[WRITES], t1[WRITES];
	bool rescued[WRITES];
	atomic_int errors;
};

struct reader_arg {
	struct starve *s;
	int idx;
};

static void *reader_main(void *p)
{
	struct reader_arg *a = p;
	struct starve *s = a->s;
	test_rng_t rng;

	rng_seed(&rng, s->seed, (uint64_t)a->idx + 1);
	while (!atomic_load(&s->stop)) {
		int64_t t, k;
		if (atomic_load(&s->backoff)) {
			sleep_ns(100 * NSEC_PER_USEC);
			continue;
		}
		if (s->rw->rdlock(s->rw->obj) != 0) {
			atomic_fetch_add(&s->errors, 1); /* reported by the main thread */
			break;
		}
		atomic_fetch_add(&s->inside, 1);
		atomic_fetch_add(&s->reader_holds, 1);
		sleep_ns(200 * NSEC_PER_USEC + (int64_t)rng_below(&rng, 800) * NSEC_PER_USEC);
		/* Leave only when another reader is inside: the holds overlap. */
		t = now_ns();
		for (;;) {
			int in = atomic_load(&s->inside);
			if (in >= 2) {
				if (atomic_compare_exchange_weak(&s->inside, &in, in - 1))
					break;
				continue;
			}
			k = now_ns() - t;
			if (k > EXT_MAX || atomic_load(&s->backoff) || atomic_load(&s->stop)) {
				atomic_fetch_sub(&s->inside, 1);
				atomic_fetch_add(&s->lonely_exits, 1);
				break;
			}
			sleep_ns(50 * NSEC_PER_USEC);
		}
		if (s->rw->unlock(s->rw->obj) != 0) {
			atomic_fetch_add(&s->errors, 1);
			break;
		}
	}
	return NULL;
}

static void *writer_main(void *p)
{
	struct starve *s = p;
	test_rng_t rng;

	rng_seed(&rng, s->seed, 0);
	for (int i = 0; i < s->writes && !atomic_load(&s->stop); i++) {
		sleep_ns(3 * NSEC_PER_MSEC + (int64_t)rng_below(&rng, 5000) * NSEC_PER_USEC);
		s->t0[i] = now_ns();
		atomic_store(&s->cur, i);
		atomic_store(&s->waiting_since, s->t0[i]);
		if (s->rw->wrlock(s->rw->obj) != 0) {
			atomic_fetch_add(&s->errors, 1);
			atomic_store(&s->waiting_since, 0);
			break;
		}
		s->t1[i] = now_ns();
		atomic_store(&s->waiting_since, 0);
		sleep_ns(100 * NSEC_PER_USEC);
		if (s->rw->unlock(s->rw->obj) != 0) {
			atomic_fetch_add(&s->errors, 1);
			break;
		}
	}
	atomic_store(&s->writer_done, 1);
	return NULL;
}

/* Runs (a) on rw; fills s.  Returns the number of rescues; stops early
 * after 3. */
static int starve_run(struct starve *s, int64_t give_up_ns)
{
	pthread_t rd[READERS], wr, det;
	struct reader_arg ra[READERS];
	int rescues = 0;
	int64_t rescue_since = 0;

	atomic_store(&stalls.stop, 0);
	atomic_store(&stalls.n, 0);
	REQUIRE(pthread_create(&det, NULL, stall_main, NULL) == 0, "pthread_create");
	for (int r = 0; r < READERS; r++) {
		ra[r].s = s;
		ra[r].idx = r;
		REQUIRE(pthread_create(&rd[r], NULL, reader_main, &ra[r]) == 0, "pthread_create");
	}
	sleep_ns(20 * NSEC_PER_MSEC);   /* the readers get going */
	REQUIRE(pthread_create(&wr, NULL, writer_main, s) == 0, "pthread_create");
	while (!atomic_load(&s->writer_done)) {
		int64_t since = atomic_load(&s->waiting_since);
		if (!rescue_since && since && now_ns() - since > give_up_ns) {
			s->rescued[atomic_load(&s->cur)] = true;
			rescues++;
			rescue_since = since;
			atomic_store(&s->backoff, 1);
		} else if (rescue_since && since != rescue_since) {
			atomic_store(&s->backoff, 0);
			rescue_since = 0;
			if (rescues >= 3)
				break;  /* starving: enough evidence */
		}
		sleep_ns(NSEC_PER_MSEC);
	}
	/* The readers stop (a writer still waiting then gets the lock), and
	 * so does the writer, after its current write. */
	atomic_store(&s->stop, 1);
	pthread_join(wr, NULL);
	for (int r = 0; r < READERS; r++)
		pthread_join(rd[r], NULL);
	atomic_store(&stalls.stop, 1);
	pthread_join(det, NULL);
	return rescues;
}

static void test_starvation(uint64_t seed, bool timing)
{
	hl_rwlock_t hl = HL_RWLOCK_INIT;
	pthread_rwlock_t pt;
	const struct rw hlrw = { "hl_rwlock", &hl, hl_rd, hl_wr, hl_un };
	const struct rw ptrw = { "pthread_rwlock (default)", &pt, pt_rd, pt_wr, pt_un };
	static struct starve s;
	hl_config_t hc;
	int64_t bound, worst = 0, worst_adj = 0;
	int rescues, done = 0;
	uint32_t w, r;

	hl_config_get(&hc);
	bound = (int64_t)hc.handoff_ns + HOLD_MAX + EXT_MAX + SLACK;

	memset(&s, 0, sizeof(s));
	s.rw = &hlrw;
	s.seed = seed;
	s.writes = WRITES;
	rescues = starve_run(&s, NSEC_PER_SEC);
	CHECK(atomic_load(&s.errors) == 0, "hl_rwlock: %d lock/unlock calls failed",
	      atomic_load(&s.errors));
	for (int i = 0; i < WRITES && s.t1[i]; i++) {
		int64_t wait = s.t1[i] - s.t0[i], st = stall_within(s.t0[i], s.t1[i]);
		int64_t adj = wait - st;
		done++;
		if (wait > worst)
			worst = wait;
		if (adj > worst_adj)
			worst_adj = adj;
		CHECK(!s.rescued[i], "hl_rwlock: write %d starved: still waiting after 1 s of "
		      "overlapping read holds (the readers were then held back; it waited "
		      "%.1f ms in all, %.1f ms of stalls) (seed 0x%llx)", i, wait / 1e6, st / 1e6,
		      (unsigned long long)seed);
		if (timing && !s.rescued[i])
			CHECK(adj <= bound, "hl_rwlock: write %d waited %.2f ms (%.2f ms raw, %.2f "
			      "ms stalled); bound %.1f ms (seed 0x%llx)", i, adj / 1e6, wait / 1e6,
			      st / 1e6, bound / 1e6, (unsigned long long)seed);
	}
	CHECK(done == WRITES || rescues >= 3, "hl_rwlock: only %d of %d writes done", done,
	      WRITES);
	printf("starvation, hl_rwlock (handoff %.1f ms): %d writes beside %d overlapping "
	       "readers (%lld read holds, %lld lonely reader exits); worst write wait %.2f ms "
	       "raw, %.2f ms without stalls; bound %.1f ms (handoff + 1 ms hold + 5 ms "
	       "extension + 50 ms)%s; %d rescued\n",
	       hc.handoff_ns / 1e6, done, READERS, (long long)atomic_load(&s.reader_holds),
	       (long long)atomic_load(&s.lonely_exits), worst / 1e6, worst_adj / 1e6,
	       bound / 1e6, timing ? "" : " (not asserted: sanitizer build)", rescues);
	for (int i = 0; i < done; i++)
		printf(" %.2f", (s.t1[i] - s.t0[i]) / 1e6);
	printf(" ms\n");
	hl_rwlock_holders(&hl, &w, &r);
	CHECK(w == 0 && r == 0, "hl_rwlock: after the run writer %u, %u readers", w, r);
	CHECK_RC(hl_rwlock_destroy(&hl), 0);

	/* The comparison: glibc's default rwlock prefers readers. */
	REQUIRE(pthread_rwlock_init(&pt, NULL) == 0, "pthread_rwlock_init");
	memset(&s, 0, sizeof(s));
	s.rw = &ptrw;
	s.seed = seed;
	s.writes = 3;
	rescues = starve_run(&s, 300 * NSEC_PER_MSEC);
	CHECK(atomic_load(&s.errors) == 0, "pthread_rwlock: %d lock/unlock calls failed",
	      atomic_load(&s.errors));
	done = 0;
	worst = 0;
	for (int i = 0; i < s.writes && s.t1[i]; i++) {
		done++;
		if (s.t1[i] - s.t0[i] > worst)
			worst = s.t1[i] - s.t0[i];
	}
	printf("starvation, %s (printed, not asserted): %d of %d writes got the lock only "
	       "when rescued (readers held back after 300 ms); worst wait %.1f ms\n",
	       ptrw.name, rescues, s.writes, worst / 1e6);
	pthread_rwlock_destroy(&pt);
}

/* ---- (b) grouping ---- */

#define MAXQ 8

struct grp {
	hl_rwlock_t *l;
	char names[MAXQ][4];
	atomic_int next;
	int log[MAXQ];
	atomic_int inside, max_inside;
};

struct gthread {
	struct grp *g;
	int idx;
	bool reader;
	pthread_t th;
	atomic_uint tid;
	int rc;
};

static void *gthread_main(void *p)
{
	struct gthread *t = p;
	struct grp *g = t->g;
	int pos, in, m;

	atomic_store(&t->tid, test_gettid());
	t->rc = t->reader ? hl_rwlock_rdlock(g->l) : hl_rwlock_wrlock(g->l);
	if (t->rc)
		return NULL;
	pos = atomic_fetch_add(&g->next, 1);
	if (pos < MAXQ)
		g->log[pos] = t->idx;
	if (t->reader) {
		in = atomic_fetch_add(&g->inside, 1) + 1;
		m = atomic_load(&g->max_inside);
		while (in > m && !atomic_compare_exchange_weak(&g->max_inside, &m, in))
			;
		sleep_ns(30 * NSEC_PER_MSEC); /* readers granted together overlap */
		atomic_fetch_sub(&g->inside, 1);
	} else {
		sleep_ns(NSEC_PER_MSEC);
	}
	t->rc = hl_rwlock_unlock(g->l);
	return NULL;
}

/* Queues the pattern (e.g. "RWRWRW") behind a write hold of the caller,
 * releases, and writes the grant order into order ("R1 R2 ..."). */
static void group_run(const char *pattern, struct grp *g, char *order, size_t len)
{
	int n = (int)strlen(pattern), nr = 0, nw = 0;
	struct gthread t[MAXQ];
	hl_rwlock_t *l = calloc(1, sizeof(*l));
	REQUIRE(l && hl_rwlock_init_kind(l, HL_RWLOCK_FAIR) == 0, "init");
	char line[1024];
	size_t used = 0;

	REQUIRE(l && n <= MAXQ, "group_run");
	memset(g, 0, sizeof(*g));
	g->l = l;
	CHECK_RC(hl_rwlock_wrlock(l), 0);
	for (int i = 0; i < n; i++) {
		t[i].g = g;
		t[i].idx = i;
		t[i].reader = pattern[i] == 'R';
		t[i].rc = -1;
		atomic_store(&t[i].tid, 0);
		g->names[i][0] = pattern[i];
		g->names[i][1] = (char)('0' + (t[i].reader ? ++nr : ++nw)); /* n <= MAXQ < 10 */
		g->names[i][2] = 0;
		REQUIRE(pthread_create(&t[i].th, NULL, gthread_main, &t[i]) == 0, "pthread_create");
		/* Queued and asleep, before the next one starts. */
		REQUIRE(rwlock_wait_queued(l, pattern[i], &t[i].tid, line, sizeof(line)),
			"%s: %s not queued after 10 s: %s", pattern, g->names[i], line);
	}
	if (!TEST_TSAN) { /* see rwlock_wait_queued */
		hl_rwlock_describe(l, line, sizeof(line));
		printf("queue %s before the release: %s\n", pattern, line);
	}
	CHECK_RC(hl_rwlock_unlock(l), 0);
	for (int i = 0; i < n; i++) {
		pthread_join(t[i].th, NULL);
		CHECK(t[i].rc == 0, "%s: %s returned %d", pattern, g->names[i], t[i].rc);
	}
	CHECK(atomic_load(&g->next) == n, "%s: %d grants for %d threads", pattern,
	      atomic_load(&g->next), n);
	order[0] = 0;
	for (int i = 0; i < n && i < atomic_load(&g->next); i++)
		used += (size_t)snprintf(order + used, len - used, "%s%s", i ? " " : "",
					 g->names[g->log[i]]);
	CHECK_RC(hl_rwlock_destroy(l), 0);
	free(l);
}

/* The names in positions [from, to) of the log, sorted, as one string. */
static void log_set(const struct grp *g, int from, int to, char *out, size_t len)
{
	char tmp[MAXQ][4];
	int n = 0;
	size_t used = 0;
	for (int i = from; i < to; i++)
		memcpy(tmp[n++], g->names[g->log[i]], 4);
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && strcmp(tmp[j - 1], tmp[j]) > 0; j--) {
			char x[4];
			memcpy(x, tmp[j], 4);
			memcpy(tmp[j], tmp[j - 1], 4);
			memcpy(tmp[j - 1], x, 4);
		}
	out[0] = 0;
	for (int i = 0; i < n; i++)
		used += (size_t)snprintf(out + used, len - used, "%s%s", i ? " " : "", tmp[i]);
}

/* Runs pattern (R and W alternating, 3 readers) with handoff 1 s: the
 * three readers must be granted first, together (any order), then the
 * writers in order. */
static void check_grouped(struct grp *g, const char *pattern, const char *writers,
			  const char *why)
{
	char order[128], set[128], spaced[16];
	size_t n = 0;
	for (const char *p = pattern; *p && n + 2 < sizeof(spaced); p++) {
		if (n)
			spaced[n++] = ' ';
		spaced[n++] = *p;
	}
	spaced[n] = 0;
	group_run(pattern, g, order, sizeof(order));
	printf("grant order, %s, handoff 1 s: %s (up to %d readers inside at once)\n", spaced,
	       order, atomic_load(&g->max_inside));
	log_set(g, 0, 3, set, sizeof(set));
	CHECK(strcmp(set, "R1 R2 R3") == 0 && strstr(order, writers) == order + 9,
	      "%s with handoff 1 s was granted %s, expected R1 R2 R3 (any order%s) then %s",
	      spaced, order, why, writers);
	CHECK(atomic_load(&g->max_inside) == 3, "%s: %d readers inside at once, "
	      "expected the 3 granted together", spaced, atomic_load(&g->max_inside));
}

static void test_grouping(void)
{
	hl_config_t c0, c;
	static struct grp g;
	char order[128];

	hl_config_get(&c0);
	c = c0;
	c.spin_ns = 0;
	c.handoff_ns = NSEC_PER_SEC;
	CHECK_RC(hl_config_set(&c), 0);

	check_grouped(&g, "RWRWRW", "W1 W2 W3", "");
	check_grouped(&g, "RWRWR", "W1 W2", ": R3, the last node, goes with the group");

	c.handoff_ns = 0;
	CHECK_RC(hl_config_set(&c), 0);
	group_run("RWRWRW", &g, order, sizeof(order));
	printf("grant order, R W R W R W, handoff 0: %s (up to %d readers inside at once)\n",
	       order, atomic_load(&g.max_inside));
	CHECK(strcmp(order, "R1 W1 R2 W2 R3 W3") == 0, "R W R W R W with handoff 0 (every "
	      "writer due) was granted %s, expected R1 W1 R2 W2 R3 W3", order);
	CHECK(atomic_load(&g.max_inside) == 1, "handoff 0: %d readers inside at once, "
	      "expected 1", atomic_load(&g.max_inside));

	CHECK_RC(hl_config_set(&c0), 0);
}

int main(void)
{
	uint64_t seed = test_seed(0x5eed0a4b);
	bool timing = !HOTLOCK_SANITIZED;
	hl_config_t hc;

	hl_config_get(&hc);
	printf("test_rwlock_fairness: %ld CPUs, seed 0x%llx, spin_ns %llu, handoff_ns %llu%s\n",
	       online_cpus(), (unsigned long long)seed, (unsigned long long)hc.spin_ns,
	       (unsigned long long)hc.handoff_ns,
	       timing ? "" : "; sanitizer build: time bounds printed, not asserted");
	fflush(stdout);
	test_grouping();
	test_starvation(seed, timing);
	return test_finish("test_rwlock_fairness");
}
