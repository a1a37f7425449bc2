// SPDX-License-Identifier: MIT
/* cxx_inversion: two std::mutex taken in both orders through
 * std::lock_guard, by threads that never run at the same time
 * (tests/deadlocks.sh, docs/deadlocks.md).  Built at -O0, where libstdc++'s
 * std::mutex::lock and __gthread_mutex_lock are functions of their own: the
 * return address of every pthread_mutex_lock call is in
 * __gthread_mutex_lock, for every lock of the program.
 *
 * Thread cxx-ab runs cxx_ab_then_b (a, then b), then thread cxx-ba runs
 * cxx_ba_then_a (b, then a).  The run cannot deadlock and ends with
 * status 0 after "cxx_inversion: done".
 *
 * What hotlock-run --lock-order reports: an inversion of 2 locks, each
 * edge's second lock named at the function that took it (cxx_ab_then_b,
 * cxx_ba_then_a: from the call stack kept with a new edge), not at
 * __gthread_mutex_lock; the first lock of each edge is at
 * __gthread_mutex_lock (its site is one return address). */
#include <cstdio>
#include <mutex>
#include <thread>

#include <pthread.h>
#include <unistd.h>

static std::mutex a, b;

__attribute__((noinline)) static void cxx_ab_then_b()
{
	std::lock_guard<std::mutex> first(a);
	std::lock_guard<std::mutex> second(b);
}

__attribute__((noinline)) static void cxx_ba_then_a()
{
	std::lock_guard<std::mutex> first(b);
	std::lock_guard<std::mutex> second(a);
}

int main()
{
	std::printf("cxx_inversion: pid %d\n", (int)getpid());
	std::fflush(stdout);
	std::thread ab([] {
		pthread_setname_np(pthread_self(), "cxx-ab");
		cxx_ab_then_b();
	});
	ab.join();
	std::thread ba([] {
		pthread_setname_np(pthread_self(), "cxx-ba");
		cxx_ba_then_a();
	});
	ba.join();
	std::printf("cxx_inversion: done\n");
	return 0;
}
