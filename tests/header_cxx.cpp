/* SPDX-License-Identifier: MIT */
// The public headers compile as C++17 and the API is callable from C++.
// Asserts (at compile time) that <hotlock/hotlock.h> is valid C++ with
// extern "C" linkage, that HL_MUTEX_INIT initialises an hl_mutex_t in C++
// (namespace scope, automatic, member initialiser), that hl_mutex_t fits in
// 16 bytes and is trivially copyable/standard layout (so it can sit in
// C++ objects and shared memory); the same for hl_rwlock_t and
// HL_RWLOCK_INIT; at run time that lock/trylock/unlock, timedlock, owner,
// describe, the futex and config calls link and behave, and that the rwlock
// calls (rdlock, trywrlock, wrlock, unlock, holders, describe, destroy) do.
#include <hotlock/hotlock.h>
#include <hotlock/config.h>   // each header alone, and twice: include guards
#include <hotlock/futex.h>
#include <hotlock/mutex.h>
#include <hotlock/rwlock.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

static_assert(sizeof(hl_mutex_t) <= 16, "hl_mutex_t must fit in 16 bytes");
static_assert(std::is_trivially_copyable<hl_mutex_t>::value, "plain C struct");
static_assert(std::is_standard_layout<hl_mutex_t>::value, "plain C struct");
static_assert(HOTLOCK_VERSION_MAJOR >= 0, "version macros");
static_assert(sizeof(hl_rwlock_t) <= 16, "hl_rwlock_t must fit in 16 bytes");
static_assert(std::is_trivially_copyable<hl_rwlock_t>::value, "plain C struct");
static_assert(std::is_standard_layout<hl_rwlock_t>::value, "plain C struct");

static hl_mutex_t g_m = HL_MUTEX_INIT;
static hl_rwlock_t g_rw = HL_RWLOCK_INIT;

struct Guarded {
	hl_rwlock_t rw = HL_RWLOCK_INIT;
	int value = 0;
};

// A BasicLockable wrapper, as a C++ user would write it.
class HotMutex {
public:
	void lock() { check(hl_mutex_lock(&m_), "lock"); }
	bool try_lock() { return hl_mutex_trylock(&m_) == 0; }
	void unlock() { check(hl_mutex_unlock(&m_), "unlock"); }
	hl_mutex_t *native() { return &m_; }
private:
	static void check(int rc, const char *what)
	{
		if (rc != 0) {
			std::fprintf(stderr, "FAIL: hl_mutex_%s returned %d\n", what, rc);
			std::exit(1);
		}
	}
	hl_mutex_t m_ = HL_MUTEX_INIT;
};

static int failures;
#define EXPECT(c)                                                              \
	do {                                                                   \
		if (!(c)) {                                                    \
			std::fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__,     \
				     __LINE__, #c);                            \
			failures++;                                            \
		}                                                              \
	} while (0)

int main()
{
	hl_mutex_t local = HL_MUTEX_INIT;
	EXPECT(hl_mutex_init(&local) == 0);
	EXPECT(hl_mutex_lock(&g_m) == 0);
	EXPECT(hl_mutex_owner(&g_m) != 0);
	EXPECT(hl_mutex_trylock(&g_m) == EBUSY);
	char buf[256];
	EXPECT(hl_mutex_describe(&g_m, buf, sizeof buf) > 0);
	EXPECT(hl_mutex_unlock(&g_m) == 0);
	EXPECT(hl_mutex_owner(&g_m) == 0);

	timespec ts{};
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += 1;
	EXPECT(hl_mutex_timedlock(&local, CLOCK_MONOTONIC, &ts) == 0);
	EXPECT(hl_mutex_unlock(&local) == 0);
	EXPECT(hl_mutex_destroy(&local) == 0);

	// std::lock_guard over the wrapper, contended by a few std::threads.
	HotMutex hm;
	long counter = 0;
	std::vector<std::thread> ts_;
	for (int t = 0; t < 4; t++)
		ts_.emplace_back([&] {
			for (int i = 0; i < 20000; i++) {
				std::lock_guard<HotMutex> g(hm);
				counter++;
			}
		});
	for (auto &t : ts_)
		t.join();
	EXPECT(counter == 4 * 20000);
	EXPECT(hl_mutex_destroy(hm.native()) == 0);

	// The rwlock: namespace scope, automatic and member initialisers.
	hl_rwlock_t lrw = HL_RWLOCK_INIT;
	Guarded gd;
	uint32_t wtid = 1, nrd = 1;
	EXPECT(hl_rwlock_rdlock(&g_rw) == 0);
	EXPECT(hl_rwlock_trywrlock(&g_rw) == EBUSY);
	hl_rwlock_holders(&g_rw, &wtid, &nrd);
	EXPECT(wtid == 0 && nrd == 1);
	EXPECT(hl_rwlock_unlock(&g_rw) == 0);
	EXPECT(hl_rwlock_wrlock(&lrw) == 0);
	EXPECT(hl_rwlock_describe(&lrw, buf, sizeof buf) > 0);
	EXPECT(hl_rwlock_unlock(&lrw) == 0);
	EXPECT(hl_rwlock_destroy(&lrw) == 0);
	EXPECT(hl_rwlock_wrlock(&gd.rw) == 0);
	gd.value = 1;
	EXPECT(hl_rwlock_downgrade(&gd.rw) == 0);
	EXPECT(hl_rwlock_unlock(&gd.rw) == 0);
	EXPECT(hl_rwlock_destroy(&gd.rw) == 0 && gd.value == 1);

	hl_futex_stats_t st;
	hl_futex_stats_thread(&st);
	hl_futex_stats_total(&st);
	EXPECT(hl_futex_stats_calls(&st) == st.wait + st.wake + st.other);
	EXPECT(std::strlen(hl_futex_interface()) > 0);
	EXPECT(hl_cpu_node() >= 0);
	EXPECT(std::strlen(hl_cpu_node_source()) > 0);
	uint32_t word = 1;
	EXPECT(hl_futex_wait(&word, 0, CLOCK_MONOTONIC, nullptr) == EAGAIN);
	EXPECT(hl_futex_wake(&word, 1) == 0);

	hl_config_t c{};
	hl_config_get(&c);
	EXPECT(hl_config_set(&c) == 0);
	c.spin_ns = HL_SPIN_NS_MAX + 1;
	EXPECT(hl_config_set(&c) == EINVAL);

	if (failures) {
		std::fprintf(stderr, "test_header_cxx: FAILED (%d)\n", failures);
		return 1;
	}
	std::printf("test_header_cxx: OK (C++17 header, RAII wrapper, %ld increments under 4 threads)\n",
		    counter);
	return 0;
}
