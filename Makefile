# SPDX-License-Identifier: MIT
# The README's commands (docs/building.md says what each builds, installs
# and takes): `make` builds what this machine can, `make check` runs the
# fast tests, `make test` every test (CI's gate, .ci/run), `make bench` the
# benchmark suite, `make deps` installs what is missing.
# Everything is built out of tree: build/ (gcc, warnings are errors),
# build-tsan/ (clang, ThreadSanitizer), build-asan/ (clang, ASan + UBSan).
GENERATOR ?= $(if $(shell command -v ninja 2>/dev/null),Ninja,Unix Makefiles)
# -G for a new build directory; one already configured keeps its generator
# (ninja installed by `make deps` after a build with make).
generator = $(if $(wildcard $(1)/CMakeCache.txt),,-G "$(GENERATOR)")
CMAKE_FLAGS ?=
CTEST_FLAGS ?= --output-on-failure --timeout 600
# The fast tests of `make check`: ctest labels, and tests left out (the
# contract tests' glibc controls, which test the tests on glibc).
CHECK_LABELS ?= ^(unit|contract)$$
CHECK_EXCLUDE ?= _glibc$$

MAIN_FLAGS := -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHOTLOCK_WERROR=ON
# What is found here: each part and test group where what it needs is (one
# line from cmake for what is left out).
FOUND_FLAGS := -DHOTLOCK_BUILD_SHIM=AUTO -DHOTLOCK_BUILD_BENCH=AUTO -DHOTLOCK_BUILD_TESTS=AUTO
# Everything: configure fails, saying what is missing, if anything is.
EVERY_FLAGS := -DHOTLOCK_BUILD_SHIM=ON -DHOTLOCK_BUILD_BENCH=ON -DHOTLOCK_BUILD_TESTS=ON

.PHONY: all deps build build-full build-tsan build-asan check test test-main test-tsan test-asan soak bench clean

all: build

# Installs what the shim, the bench and the tests need (apt, as root), or
# says what to install.
deps:
	@tools/ensure-deps.sh

# What this machine can build, installing nothing.
build:
	cmake -S . -B build $(call generator,build) $(MAIN_FLAGS) $(FOUND_FLAGS) $(CMAKE_FLAGS)
	cmake --build build

# Every part and every test, after deps: what `make test` and `make bench`
# build (in build/ too, with the same flags: nothing is rebuilt between them).
build-full: deps
	cmake -S . -B build $(call generator,build) $(MAIN_FLAGS) $(EVERY_FLAGS) $(CMAKE_FLAGS)
	cmake --build build

build-tsan: deps
	cmake -S . -B build-tsan $(call generator,build-tsan) -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
		-DCMAKE_BUILD_TYPE=RelWithDebInfo -DHOTLOCK_SANITIZE=thread -DHOTLOCK_BUILD_TESTS=ON $(CMAKE_FLAGS)
	cmake --build build-tsan

build-asan: deps
	cmake -S . -B build-asan $(call generator,build-asan) -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
		-DCMAKE_BUILD_TYPE=RelWithDebInfo -DHOTLOCK_SANITIZE=address -DHOTLOCK_BUILD_TESTS=ON $(CMAKE_FLAGS)
	cmake --build build-asan

# The command to run while working: the fast tests (labels unit and
# contract) of what `make` built, installing nothing.  About 75 s here from
# a built tree (48 tests; 35 in 45 s where only a compiler is found).
check: build
	@echo "check: the fast tests only (labels unit and contract, not the glibc controls); make test runs every test, under the sanitizers too"
	cd build && ctest -L '$(CHECK_LABELS)' -E '$(CHECK_EXCLUDE)' $(CTEST_FLAGS)

# -j3: the two spin models and CPython's thread tests (which mostly wait)
# start together, then the controlled schedules run beside each other; every
# other test is RUN_SERIAL (tests/CMakeLists.txt, hotlock_add_test).
test-main: build-full
	cd build && ctest -j3 $(CTEST_FLAGS)

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
bench: build-full
	@tools/ensure-deps.sh bench
	tools/bench-suite.sh $(if $(FULL),--full) build/bench/hotlock-bench results
	$(REPORT_PYTHON) tools/bench-report.py results

clean:
	rm -rf build build-tsan build-asan
