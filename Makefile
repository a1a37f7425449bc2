# SPDX-License-Identifier: MIT
# The README's two commands: `make test` and `make bench`.
# Everything is built out of tree: build/ (gcc, warnings are errors),
# build-tsan/ (clang, ThreadSanitizer), build-asan/ (clang, ASan + UBSan).
GENERATOR ?= Ninja
CMAKE_FLAGS ?=
CTEST_FLAGS ?= --output-on-failure --timeout 600

.PHONY: all deps build build-tsan build-asan test test-main test-tsan test-asan soak bench clean

all: build

deps:
	@tools/ensure-deps.sh

build: deps
	cmake -S . -B build -G $(GENERATOR) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHOTLOCK_WERROR=ON -DHOTLOCK_BUILD_TESTS=ON $(CMAKE_FLAGS)
	cmake --build build

build-tsan: deps
	cmake -S . -B build-tsan -G $(GENERATOR) -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
		-DCMAKE_BUILD_TYPE=RelWithDebInfo -DHOTLOCK_SANITIZE=thread -DHOTLOCK_BUILD_TESTS=ON $(CMAKE_FLAGS)
	cmake --build build-tsan

build-asan: deps
	cmake -S . -B build-asan -G $(GENERATOR) -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
		-DCMAKE_BUILD_TYPE=RelWithDebInfo -DHOTLOCK_SANITIZE=address -DHOTLOCK_BUILD_TESTS=ON $(CMAKE_FLAGS)
	cmake --build build-asan

# -j2: only the two spin-model tests run at once (side by side); every other
# test is RUN_SERIAL (tests/CMakeLists.txt, hotlock_add_test).
test-main: build
	cd build && ctest -j2 $(CTEST_FLAGS)

test-tsan: build-tsan
	cd build-tsan && TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" ctest $(CTEST_FLAGS)

test-asan: build-asan
	cd build-asan && ASAN_OPTIONS="detect_leaks=1:abort_on_error=1" UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" ctest $(CTEST_FLAGS)

# Every test, in the plain build and under both sanitizers.
test: test-main test-tsan test-asan

# Longer verification than `make test`: SOAK_SCHEDULES controlled schedules
# per lock from a fresh seed (printed; HOTLOCK_SEED=<it> repeats them), then
# the stress tests with SOAK_STRESS_MS per run.  About 23 minutes here: 17
# for the locks and the stress tests, 6 for the condvar's schedules (3.8 ms
# each: 20,000 in 76 s).
SOAK_SCHEDULES ?= 100000
SOAK_STRESS_MS ?= 5000
soak: build
	tools/soak.sh build $(SOAK_SCHEDULES) $(SOAK_STRESS_MS)

# The benchmark suite (tools/bench-suite.sh): hotlock against its peers in
# every scenario and the seeds' tables, JSON under results/, then
# results/report.md and its PNG plots (tools/bench-report.py, with Debian's
# python3, which has matplotlib).  About 4 minutes here (4m09s); FULL=1 runs the
# long form (1-16 threads, 5 repeats of 1 s, every seed table; about 21).
FULL ?=
REPORT_PYTHON := $(firstword $(wildcard /usr/bin/python3) python3)
bench: build
	@tools/ensure-deps.sh bench
	tools/bench-suite.sh $(if $(FULL),--full) build/bench/hotlock-bench results
	$(REPORT_PYTHON) tools/bench-report.py results

clean:
	rm -rf build build-tsan build-asan
