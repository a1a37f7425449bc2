// SPDX-License-Identifier: MIT
// objects: C++ objects that each hold a std::mutex, made, contended and
// freed one after the other (libstdc++ initialises a std::mutex statically
// and never destroys it, so the shim sees neither), for stats_faults.py: the
// report must fold them into one entry of their class, not one per object.
// Every object is contended whatever the machine's load: main holds the
// mutex until both workers sleep in the kernel waiting for it.
//   objects N
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <unistd.h>
#include <sys/syscall.h>

#include "thread_state.h"

struct Session {
	std::mutex m;
	long hits = 0;
};

static void serve(Session *s, std::atomic<long> *tid)
{
	tid->store(syscall(SYS_gettid));
	for (int i = 0; i < 50000; i++) {
		std::lock_guard<std::mutex> g(s->m);
		s->hits++;
	}
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? std::atoi(argv[1]) : 100;
	long total = 0;
	for (int i = 0; i < n; i++) {
		auto *s = new Session;
		std::atomic<long> ta{0}, tb{0};
		s->m.lock();
		std::thread a(serve, s, &ta), b(serve, s, &tb);
		// A worker that has stored its tid and sleeps is waiting for s->m:
		// it does nothing else. Give up after 10 s rather than hang.
		for (int w = 0; w < 10000; w++) {
			long x = ta.load(), y = tb.load();
			if (x && y && thread_state(x) == 'S' && thread_state(y) == 'S')
				break;
			usleep(1000);
		}
		s->m.unlock();
		a.join();
		b.join();
		total += s->hits;
		delete s;
	}
	std::printf("objects %d hits %ld\n", n, total);
	return 0;
}
