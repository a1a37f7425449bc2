/* SPDX-License-Identifier: MIT */
/* The deadlock detector's analysis (hotlock-run --deadlocks, --lock-order,
 * and the counts of --stats' report; docs/deadlocks.md).  The collector
 * (collector.c) calls dl_sweep for each process of the program with a
 * LIVE slot, every few hundred milliseconds while it runs, and dl_end once
 * it has ended.  What it reads: the slot (src/preload/stats.h: each
 * thread's wait record and hold list; stats_area.h: the lock-order
 * edges), and, while the process runs, its lock words (process_vm_readv)
 * and its threads' /proc files.  It writes nothing anywhere but through
 * the collector's emit.
 *
 * Deadlocks.  A wait is looked at once the collector has seen it for the
 * threshold (--deadlocks-after: the program reads no clock for it, and
 * pass1 notes when each wait was first seen), and only a lock's wait
 * without a deadline: a timed wait ends by itself, and a condvar wait is
 * for a signal, not a holder.
 * Its lock's word names whom it waits for (holders()): a mutex its owner;
 * an rwlock the writer, and for a write wait every thread whose hold list
 * has a read of it (none where the word counts fewer readers than that:
 * a share another thread released); a read wait of a lock whose waiting
 * writers keep new readers out (glibc's PREFER_WRITER_NONRECURSIVE kind,
 * with hotlock's HANDOFF set by the writer at the queue head) the one
 * thread that waits to write it.  A sweep reads, in this order: every
 * thread's wait seq (pass 1); the words and hold lists of the candidates'
 * locks, and of the locks that their holders wait for in turn (round 1);
 * the same again (round 2); every seq again (pass 2).  An edge W -> H
 * stands where W's seq is the same odd value in both passes (W was in that
 * one wait all along), both rounds read the same holders of W's lock, and
 * H's seq too is the same in both passes.
 *
 * Why a cycle of such edges is a deadlock, with no false positive: take T,
 * any instant after round 1's last read and before round 2's first.  Each W of the cycle waited
 * for its lock at T (from pass 1 to pass 2).  Its holder H is a thread of
 * the cycle, so H too was blocked in one wait from pass 1 to pass 2, and a
 * blocked thread neither takes a lock nor releases one.  The word named H
 * at round 1 and at round 2; for it not to name H at T, another thread
 * would have had to release the lock for H (a normal mutex may be unlocked
 * by any thread) and H to take it again, or be handed it (a handoff goes
 * to a waiter of that very lock), before round 2, which a blocked H cannot
 * do; and no other thread has H's TID while H lives.  A read hold is in
 * H's own hold list, which only H writes: it stood all along.  A reader
 * kept out by a waiting writer is so as long as that writer waits, and it
 * waited from pass 1 to pass 2.  So at T
 * each thread of the cycle waited for a lock the next one held, and none
 * can go on.  Each cycle is reported once (its key: the set of (TID, wait
 * seq) of its threads), however long it stands.
 *
 * Hangs.  A candidate that is on no cycle, whose chain of holders (each
 * waiting for a lock, then the next) ends at a thread that does not wait
 * for a lock (or waits on a condvar, or with a deadline; or has no
 * record, where none was left out), is reported once per wait with the
 * chain and the last holder's state.
 *
 * Sites.  Where a holder took a lock comes from its hold list; under
 * --deadlocks alone a mutex is in no list, and keeps the site in itself
 * (dl_opts.sites), read with the owner.
 *
 * Lock order.  Each new edge of the area's ring joins the process's graph
 * of locks (address and generation); where a path leads back from its
 * second lock to its first, the shortest one and the edge are reported as
 * a cycle, once per set of pairs of locks (and once more where a later
 * edge makes a cycle of reads one with a write). */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "deadlock.h"
#include "slot.h"
#include "stats.h"
#include "tpword.h"         /* the lock word: owner TID, HANDOFF */
#include "utf8.h"

#define KIND_NONRECURSIVE 2             /* PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP */
#define MAX_HOLDERS 64                  /* readers told apart per lock; more: no reader edge */
#define CYCLE_STEPS 1000000u            /* edges the cycle search follows per sweep */

static struct dl_opts O;
static dl_emit_fn *emit_fn;

void dl_setup(const struct dl_opts *opts, dl_emit_fn *emit)
{
	O = *opts;
	emit_fn = emit;
}

/* ---- the graphs ---- */

bool dl_cycles(const struct dl_graph *g, void (*found)(void *arg, const uint32_t *nodes, uint32_t len),
	       void *arg, uint32_t *work, uint64_t max_steps)
{
	/* From each node s, every path through nodes above s: one that
	 * comes back to s is a cycle whose least node is s, so each is
	 * found once.  on[] marks the path's nodes. */
	uint32_t *path = work, *edge = work + g->n, *on = work + 2 * g->n;
	memset(on, 0, g->n * sizeof(*on));
	for (uint32_t s = 0; s < g->n; s++) {
		int64_t d = 0;
		path[0] = s;
		edge[0] = (uint32_t)g->head[s];
		on[s] = 1;
		while (d >= 0) {
			int32_t e = (int32_t)edge[d];
			if (e < 0) {
				on[path[d--]] = 0;
				continue;
			}
			edge[d] = (uint32_t)g->next[e];
			if (!max_steps--)
				return false;
			uint32_t v = g->to[e];
			if (v == s) {
				found(arg, path, (uint32_t)d + 1);
			} else if (v > s && !on[v]) {
				path[++d] = v;
				edge[d] = (uint32_t)g->head[v];
				on[v] = 1;
			}
		}
	}
	return true;
}

uint32_t dl_path(const struct dl_graph *g, uint32_t a, uint32_t b, int32_t *path, int32_t *work)
{
	/* Breadth first from a: by[v] is the edge v was reached by (-1: a,
	 * -2: not yet), from[v] the node it came from. */
	int32_t *by = work, *from = work + g->n, *queue = work + 2 * g->n;
	for (uint32_t v = 0; v < g->n; v++)
		by[v] = -2;
	uint32_t qh = 0, qt = 0;
	by[a] = -1;
	queue[qt++] = (int32_t)a;
	while (qh < qt && by[b] == -2) {
		uint32_t u = (uint32_t)queue[qh++];
		for (int32_t e = g->head[u]; e >= 0; e = g->next[e])
			if (by[g->to[e]] == -2) {
				by[g->to[e]] = e;
				from[g->to[e]] = (int32_t)u;
				queue[qt++] = (int32_t)g->to[e];
			}
	}
	if (by[b] < 0)
		return 0;
	uint32_t len = 0;
	for (uint32_t v = b; v != a; v = (uint32_t)from[v])
		len++;
	uint32_t i = len;
	for (uint32_t v = b; v != a; v = (uint32_t)from[v])
		path[--i] = by[v];
	return len;
}

/* ---- what was reported: keys, each of a set of values ---- */

struct set {
	uint64_t *v;
	size_t n, cap;
};

static int by_value(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The key of a set of n values (sorted here), of a kind. */
static uint64_t key_of(uint64_t kind, uint64_t *v, size_t n)
{
	qsort(v, n, sizeof(*v), by_value);
	uint64_t h = kind;
	for (size_t i = 0; i < n; i++) {
		h = (h ^ v[i]) * 0x9e3779b97f4a7c15ull;
		h ^= h >> 29;
	}
	return h;
}

/* Adds key: true where it was not there yet (out of memory: false, so
 * that nothing is reported again and again).  Reports are few: a list. */
static bool set_add(struct set *s, uint64_t key)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i] == key)
			return false;
	if (s->n == s->cap) {
		uint64_t *v = realloc(s->v, (s->cap ? 2 * s->cap : 16) * sizeof(*v));
		if (!v)
			return false;
		s->v = v;
		s->cap = s->cap ? 2 * s->cap : 16;
	}
	s->v[s->n++] = key;
	return true;
}

/* ---- a process ---- */

/* Its lock-order graph: nodes (address, generation), edges as read from
 * the area, in the form of struct dl_graph. */
struct order {
	struct area_edge *e;
	int32_t *next;
	uint32_t *from, *to, m, ecap;
	uintptr_t *addr;
	uint32_t *gen, n, ncap;
	int32_t *head, *path, *work;
	uint32_t *slot, hcap;           /* node + 1 by (address, generation); 0: free */
	uint32_t read;                  /* the area's edges read so far */
};

/* When the collector first saw a record's wait (its seq). */
struct first_seen {
	uint32_t seq;
	uint64_t ns;                    /* CLOCK_MONOTONIC */
};

struct dl_proc {
	struct set seen;                /* keys of the deadlocks, hangs, inversions reported */
	struct first_seen first_seen[AREA_MAX_THREADS];
	uint64_t deadlocks, hangs;
	bool stopped;                   /* its memory cannot be read, or it was sent SIGABRT */
	struct stats_namer *namer;      /* opened at its first report */
	uint32_t namer_modules;         /* ... with this many modules */
	char cmdline[AREA_CMDLINE + 1]; /* the namer's input */
	char program[1024];             /* its command line, valid UTF-8 */
	struct order g;
};

struct dl_proc *dl_proc_new(void)
{
	return calloc(1, sizeof(struct dl_proc));
}

void dl_proc_free(struct dl_proc *p)
{
	if (!p)
		return;
	stats_namer_close(p->namer);
	struct order *g = &p->g;
	void *arrays[] = { g->e, g->next, g->from, g->to, g->addr, g->gen, g->head, g->path, g->work, g->slot };
	for (size_t i = 0; i < sizeof(arrays) / sizeof(arrays[0]); i++)
		free(arrays[i]);
	free(p->seen.v);
	free(p);
}

void dl_counts(const struct dl_proc *p, uint64_t *deadlocks, uint64_t *hangs)
{
	*deadlocks = p ? p->deadlocks : 0;
	*hangs = p ? p->hangs : 0;
}

/* The command line, and names for its code and data (the namer, opened
 * again where the process has loaded modules since). */
static void prepare(struct dl_proc *p, struct area_slot *s)
{
	struct stats_report in;
	slot_report_input(s, &in, "running", 0, 1, p->cmdline);
	utf8_clean(p->program, sizeof(p->program), p->cmdline);
	if (p->namer && p->namer_modules == s->n_modules)
		return;
	stats_namer_close(p->namer);
	p->namer = stats_namer_open(&in);
	p->namer_modules = s->n_modules;
}

static const char *kind_name(uint32_t how)
{
	static const char *const names[] = {
		[SL_MUTEX] = "mutex", [SL_READ] = "rwlock (read)", [SL_WRITE] = "rwlock (write)",
		[SL_GLIBC_MUTEX] = "glibc mutex", [SL_GLIBC_READ] = "glibc rwlock (read)",
		[SL_GLIBC_WRITE] = "glibc rwlock (write)", [SL_COND] = "condvar",
	};
	return how <= SL_COND && names[how] ? names[how] : "lock";
}

static bool is_read(uint32_t how)
{
	return how == SL_READ || how == SL_GLIBC_READ;
}

static json_t *hex(uintptr_t a)
{
	char buf[32];
	snprintf(buf, sizeof(buf), "0x%" PRIxPTR, a);
	return json_string(buf);
}

/* "SITE": where the call that returns to pc is. */
static void site_words(struct dl_proc *p, uintptr_t pc, char where[512])
{
	if (!pc)
		snprintf(where, 512, "an unknown site");
	else if (p->namer)
		stats_namer_site(p->namer, &pc, 1, where, 512);
	else
		snprintf(where, 512, "0x%" PRIxPTR, pc);
}

/* Lock obj (taken or waited for as how says, at site): "KIND LOCK" into
 * lock, "SITE" into where, and the JSON of both. */
static json_t *describe(struct dl_proc *p, uint32_t how, uintptr_t obj, uintptr_t site, char lock[320],
			char where[512])
{
	char name[256] = "";
	if (p->namer)
		stats_namer_object(p->namer, obj, name, sizeof(name));
	if (name[0])
		snprintf(lock, 320, "%s %s (0x%" PRIxPTR ")", kind_name(how), name, obj);
	else
		snprintf(lock, 320, "%s 0x%" PRIxPTR, kind_name(how), obj);
	site_words(p, site, where);
	json_t *j = json_pack("{s:s, s:o}", "kind", kind_name(how), "address", hex(obj));
	if (name[0])
		json_object_set_new(j, "name", json_string(name));
	json_object_set_new(j, "site", json_string(where));
	if (site)
		json_object_set_new(j, "site_pc", hex(site));
	return j;
}

/* A report being made: its text and its JSON object. */
struct out {
	int pid;
	FILE *f;
	char *text;
	size_t len;
	json_t *j;
};

/* Starts a report of event on s's process; false: out of memory. */
static bool out_open(struct out *o, struct dl_proc *p, struct area_slot *s, const char *event)
{
	prepare(p, s);
	*o = (struct out){ .pid = s->pid,
			   .j = json_pack("{s:i, s:s, s:s}", "pid", s->pid, "program", p->program, "event", event) };
	o->f = open_memstream(&o->text, &o->len);
	if (!o->f)
		json_decref(o->j);
	return o->f != NULL;
}

/* Ends it, and hands its text and its JSON line to emit, in one call. */
static void out_close(struct out *o)
{
	char *s = json_dumps(o->j, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6));
	size_t n = s ? strlen(s) : 0;
	char *line = s ? realloc(s, n + 2) : NULL;
	if (line)
		memcpy(line + n, "\n", 2);
	if (fclose(o->f) == 0)
		emit_fn(o->pid, o->text, o->len, line, line ? n + 1 : 0);
	free(line ? line : s);
	free(o->text);
	json_decref(o->j);
}

/* ---- the lock-order graph ---- */

static bool grow(void *pp, size_t size, uint32_t cap)
{
	void *q = realloc(*(void **)pp, size * cap);
	if (q)
		*(void **)pp = q;
	return q != NULL;
}

static uint32_t node_hash(uintptr_t addr, uint32_t gen, uint32_t cap)
{
	return (uint32_t)((((uint64_t)addr ^ (uint64_t)gen << 48) * 0x9e3779b97f4a7c15ull) >> 32) % cap;
}

/* The node of lock (addr, gen), made where new; -1: out of memory. */
static int32_t node_of(struct order *g, uintptr_t addr, uint32_t gen)
{
	for (uint32_t j = g->hcap ? node_hash(addr, gen, g->hcap) : 0; g->hcap && g->slot[j]; j = (j + 1) % g->hcap)
		if (g->addr[g->slot[j] - 1] == addr && g->gen[g->slot[j] - 1] == gen)
			return (int32_t)g->slot[j] - 1;
	uint32_t cap = g->ncap ? 2 * g->ncap : 64;
	if (g->n == g->ncap && !(grow(&g->addr, sizeof(*g->addr), cap) && grow(&g->gen, sizeof(*g->gen), cap) &&
				 grow(&g->head, sizeof(*g->head), cap) && grow(&g->path, sizeof(*g->path), cap) &&
				 grow(&g->work, 3 * sizeof(*g->work), cap) && (g->ncap = cap)))
		return -1;
	if (2 * (g->n + 1) > g->hcap) {         /* the table: twice the nodes, at least */
		uint32_t *slot = calloc(2 * g->ncap, sizeof(*slot));
		if (!slot)
			return -1;
		free(g->slot);
		g->slot = slot;
		g->hcap = 2 * g->ncap;
		for (uint32_t v = 0, j; v < g->n; slot[j] = ++v)
			for (j = node_hash(g->addr[v], g->gen[v], g->hcap); slot[j]; j = (j + 1) % g->hcap)
				;
	}
	uint32_t j = node_hash(addr, gen, g->hcap);
	while (g->slot[j])
		j = (j + 1) % g->hcap;
	g->addr[g->n] = addr;
	g->gen[g->n] = gen;
	g->head[g->n] = -1;
	g->slot[j] = ++g->n;
	return (int32_t)g->n - 1;
}

/* The site of e's second lock from the call stack that took it, where the
 * shim kept one (past a lock wrapper kept out of line, which its return
 * address names), into where and j's "site", with the stack as "stack". */
static void stack_site(struct dl_proc *p, const struct area_edge *e, json_t *j, char where[512])
{
	uint32_t n = 0;
	while (n < AREA_EDGE_FRAMES && e->to_stack[n])
		n++;
	if (!n || !p->namer)
		return;
	stats_namer_site(p->namer, e->to_stack, n, where, 512);
	json_object_set_new(j, "site", json_string(where));
	json_t *stack = json_array();
	for (uint32_t i = 0; i < n; i++)
		json_array_append_new(stack, hex(e->to_stack[i]));
	json_object_set_new(j, "stack", stack);
}

static bool edge_read_only(const struct area_edge *e)
{
	return is_read(e->from_how) && is_read(e->to_how);
}

/* The inversion that edge c closes (the path back in path[0..len)),
 * reported where new: once per set of pairs of locks, and once more
 * where a cycle of reads has become one with a write. */
static void inversion(struct dl_proc *p, struct area_slot *s, uint32_t c, uint32_t len)
{
	struct order *g = &p->g;
	uint64_t *pairs = malloc((len + 1) * sizeof(*pairs));
	bool read_only = edge_read_only(&g->e[c]);
	g->path[len] = (int32_t)c;
	for (uint32_t i = 0; pairs && i <= len; i++) {
		/* Of parallel edges (the same locks taken in other ways), one
		 * with a write: the cycle is then one that deadlocks. */
		uint32_t e = (uint32_t)g->path[i];
		for (int32_t o = g->head[g->from[e]]; o >= 0 && edge_read_only(&g->e[e]); o = g->next[o])
			e = g->to[o] == g->to[e] ? (uint32_t)o : e;
		g->path[i] = (int32_t)e;
		read_only &= edge_read_only(&g->e[e]);
		pairs[i] = (uint64_t)g->from[e] << 32 | g->to[e];
	}
	bool fresh = pairs && set_add(&p->seen, key_of(read_only ? 'r' : 'o', pairs, len + 1));
	free(pairs);
	struct out o;
	if (!fresh || !out_open(&o, p, s, "lock-order"))
		return;
	char lock1[320], lock2[320], site1[512], site2[512];
	json_t *edges = json_array();
	fprintf(o.f, "== hotlock: lock-order inversion in pid %d (%s): %u locks taken in a cycle of orders\n",
		(int)s->pid, p->program, len + 1);
	for (uint32_t i = 0; i <= len; i++) {
		const struct area_edge *e = &g->e[g->path[i]];
		json_t *first = describe(p, e->from_how, e->from, e->from_site, lock1, site1);
		json_t *second = describe(p, e->to_how, e->to, e->to_site, lock2, site2);
		stack_site(p, e, second, site2);
		fprintf(o.f, "   %s then %s: thread %u took the first at %s, then the second at %s\n", lock1,
			lock2, e->tid, site1, site2);
		json_array_append_new(edges, json_pack("{s:i, s:o, s:o}", "tid", (int)e->tid, "first", first,
						       "second", second));
	}
	if (read_only)
		fprintf(o.f, "   (every lock of it is taken for reading: it deadlocks only while writers wait)\n");
	json_object_set_new(o.j, "locks", json_integer(len + 1));
	json_object_set_new(o.j, "read_only", json_boolean(read_only));
	json_object_set_new(o.j, "edges", edges);
	out_close(&o);
}

/* The lock-order edges the process has written since the last look: each
 * joins the graph, and is checked for the cycle it closes (the process
 * writes each pair of locks once: a path back is new).  ended: the
 * process is gone, and an edge it left unready stays so. */
static void order_edges(struct dl_proc *p, struct area_slot *s, bool ended)
{
	struct order *g = &p->g;
	struct area_order *o = area_order(s);
	uint32_t used = atomic_load_explicit(&o->used, memory_order_relaxed);
	for (; g->read != used; g->read++) {
		struct area_edge *a = &o->edges[g->read % AREA_ORDER_EDGES];
		/* Acquire: the edge is written before its ready (release).  An
		 * entry the ended process left unready is passed over. */
		if (!atomic_load_explicit(&a->ready, memory_order_acquire)) {
			if (ended)
				continue;
			break;
		}
		struct area_edge copy = *a;
		/* The entry is the writers' again: cleared, then drained
		 * (release: our reads of it before a writer's next writes). */
		atomic_store_explicit(&a->ready, 0, memory_order_relaxed);
		atomic_store_explicit(&o->drained, g->read + 1, memory_order_release);
		a = &copy;
		uint32_t cap = g->ecap ? 2 * g->ecap : 64;
		if (g->m == g->ecap && !(grow(&g->e, sizeof(*g->e), cap) && grow(&g->next, sizeof(*g->next), cap) &&
					 grow(&g->from, sizeof(*g->from), cap) && grow(&g->to, sizeof(*g->to), cap) &&
					 (g->ecap = cap)))
			return;
		int32_t from = node_of(g, a->from, a->from_gen), to = node_of(g, a->to, a->to_gen);
		if (from < 0 || to < 0)
			return;
		uint32_t c = g->m++;
		memcpy(&g->e[c], a, offsetof(struct area_edge, ready));
		g->from[c] = (uint32_t)from;
		g->to[c] = (uint32_t)to;
		g->next[c] = g->head[from];
		g->head[from] = (int32_t)c;
		struct dl_graph dg = { g->n, g->head, g->next, g->to };
		uint32_t len = dl_path(&dg, (uint32_t)to, (uint32_t)from, g->path, g->work);
		if (len)
			inversion(p, s, c, len);
	}
}

/* ---- waits ---- */

struct rec {                    /* a thread's record as the sweep read it */
	uint32_t tid;           /* 0: none, or exited */
	uint32_t seq, seq2;     /* its wait's seq at pass 1, pass 2 */
	uint32_t how, timed;    /* the rest: pass 1's, where seq is odd */
	uintptr_t obj, site;
	uint64_t waited_ns;
	int32_t node;           /* its node in the wait-for graph; -1: none */
};

struct node {                   /* a thread that waits for a lock, in the graph */
	uint32_t k;             /* its record */
	uint32_t n1, n2;        /* the holders of its lock (TIDs), rounds 1 and 2 */
	uint32_t h1[MAX_HOLDERS], h2[MAX_HOLDERS];
	uintptr_t site;         /* where its mutex's owner took it, kept in the mutex
				 * (dl_opts.sites; round 2; 0: not known) */
	bool ok;                /* its edges stand: its wait is one, the rounds agree */
	bool in_cycle;
	uint32_t visit;         /* the hang search that looked at it last */
};

struct sweep {
	struct dl_proc *p;
	struct area_slot *s;
	const struct stats_thread *t;
	uint32_t n;             /* records */
	struct rec *rec;
	struct node *node;
	uint32_t n_nodes, visit;
	int pidfd;
	bool named;             /* the threads' names were read for this sweep's reports */
};

static bool lock_wait(const struct rec *r)
{
	return r->tid && (r->seq & 1) && r->how >= SL_MUTEX && r->how <= SL_GLIBC_WRITE && !r->timed;
}

static bool candidate(const struct rec *r)
{
	return lock_wait(r) && r->waited_ns >= O.after_ns;
}

static bool stable(const struct rec *r)
{
	return r->tid && r->seq == r->seq2;
}

/* The record of tid (the latest, where a TID came back), or -1.  Only
 * holders are looked up, of waits past the threshold: few. */
static int32_t find(const struct sweep *w, uint32_t tid)
{
	for (uint32_t k = w->n; k-- > 0;)
		if (w->rec[k].tid == tid)
			return (int32_t)k;
	return -1;
}

/* A holder's TID into set, once.  A set is in the order it is found in
 * (the writer, the readers by record, the waiting writer), so that two
 * rounds that find the same holders compare equal. */
static void add(uint32_t *set, uint32_t *n, uint32_t tid)
{
	for (uint32_t i = 0; i < *n; i++)
		if (set[i] == tid)
			return;
	if (tid && tid <= HL_TP_OWNER_MASK && *n < MAX_HOLDERS)
		set[(*n)++] = tid;
}

/* The threads whose hold lists have obj as how: added to set, unless the
 * word counts fewer readers than that (a share released by another
 * thread), or too many to tell apart.  Relaxed: a list is trusted only as
 * the top says (both rounds agree, its thread blocked). */
static void read_holders(const struct sweep *w, uintptr_t obj, uint32_t how, uint32_t readers,
			 uint32_t *set, uint32_t *n)
{
	uint32_t found[MAX_HOLDERS], m = 0;
	for (uint32_t k = 0; k < w->n; k++) {
		const struct stats_thread *t = &w->t[k];
		uint32_t held = atomic_load_explicit(&t->nholds, memory_order_relaxed);
		for (uint32_t i = 0; w->rec[k].tid && i < held && i < STATS_HOLDS; i++)
			if (atomic_load_explicit(&t->holds[i].obj, memory_order_relaxed) == obj &&
			    atomic_load_explicit(&t->holds[i].how, memory_order_relaxed) == how) {
				if (m == MAX_HOLDERS)
					return;
				found[m++] = w->rec[k].tid;
				break;
			}
	}
	for (uint32_t i = 0; m <= readers && i < m; i++)
		add(set, n, found[i]);
}

/* The one thread that waits to write obj (how), added to set where there
 * is exactly one. */
static void lone_writer(const struct sweep *w, uintptr_t obj, uint32_t how, uint32_t *set, uint32_t *n)
{
	uint32_t writers = 0, tid = 0;
	for (uint32_t k = 0; k < w->n; k++)
		if (w->rec[k].tid && (w->rec[k].seq & 1) && w->rec[k].how == how && w->rec[k].obj == obj) {
			writers++;
			tid = w->rec[k].tid;
		}
	if (writers == 1)
		add(set, n, tid);
}

/* The holders of the lock x waits for, as they stand now: into set; and
 * the site its owner keeps in a mutex of hotlock's, into *site.  Returns
 * 0, or the errno of the read of the process's memory that failed. */
static int holders(const struct sweep *w, const struct rec *x, uint32_t *set, uint32_t *n, uintptr_t *site)
{
	union {
		unsigned char b[56];
		struct { uint64_t state; uint32_t pad[4]; int32_t cur_writer; uint32_t pad2[5]; uint32_t kind; };
		struct { uint32_t word; uint32_t pad3; int32_t owner; uint32_t pad4[5]; uint64_t held_since; };
	} l;
	_Static_assert(offsetof(__typeof__(l), cur_writer) == 24 && offsetof(__typeof__(l), kind) == 48 &&
		       offsetof(__typeof__(l), owner) == 8 && offsetof(__typeof__(l), held_since) == 32,
		       "glibc's and hotlock's layouts");
	size_t len = x->how == SL_MUTEX ? (O.sites ? 40 : 4) : x->how == SL_GLIBC_MUTEX ? 12 : sizeof(l);
	struct iovec local = { &l, len }, remote = { (void *)x->obj, len };
	*n = 0;
	ssize_t got = process_vm_readv(w->s->pid, &local, 1, &remote, 1, 0);
	if (got != (ssize_t)len)
		return got < 0 ? errno : EFAULT;
	bool glibc = x->how >= SL_GLIBC_MUTEX, write = x->how == SL_WRITE || x->how == SL_GLIBC_WRITE;
	*site = x->how == SL_MUTEX && O.sites && (l.word & HL_TP_OWNER_MASK) ? (uintptr_t)l.held_since : 0;
	if (x->how == SL_MUTEX || x->how == SL_GLIBC_MUTEX) {
		add(set, n, glibc ? (uint32_t)l.owner : l.word & HL_TP_OWNER_MASK);   /* a dead robust owner's is above */
	} else {
		/* hotlock's: the state (writer, HANDOFF, readers); glibc's:
		 * __readers (readers from bit 3) and __cur_writer. */
		uint32_t writer = glibc ? (uint32_t)l.cur_writer : (uint32_t)l.state & HL_TP_OWNER_MASK;
		add(set, n, writer);
		uint32_t readers = glibc ? l.word >> 3 : (uint32_t)(l.state >> 32);
		if (write && readers)
			read_holders(w, x->obj, glibc ? SL_GLIBC_READ : SL_READ, readers, set, n);
		/* A reader kept out of a read-held lock by the writer due next
		 * (with a writer holding it, the reader waits for that one). */
		if (!write && !writer && readers && l.kind == KIND_NONRECURSIVE &&
		    (glibc || (l.state & HL_TP_HANDOFF)))
			lone_writer(w, x->obj, glibc ? SL_GLIBC_WRITE : SL_WRITE, set, n);
	}
	return 0;
}

/* The threads' names, from /proc, once a sweep that reports. */
static void names(struct sweep *w)
{
	if (!w->named)
		slot_read_threads(w->s);
	w->named = true;
}

static void thread_name(const struct sweep *w, uint32_t k, char out[64])
{
	char name[STATS_NAME + 1] = "";
	if (k < w->n) {
		memcpy(name, w->t[k].name, STATS_NAME);
	} else if (!slot_thread_name(w->s->pid, w->rec[k].tid, name)) {
		/* The spare record: a thread with none running, named from
		 * /proc, else one that ended (holding a lock: a hang's last
		 * holder), by the latest record of its TID. */
		for (uint32_t j = w->n; j-- > 0;)
			if (w->t[j].tid == w->rec[k].tid &&
			    atomic_load_explicit(&w->t[j].exited, memory_order_relaxed)) {
				memcpy(name, w->t[j].name, STATS_NAME);
				break;
			}
	}
	utf8_clean(out, 64, name[0] ? name : "?");
}

/* Where thread k took obj, from its hold list (0: not there). */
static uintptr_t taken_at(const struct sweep *w, uint32_t k, uintptr_t obj)
{
	if (k >= w->n)
		return 0;       /* the spare record: no list */
	const struct stats_thread *t = &w->t[k];
	uint32_t held = atomic_load_explicit(&t->nholds, memory_order_relaxed);
	for (uint32_t i = 0; i < held && i < STATS_HOLDS; i++)
		if (atomic_load_explicit(&t->holds[i].obj, memory_order_relaxed) == obj)
			return atomic_load_explicit(&t->holds[i].site, memory_order_relaxed);
	return 0;
}

static void deadlock(struct sweep *w, const uint32_t *nodes, uint32_t len)
{
	struct dl_proc *p = w->p;
	char name[64], lock[320], site[512];
	struct out o;
	names(w);
	if (!out_open(&o, p, w->s, "deadlock"))
		return;
	fprintf(o.f, "== hotlock: deadlock in pid %d (%s): %u thread%s\n", (int)w->s->pid, p->program, len,
		len == 1 ? " waits for itself" : "s wait for each other");
	json_t *threads = json_array();
	for (uint32_t i = 0; i < len; i++) {
		uint32_t k = w->node[nodes[i]].k;
		const struct rec *r = &w->rec[k];
		const struct stats_hold *hold = w->t[k].holds;
		thread_name(w, k, name);
		json_t *waits = describe(p, r->how, r->obj, r->site, lock, site), *holds = json_array();
		fprintf(o.f, "   thread %u (%s) has waited %.1f s for %s at %s\n", r->tid, name,
			(double)r->waited_ns / 1e9, lock, site);
		/* Its hold list stands: it is blocked. */
		uint32_t held = atomic_load_explicit(&w->t[k].nholds, memory_order_relaxed);
		for (uint32_t h = 0; h < held && h < STATS_HOLDS; h++) {
			json_array_append_new(holds, describe(p, atomic_load_explicit(&hold[h].how, memory_order_relaxed),
							      atomic_load_explicit(&hold[h].obj, memory_order_relaxed),
							      atomic_load_explicit(&hold[h].site, memory_order_relaxed),
							      lock, site));
			fprintf(o.f, "      it holds %s, taken at %s\n", lock, site);
		}
		/* The mutex of the cycle that it holds, where mutexes keep their
		 * holders' sites instead of lists (dl_opts.sites): the one the
		 * thread before it waits for. */
		const struct node *before = &w->node[nodes[(i + len - 1) % len]];
		const struct rec *b = &w->rec[before->k];
		if (b->how == SL_MUTEX && !taken_at(w, k, b->obj)) {
			json_array_append_new(holds, describe(p, SL_MUTEX, b->obj, before->site, lock, site));
			fprintf(o.f, "      it holds %s, taken at %s\n", lock, site);
		}
		uint32_t unlisted = held > STATS_HOLDS ? held - STATS_HOLDS : 0;
		if (unlisted)
			fprintf(o.f, "      it holds %u more locks, not listed\n", unlisted);
		json_array_append_new(threads, json_pack("{s:i, s:s, s:f, s:o, s:o, s:i}", "tid", (int)r->tid,
							 "name", name, "waited_s", (double)r->waited_ns / 1e9,
							 "waits_for", waits, "holds", holds, "holds_unlisted",
							 (int)unlisted));
	}
	json_object_set_new(o.j, "threads", threads);
	out_close(&o);
}

/* A cycle of the wait-for graph: reported once, where each of its threads
 * has waited the threshold (one that has not yet stays: it is reported
 * at a later sweep).  Its threads get no hang report. */
static void on_cycle(void *arg, const uint32_t *nodes, uint32_t len)
{
	struct sweep *w = arg;
	struct dl_proc *p = w->p;
	uint64_t *keys = malloc(len * sizeof(*keys));
	bool due = keys != NULL;
	for (uint32_t i = 0; i < len; i++) {
		const struct rec *r = &w->rec[w->node[nodes[i]].k];
		w->node[nodes[i]].in_cycle = true;
		due &= candidate(r);
		if (keys)
			keys[i] = (uint64_t)r->tid << 32 | r->seq;
	}
	if (due && set_add(&p->seen, key_of('d', keys, len))) {
		p->deadlocks++;
		if (O.report)
			deadlock(w, nodes, len);
		if (O.abort && !p->stopped && syscall(SYS_pidfd_send_signal, w->pidfd, SIGABRT, NULL, 0) != 0)
			kill(w->s->pid, SIGABRT);
		p->stopped |= O.abort;
	}
	free(keys);
}

/* A path of holders from node j to a thread that does not wait for a
 * lock: its records into path[depth ...]; returns the path's length, 0
 * where there is none (it ends in a cycle, or at a holder not known).  A
 * holder with no record has never waited for a lock of the shim's (each
 * thread that does has one) where the area had room for every thread:
 * it is the path's end, in the sweep's spare record (rec[n]). */
static uint32_t hang_path(struct sweep *w, uint32_t j, uint32_t *path, uint32_t depth)
{
	struct node *x = &w->node[j];
	x->visit = w->visit;
	path[depth] = x->k;
	for (uint32_t h = 0; h < x->n1; h++) {
		int32_t k = find(w, x->h1[h]);
		if (k < 0 && !atomic_load_explicit(&w->s->threads_omitted, memory_order_relaxed)) {
			w->rec[w->n] = (struct rec){ .tid = x->h1[h], .node = -1 };
			k = (int32_t)w->n;
		}
		if (k < 0 || !stable(&w->rec[k]))
			continue;
		if (!lock_wait(&w->rec[k])) {
			path[depth + 1] = (uint32_t)k;
			return depth + 2;
		}
		struct node *y = &w->node[w->rec[k].node];     /* round 1 made it a node */
		uint32_t len = y->ok && !y->in_cycle && y->visit != w->visit ?
				       hang_path(w, (uint32_t)w->rec[k].node, path, depth + 1) : 0;
		if (len)
			return len;
	}
	return 0;
}

/* What thread k, which does not wait for a lock, does: its condvar or
 * timed wait, else /proc's state and wchan. */
static void state(struct sweep *w, uint32_t k, char *out, size_t len, json_t **waits)
{
	const struct rec *r = &w->rec[k];
	char lock[320], site[512];
	if (r->seq & 1) {
		*waits = describe(w->p, r->how, r->obj, r->site, lock, site);
		if (r->how == SL_COND)
			snprintf(out, len, "waiting on a %s at %s%s", lock, site, r->timed ? ", with a timeout" : "");
		else
			snprintf(out, len, "in a timed wait for %s at %s", lock, site);
		return;
	}
	static const char *const words[128] = {
		['R'] = "running", ['S'] = "sleeping", ['D'] = "in an uninterruptible sleep", ['T'] = "stopped",
		['t'] = "stopped by a tracer", ['Z'] = "exited", ['X'] = "exited",
	};
	char path[96], buf[1024], wchan[128] = "";
	snprintf(path, sizeof(path), "/proc/%d/task/%u/stat", (int)w->s->pid, r->tid);
	const char *st = slot_stat_field(slot_read_stat(path, buf, sizeof(buf)), 3);
	snprintf(path, sizeof(path), "/proc/%d/task/%u/wchan", (int)w->s->pid, r->tid);
	FILE *f = fopen(path, "re");
	if (f && fgets(wchan, sizeof(wchan), f))
		wchan[strcspn(wchan, "\n")] = 0;
	if (!strcmp(wchan, "0"))
		wchan[0] = 0;
	if (f)
		fclose(f);
	bool sleeps = st && (*st == 'S' || *st == 'D') && wchan[0];
	snprintf(path, sizeof(path), "/proc/%d/task/%u", (int)w->s->pid, r->tid);
	if (!st && access(path, F_OK) != 0 && errno == ENOENT)
		snprintf(out, len, "it has ended, holding the lock");
	else if (!st)
		snprintf(out, len, "its state cannot be read");
	else if (words[*st & 127])
		snprintf(out, len, "%s%s%s", words[*st & 127], sleeps ? " in " : "", sleeps ? wchan : "");
	else
		snprintf(out, len, "in state %c", *st);
}

static void hang(struct sweep *w, const uint32_t *path, uint32_t len)
{
	struct dl_proc *p = w->p;
	char name[64], lock[320], site[512], taken[512], what[1024];
	struct out o;
	names(w);
	if (!out_open(&o, p, w->s, "hang"))
		return;
	const struct rec *x = &w->rec[path[0]];
	thread_name(w, path[0], name);
	json_object_update_new(o.j, json_pack("{s:i, s:s, s:f, s:o}", "tid", (int)x->tid, "name", name, "waited_s",
					       (double)x->waited_ns / 1e9, "waits_for",
					       describe(p, x->how, x->obj, x->site, lock, site)));
	fprintf(o.f, "== hotlock: hang in pid %d (%s): thread %u (%s) has waited %.1f s for %s at %s\n",
		(int)w->s->pid, p->program, x->tid, name, (double)x->waited_ns / 1e9, lock, site);
	json_t *chain = json_array();
	for (uint32_t i = 1; i < len; i++) {
		const struct rec *h = &w->rec[path[i]];
		/* From its list, else from the mutex (dl_opts.sites). */
		const struct rec *waiter = &w->rec[path[i - 1]];
		uintptr_t at = taken_at(w, path[i], waiter->obj);
		if (!at)
			at = w->node[waiter->node].site;
		site_words(p, at, taken);
		thread_name(w, path[i], name);
		json_t *c = json_pack("{s:i, s:s, s:s}", "tid", (int)h->tid, "name", name, "taken_site", taken);
		if (at)
			json_object_set_new(c, "taken_site_pc", hex(at));
		fprintf(o.f, "   held by thread %u (%s), taken at %s, which ", h->tid, name, taken);
		if (i + 1 < len) {
			json_object_set_new(c, "waits_for", describe(p, h->how, h->obj, h->site, lock, site));
			fprintf(o.f, "waits for %s at %s\n", lock, site);
		} else {
			json_t *waits = NULL;
			state(w, path[i], what, sizeof(what), &waits);
			json_object_set_new(c, "state", json_string(what));
			if (waits)
				json_object_set_new(c, "waits_for", waits);
			fprintf(o.f, "is not waiting for a lock (%s)\n", what);
		}
		json_array_append_new(chain, c);
	}
	json_object_set_new(o.j, "held_by", chain);
	out_close(&o);
}

/* The process's memory cannot be read: said once (--deadlocks), and its
 * waits are not looked at again. */
static void unreadable(struct sweep *w, int err)
{
	struct out o;
	w->p->stopped = true;
	if (!O.report || !out_open(&o, w->p, w->s, "unreadable"))
		return;
	fprintf(o.f, "== hotlock: pid %d (%s): its memory cannot be read (%s): its deadlocks and hangs are "
		"not looked for\n", (int)w->s->pid, w->p->program, strerror(err));
	json_object_set_new(o.j, "error", json_string(strerror(err)));
	out_close(&o);
}

static void add_node(struct sweep *w, uint32_t k)
{
	w->rec[k].node = (int32_t)w->n_nodes;
	w->node[w->n_nodes++] = (struct node){ .k = k };
}

/* Pass 1 (see the top): every record's wait; whether one is a candidate.
 * A wait's length is the collector's own measure, from the first sweep
 * that saw it (its seq, in that record) to now: the program reads no
 * clock for it, and it is never longer than the wait. */
static bool pass1(struct sweep *w)
{
	uint64_t now = slot_clock_ns(CLOCK_MONOTONIC);
	bool any = false;
	for (uint32_t k = 0; k < w->n; k++) {
		const struct stats_thread *t = &w->t[k];
		struct rec *r = &w->rec[k];
		/* Acquire, the seq: the wait's fields are written before it
		 * turns odd (release).  Acquire, the fields: no later load
		 * (pass 2's seq, which says whether they were all of this one
		 * wait) is made before them.  A record still being made has
		 * tid 0: skipped. */
		r->node = -1;
		r->seq = atomic_load_explicit(&t->wait.seq, memory_order_acquire);
		r->tid = atomic_load_explicit(&t->exited, memory_order_relaxed) ? 0 : t->tid;
		if (!(r->seq & 1))
			continue;
		r->how = atomic_load_explicit(&t->wait.how, memory_order_acquire);
		r->timed = atomic_load_explicit(&t->wait.timed, memory_order_acquire);
		r->obj = atomic_load_explicit(&t->wait.obj, memory_order_acquire);
		r->site = atomic_load_explicit(&t->wait.site, memory_order_acquire);
		struct first_seen *f = &w->p->first_seen[k];
		if (f->seq != r->seq) {
			f->seq = r->seq;
			f->ns = now;
		}
		r->waited_ns = now - f->ns;
		any |= candidate(r);
	}
	return any;
}

/* Rounds 1 and 2: 0, or the errno of a read that failed for the whole
 * process (EPERM: not allowed; ESRCH: it has ended). */
static int rounds(struct sweep *w)
{
	for (uint32_t k = 0; k < w->n; k++)
		if (candidate(&w->rec[k]))
			add_node(w, k);
	for (int round = 1; round <= 2; round++)
		for (uint32_t j = 0; j < w->n_nodes; j++) {
			struct node *x = &w->node[j];
			uint32_t *set = round == 1 ? x->h1 : x->h2, *n = round == 1 ? &x->n1 : &x->n2;
			int err = holders(w, &w->rec[x->k], set, n, &x->site);
			if (err == EPERM || err == ESRCH)
				return err;
			for (uint32_t h = 0; round == 1 && h < *n; h++) {
				int32_t k = find(w, set[h]);
				if (k >= 0 && lock_wait(&w->rec[k]) && w->rec[k].node < 0)
					add_node(w, (uint32_t)k);
			}
		}
	return 0;
}

/* The graph of the edges that stand (pass 2 done), its cycles, and the
 * hangs of the candidates on none.  work: 3 * n. */
static void analyse(struct sweep *w, int32_t *head, int32_t *next, uint32_t *to, uint32_t *work)
{
	uint32_t m = 0;
	for (uint32_t j = 0; j < w->n_nodes; j++) {
		struct node *x = &w->node[j];
		head[j] = -1;
		x->ok = stable(&w->rec[x->k]) && x->n1 == x->n2 && !memcmp(x->h1, x->h2, x->n1 * sizeof(*x->h1));
		for (uint32_t h = 0; x->ok && h < x->n1; h++) {
			int32_t k = find(w, x->h1[h]);
			if (k < 0 || !stable(&w->rec[k]) || w->rec[k].node < 0)
				continue;
			to[m] = (uint32_t)w->rec[k].node;
			next[m] = head[j];
			head[j] = (int32_t)m++;
		}
	}
	/* A graph with more cycles than the steps can list has some left
	 * for want of time: the collector must go on. */
	struct dl_graph g = { w->n_nodes, head, next, to };
	dl_cycles(&g, on_cycle, w, work, CYCLE_STEPS);
	for (uint32_t j = 0; j < w->n_nodes && !w->p->stopped; j++) {
		const struct rec *r = &w->rec[w->node[j].k];
		if (!candidate(r) || !w->node[j].ok || w->node[j].in_cycle)
			continue;
		w->visit++;
		uint32_t len = hang_path(w, j, work, 0);
		if (len && set_add(&w->p->seen, key_of('h', (uint64_t[]){ (uint64_t)r->tid << 32 | r->seq }, 1))) {
			w->p->hangs++;
			if (O.report)
				hang(w, work, len);
		}
	}
}

static void waits(struct dl_proc *p, struct area_slot *s, int pidfd)
{
	struct sweep w = { .p = p, .s = s, .t = area_threads(s), .pidfd = pidfd };
	uint32_t used = atomic_load_explicit(&s->threads_used, memory_order_relaxed);
	w.n = used < AREA_MAX_THREADS ? used : AREA_MAX_THREADS;
	w.rec = calloc(w.n + 1, sizeof(*w.rec));
	if (!w.rec || !pass1(&w)) {
		free(w.rec);
		return;
	}
	w.node = malloc(w.n * sizeof(*w.node));
	int32_t *head = malloc(w.n * sizeof(*head)), *next = malloc(w.n * MAX_HOLDERS * sizeof(*next));
	uint32_t *to = malloc(w.n * MAX_HOLDERS * sizeof(*to)), *work = malloc((3 * w.n + 1) * sizeof(*work));
	int err = w.node && head && next && to && work ? rounds(&w) : ENOMEM;
	if (err == EPERM)
		unreadable(&w, err);
	if (!err && w.n_nodes) {
		for (uint32_t k = 0; k < w.n; k++) {    /* pass 2 */
			w.rec[k].seq2 = atomic_load_explicit(&w.t[k].wait.seq, memory_order_acquire);
			if (atomic_load_explicit(&w.t[k].exited, memory_order_relaxed))
				w.rec[k].tid = 0;
		}
		analyse(&w, head, next, to, work);
	}
	void *all[] = { head, next, to, work, w.node, w.rec };
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		free(all[i]);
}

/* ---- the collector's calls ---- */

void dl_sweep(struct dl_proc *p, struct area_slot *s, int pidfd)
{
	if (O.order)
		order_edges(p, s, false);
	if (O.waits && !p->stopped)
		waits(p, s, pidfd);
}

void dl_end(struct dl_proc *p, struct area_slot *s)
{
	if (!O.order)
		return;
	order_edges(p, s, true);
	struct out o;
	if (!atomic_load_explicit(&area_order(s)->lost, memory_order_relaxed) ||
	    !out_open(&o, p, s, "lock-order-lost"))
		return;
	fprintf(o.f, "== hotlock: lock-order graph of pid %d (%s): some edges found no room (more than %u "
		"pairs of locks, or new ones faster than they were read) and were not checked\n",
		(int)s->pid, p->program, AREA_ORDER_KEYS);
	out_close(&o);
}
