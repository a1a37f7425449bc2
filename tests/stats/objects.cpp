// SPDX-License-Identifier: MIT
// objects: C++ objects that each hold a std::mutex, made, contended and
// freed one after the other (libstdc++ initialises a std::mutex statically
// and never destroys it, so the shim sees neither), for faults_test.py: the
// report must fold them into one entry of their class, not one per object.
//   objects N
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

struct Session {
	std::mutex m;
	long hits = 0;
};

static void serve(Session *s)
{
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
		std::thread a(serve, s), b(serve, s);
		a.join();
		b.join();
		total += s->hits;
		delete s;
	}
	std::printf("objects %d hits %ld\n", n, total);
	return 0;
}
