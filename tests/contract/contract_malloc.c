/* SPDX-License-Identifier: MIT */
/* The lock's contract, no allocation (docs/core.md): a lock call
 * allocates nothing, so an allocator may be built on pthread mutexes
 * (jemalloc's locks are, and so are many programs' own pools) and run under
 * hotlock-run.  When the policy read the cgroup quota with fopen/fgets
 * inside contended calls, a thread refilling its pool under one
 * mutex met a contended second one, whose slow path called malloc, which
 * needed the first again: a bump allocator of this shape hung in 20 of 25
 * runs.
 *
 * This program replaces malloc, free, calloc, realloc and the aligned
 * allocators for the whole process (the executable's definitions come
 * before every library's, the shim's included): a bump allocator with
 * per-thread free lists whose refills, and every 32nd call of a thread (a
 * periodic flush, as jemalloc's tcache GC), take the pool mutex A and,
 * inside it, the mutex B (its page source's lock).  Four threads allocate
 * and free for 1.5 s while two others hold B 20-50 us at a time, so that
 * A and B are both contended (their slow paths run, first contention
 * included, while A is held).
 *
 * Checked: no malloc-family call is made inside any pthread lock call (the
 * test marks its own lock calls with a TLS flag): such a call is reported
 * at once, "FAIL: pthread_mutex_lock(B) called malloc(N) while the
 * allocator held A", and the process exits 1 (an allocator whose malloc
 * needs A would deadlock there; this one would too, which the report
 * pre-empts).  A watchdog (alarm, 20 s) turns any hang into a FAIL line
 * that says which lock call each thread is in.  The pool's books are
 * checked at the end.
 *
 * Not linked with hotlock: run on glibc (the control: passes) and under
 * hotlock-run.
 *   contract_malloc [--expect hotlock|glibc] [--ms N] */
#include "contract.h"

#include <malloc.h>

/* ---- the allocator ---- */

#define ARENA_BYTES (128u << 20)
#define CHUNK (32u << 10)
#define NCLASS 257              /* 16-byte classes up to 4096 */
#define LARGE 0xffffffffu

struct hdr {
	uint32_t cls;           /* size class, or LARGE */
	uint32_t magic;
	uint64_t size;          /* what was asked */
};
#define MAGIC 0x6d616c63u

static _Alignas(64) unsigned char arena[ARENA_BYTES];
static size_t arena_used;               /* under pool_a */
static pthread_mutex_t pool_a = PTHREAD_MUTEX_INITIALIZER;  /* A: the pool */
static pthread_mutex_t pages_b = PTHREAD_MUTEX_INITIALIZER; /* B: its page source */
static long refills, flushes;           /* under pages_b */

static __thread unsigned char *bump_cur, *bump_end;
static __thread void *free_list[NCLASS];
static __thread unsigned calls;
/* Set by the test around each of its pthread lock calls: the call's name
 * and the lock's, and whether the caller holds A. */
static __thread const char *in_lock_call, *in_lock_name;
static __thread bool holds_a;

static void die(const char *msg)
{
	(void)!write(2, msg, strlen(msg));
	_exit(1);
}

static void violation(const char *fn, size_t n)
{
	char buf[320];
	snprintf(buf, sizeof(buf), "contract_malloc: FAIL: %s(%s) called %s(%zu)%s: a lock call "
		 "must allocate nothing (an allocator whose %s needs its own mutex deadlocks "
		 "here)\n", in_lock_call, in_lock_name, fn, n,
		 holds_a ? " while the allocator held its pool mutex A" : "", fn);
	die(buf);
}

/* The test's lock calls on the allocator's mutexes. */
static void lock_named(pthread_mutex_t *mx, const char *name)
{
	in_lock_call = "pthread_mutex_lock";
	in_lock_name = name;
	int rc = pthread_mutex_lock(mx);
	in_lock_call = NULL;
	if (rc)
		die("contract_malloc: FATAL: pthread_mutex_lock failed\n");
	if (mx == &pool_a)
		holds_a = true;
}

static void unlock_named(pthread_mutex_t *mx, const char *name)
{
	if (mx == &pool_a)
		holds_a = false;
	in_lock_call = "pthread_mutex_unlock";
	in_lock_name = name;
	int rc = pthread_mutex_unlock(mx);
	in_lock_call = NULL;
	if (rc)
		die("contract_malloc: FATAL: pthread_mutex_unlock failed\n");
}

/* Takes bytes from the arena: A, then B inside it (the page source). */
static unsigned char *pool_take(size_t bytes, bool flush_only)
{
	unsigned char *p = NULL;
	lock_named(&pool_a, "A");
	lock_named(&pages_b, "B");
	if (flush_only) {
		flushes++;
	} else {
		refills++;
		if (arena_used + bytes <= ARENA_BYTES) {
			p = arena + arena_used;
			arena_used += bytes;
		}
	}
	unlock_named(&pages_b, "B");
	unlock_named(&pool_a, "A");
	return p;
}

static void *alloc(size_t n, size_t align, const char *fn)
{
	if (in_lock_call)
		violation(fn, n);
	if (n > (1ull << 40))
		return NULL;
	if (++calls % 32 == 0)
		pool_take(0, true);
	if (align <= 16 && n <= 4096) {
		uint32_t cls = (uint32_t)((n + 15) / 16);
		struct hdr *h = free_list[cls];
		if (h) {
			free_list[cls] = *(void **)(h + 1);
		} else {
			size_t need = sizeof(struct hdr) + (size_t)cls * 16;
			if (bump_cur == NULL || (size_t)(bump_end - bump_cur) < need) {
				bump_cur = pool_take(CHUNK, false);
				if (!bump_cur)
					return NULL;
				bump_end = bump_cur + CHUNK;
			}
			h = (struct hdr *)bump_cur;
			bump_cur += need;
		}
		h->cls = cls;
		h->magic = MAGIC;
		h->size = n;
		return h + 1;
	}
	if (align < 16)
		align = 16;
	size_t bytes = (n + sizeof(struct hdr) + align + 63) & ~(size_t)63;
	unsigned char *p = pool_take(bytes, false);
	if (!p)
		return NULL;
	uintptr_t u = ((uintptr_t)p + sizeof(struct hdr) + align - 1) & ~(uintptr_t)(align - 1);
	struct hdr *h = (struct hdr *)u - 1;
	h->cls = LARGE;
	h->magic = MAGIC;
	h->size = n;
	return (void *)u;
}

static struct hdr *hdr_of(void *p)
{
	struct hdr *h = (struct hdr *)p - 1;
	if (h->magic != MAGIC)
		die("contract_malloc: FATAL: free() of a pointer this allocator did not make\n");
	return h;
}

void *malloc(size_t n)
{
	return alloc(n, 16, "malloc");
}

void free(void *p)
{
	if (!p)
		return;
	if (in_lock_call)
		violation("free", 0);
	struct hdr *h = hdr_of(p);
	if (h->cls == LARGE)
		return;         /* large blocks are not reused */
	*(void **)p = free_list[h->cls];
	free_list[h->cls] = h;
}

void *calloc(size_t k, size_t n)
{
	if (n && k > SIZE_MAX / n)
		return NULL;
	void *p = alloc(k * n, 16, "calloc");
	if (p)
		memset(p, 0, k * n);
	return p;
}

void *realloc(void *old, size_t n)
{
	if (!old)
		return alloc(n, 16, "realloc");
	void *p = alloc(n, 16, "realloc");
	if (!p)
		return NULL;
	size_t had = hdr_of(old)->size;
	memcpy(p, old, had < n ? had : n);
	free(old);
	return p;
}

void *memalign(size_t align, size_t n)
{
	return alloc(n, align, "memalign");
}

void *aligned_alloc(size_t align, size_t n)
{
	return alloc(n, align, "aligned_alloc");
}

int posix_memalign(void **out, size_t align, size_t n)
{
	if (align < sizeof(void *) || (align & (align - 1)))
		return EINVAL;
	void *p = alloc(n, align, "posix_memalign");
	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}

void *valloc(size_t n)
{
	return alloc(n, 4096, "valloc");
}

void *pvalloc(size_t n)
{
	return alloc((n + 4095) & ~(size_t)4095, 4096, "pvalloc");
}

size_t malloc_usable_size(void *p)
{
	return p ? hdr_of(p)->size : 0;
}

/* ---- the test ---- */

static const char *prog = "contract_malloc";
static _Atomic bool stop;
static _Atomic long allocations;
static const char *_Atomic where[8];    /* each thread's lock call, for the watchdog */

static void on_alarm(int sig)
{
	(void)sig;
	char buf[512];
	int n = snprintf(buf, sizeof(buf), "%s: FAIL: no progress for 20 s (a deadlock): "
			 "%ld allocations made; threads in:", prog, (long)allocations);
	for (int i = 0; i < 8 && n < (int)sizeof(buf) - 48; i++) {
		const char *w = where[i];
		n += snprintf(buf + n, sizeof(buf) - (size_t)n, " [%d] %s", i, w ? w : "-");
	}
	snprintf(buf + n, sizeof(buf) - (size_t)n, "\n");
	die(buf);
}

static void *allocator_thread(void *arg)
{
	int me = (int)(intptr_t)arg;
	test_rng_t r;
	rng_seed(&r, 0x3a110c, (uint64_t)me);
	void *ring[32] = { 0 };
	for (unsigned i = 0; !atomic_load_explicit(&stop, memory_order_relaxed); i++) {
		size_t n = 16 + (size_t)rng_below(&r, 2048);
		where[me] = "malloc";
		void *p = malloc(n);
		where[me] = NULL;
		if (!p)
			die("contract_malloc: FATAL: the arena is used up\n");
		memset(p, me, n < 64 ? n : 64);
		free(ring[i % 32]);
		ring[i % 32] = p;
		atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
	}
	for (int i = 0; i < 32; i++)
		free(ring[i]);
	return NULL;
}

/* Holds B 20-50 us at a time: B's waiters park, A held by some of them. */
static void *b_holder(void *arg)
{
	int me = (int)(intptr_t)arg;
	test_rng_t r;
	rng_seed(&r, 0xb0b, (uint64_t)me);
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		where[me] = "pthread_mutex_lock(B)";
		lock_named(&pages_b, "B");
		where[me] = NULL;
		contract_busy_ns(20000 + (int64_t)rng_below(&r, 30000));
		unlock_named(&pages_b, "B");
		contract_busy_ns(10000);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	const char *impl = contract_expect(&argc, argv, prog);
	int64_t run_ms = 1500;
	if (argc == 3 && !strcmp(argv[1], "--ms"))
		run_ms = atol(argv[2]);
	signal(SIGALRM, on_alarm);
	alarm(20);
	printf("%s: locks: %s, 4 allocating threads and 2 holding B for %lld ms\n", prog, impl,
	       (long long)run_ms);
	pthread_t t[6];
	for (int i = 0; i < 6; i++)
		REQUIRE(pthread_create(&t[i], NULL, i < 4 ? allocator_thread : b_holder,
				       (void *)(intptr_t)i) == 0, "pthread_create");
	sleep_ns(run_ms * NSEC_PER_MSEC);
	atomic_store(&stop, true);
	for (int i = 0; i < 6; i++)
		pthread_join(t[i], NULL);
	alarm(0);
	lock_named(&pool_a, "A");
	lock_named(&pages_b, "B");
	long rf = refills, fl = flushes;
	size_t used = arena_used;
	unlock_named(&pages_b, "B");
	unlock_named(&pool_a, "A");
	if (rf == 0 || fl == 0 || used == 0) {
		fprintf(stderr, "%s: FAIL: the pool was not used (%ld refills, %ld flushes)\n", prog,
			rf, fl);
		return 1;
	}
	printf("%s: OK: %ld allocations, %ld refills and %ld flushes under A and B, %zu KiB of "
	       "the arena used, no allocation inside a lock call\n", prog, (long)allocations, rf,
	       fl, used >> 10);
	return 0;
}
