/* SPDX-License-Identifier: MIT */
// C++'s locks, which call the pthread functions the shim replaces:
// std::mutex, std::recursive_mutex, std::timed_mutex, std::shared_mutex,
// std::condition_variable(_any).  Run on glibc and through the shim
// (tests/posix/CMakeLists.txt); exit 0 when every check holds.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <mutex>
#include <shared_mutex>
#include <thread>
#include <vector>

static int failures;
#define CHECK(cond, ...)                                                   \
	do {                                                               \
		if (!(cond)) {                                             \
			std::printf("FAIL line %d: ", __LINE__);          \
			std::printf(__VA_ARGS__);                          \
			std::printf("\n");                                 \
			failures++;                                        \
		}                                                          \
	} while (0)

int main()
{
	using namespace std::chrono_literals;
	// A producer/consumer queue on std::mutex + std::condition_variable,
	// with a std::shared_mutex read by the consumers and written by the
	// producers.
	std::mutex m;
	std::condition_variable cv;
	std::deque<long> q;
	bool done = false;
	long sum = 0;
	std::shared_mutex sm;
	long shared_val = 0;
	std::atomic<int> readers_in{0}, bad{0};
	std::vector<std::thread> ts;
	for (int p = 0; p < 4; p++)
		ts.emplace_back([&] {
			for (long i = 1; i <= 20000; i++) {
				{
					std::lock_guard<std::mutex> g(m);
					q.push_back(i);
				}
				cv.notify_one();
				if (i % 500 == 0) {
					std::unique_lock<std::shared_mutex> w(sm);
					if (readers_in.load())
						bad++;
					shared_val++;
				}
			}
		});
	std::vector<std::thread> cs;
	for (int c = 0; c < 4; c++)
		cs.emplace_back([&] {
			for (;;) {
				std::unique_lock<std::mutex> l(m);
				cv.wait(l, [&] { return !q.empty() || done; });
				if (q.empty())
					return;
				sum += q.front();
				q.pop_front();
				l.unlock();
				std::shared_lock<std::shared_mutex> r(sm);
				readers_in++;
				readers_in--;
			}
		});
	for (auto &t : ts)
		t.join();
	{
		std::lock_guard<std::mutex> g(m);
		done = true;
	}
	cv.notify_all();
	for (auto &t : cs)
		t.join();
	CHECK(sum == 4L * 20000 * 20001 / 2, "queue sum %ld", sum);
	CHECK(shared_val == 4 * 40 && !bad.load(), "shared_mutex: %ld writes, %d overlaps", shared_val,
	      bad.load());

	std::recursive_mutex rm;
	rm.lock();
	CHECK(rm.try_lock(), "recursive try_lock by the owner");
	rm.unlock();
	std::thread([&] { CHECK(!rm.try_lock(), "recursive_mutex: another thread got it"); }).join();
	rm.unlock();
	std::thread([&] {
		CHECK(rm.try_lock(), "recursive_mutex: not free after the last unlock");
		rm.unlock();
	}).join();

	std::timed_mutex tm;
	tm.lock();
	std::thread([&] {
		auto t0 = std::chrono::steady_clock::now();
		CHECK(!tm.try_lock_for(50ms), "timed_mutex: try_lock_for got a held mutex");
		CHECK(std::chrono::steady_clock::now() - t0 >= 49ms, "try_lock_for gave up early");
	}).join();
	tm.unlock();
	CHECK(tm.try_lock_for(10ms), "timed_mutex: try_lock_for of a free mutex");
	tm.unlock();

	// wait_for times out with the mutex held; condition_variable_any with
	// a shared_mutex's exclusive lock.
	{
		std::unique_lock<std::mutex> l(m);
		auto t0 = std::chrono::steady_clock::now();
		CHECK(!cv.wait_for(l, 30ms, [] { return false; }), "wait_for: predicate true?");
		CHECK(std::chrono::steady_clock::now() - t0 >= 29ms, "wait_for returned early");
		CHECK(l.owns_lock(), "wait_for: lock not held after");
	}
	std::condition_variable_any cva;
	bool ready = false;
	std::thread waiter([&] {
		std::unique_lock<std::shared_mutex> l(sm);
		cva.wait(l, [&] { return ready; });
	});
	std::this_thread::sleep_for(20ms);
	{
		std::unique_lock<std::shared_mutex> l(sm);
		ready = true;
	}
	cva.notify_all();
	waiter.join();

	std::printf("%s\n", failures ? "posix_cxx: FAILED" : "posix_cxx: OK");
	return failures ? 1 : 0;
}
