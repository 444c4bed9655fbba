# The project's two front doors. Both install what they need (as root, on Debian), configure,
# build and run; nothing else is needed on a fresh machine.
#
#   make test    build with -Werror, run every test; then again under ASan + UBSan; then the
#                concurrent tests under ThreadSanitizer
#   make stress-concurrent   the checked concurrent stress program for >= 10^8 lookups per shape
#   make mutation-check      the concurrent tests against deliberately broken builds (they must fail)
#   make bench   build in Release with -march=native, rerun the paper's evaluation (cuckoo-bench all,
#                BENCH_SCALE=tiny|default|paper) and write CSVs, plots and REPORT.md to BENCH_OUT
#   make bench-python   build the Python module and its C++ baseline in that Release build, then run
#                bench/python/bench_python.py (PY_BENCH_SCALE=tiny|default|full, PY_BENCH_FLAGS e.g.
#                --skip-set) and write python_bench.md and .csv to BENCH_OUT/python
#   make bench-callers   one single-key caller program built 16 ways (flags, API, one or two
#                filters), each against its floor: shows how the caller's build moves the library
#   make fuzz    build the libFuzzer targets (the loaders; operations against a model) with clang
#                and run each for FUZZ_SECONDS
#
SHELL := /bin/bash
JOBS ?= $(shell nproc)
BUILD ?= build
CMAKE_FLAGS ?=
BENCH_SCALE ?= default
BENCH_OUT ?= results
FUZZ_SECONDS ?= 60

# Debian packages the build, tests, tools and benchmarks need.
PACKAGES := cmake g++ make pkg-config libxxhash-dev libgtest-dev libgmock-dev libbenchmark-dev \
            libcli11-dev libfmt-dev gnuplot-nox clang libclang-rt-14-dev libcuckoo-dev \
            python3-dev python3-numpy python3-pybind11 pybind11-dev python3-pytest python3-hypothesis \
            redis-server redis-tools python3-redis libabsl-dev

.PHONY: all deps configure build test test-debug test-sanitize test-tsan stress-concurrent \
        mutation-check bench fuzz format format-check clean

all: build

deps:
	@missing=$$(for p in $(PACKAGES); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null \
	    | grep -q 'install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing:" $$missing; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	  else \
	    echo "missing Debian packages (run as root to install):" $$missing >&2; exit 1; \
	  fi; \
	fi

# The test builds keep line tables only (-g1): backtraces and sanitizer reports still name
# functions, files and lines, and the unit tests compile in 0.70x the time of full -g
# (README, "Tests"). Pass CMAKE_FLAGS=-DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g -DNDEBUG" to a
# fresh build directory for a debugger's view of variables.
TEST_DEBUG_INFO := -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DCMAKE_CXX_FLAGS_DEBUG="-g1"

$(BUILD)/debug/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD)/debug -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCUCKOO_WERROR=ON \
	  -DCUCKOO_REQUIRE_PYTHON=ON $(TEST_DEBUG_INFO) $(CMAKE_FLAGS)

$(BUILD)/sanitize/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD)/sanitize -DCMAKE_BUILD_TYPE=Debug -DCUCKOO_WERROR=ON \
	  -DCUCKOO_SANITIZE=ON -DCUCKOO_BUILD_BENCH=OFF $(TEST_DEBUG_INFO) $(CMAKE_FLAGS)

$(BUILD)/tsan/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD)/tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCUCKOO_WERROR=ON \
	  -DCUCKOO_SANITIZE_THREAD=ON -DCUCKOO_BUILD_BENCH=OFF -DCUCKOO_BUILD_TOOLS=OFF \
	  $(TEST_DEBUG_INFO) $(CMAKE_FLAGS)

$(BUILD)/release/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD)/release -DCMAKE_BUILD_TYPE=Release -DCUCKOO_NATIVE=ON \
	  -DCUCKOO_BUILD_TESTS=OFF $(CMAKE_FLAGS)

build: deps $(BUILD)/debug/CMakeCache.txt
	cmake --build $(BUILD)/debug -j $(JOBS)

test-debug: build
	cd $(BUILD)/debug && ctest --output-on-failure -j $(JOBS) --timeout 1200

test-sanitize: deps $(BUILD)/sanitize/CMakeCache.txt
	cmake --build $(BUILD)/sanitize -j $(JOBS)
	cd $(BUILD)/sanitize && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --output-on-failure -j $(JOBS) --timeout 1800 -LE consumer

# ThreadSanitizer checks every concurrent test (tests/concurrent): every racy access in the
# concurrent filter is an atomic, so any report is a real bug. A third of the linearizability
# histories: TSan costs 5-15x.
test-tsan: deps $(BUILD)/tsan/CMakeCache.txt
	cmake --build $(BUILD)/tsan -j $(JOBS) --target cuckoo_concurrent_suite
	cd $(BUILD)/tsan && TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
	  CUCKOO_LINEARIZABILITY_HISTORIES=1000 ctest --output-on-failure -j $(JOBS) --timeout 1800 \
	  -L concurrent

test: test-debug test-sanitize test-tsan

# The long checked stress run (issue 13): >= 10^8 lookups of owned keys on each shape, 4 threads.
STRESS_LOOKUPS ?= 100000000
stress-concurrent: build
	cmake --build $(BUILD)/debug -j $(JOBS) --target cuckoo_stress_checked
	for run in "4 12 20000" "4 12 1000" "2 8 20000" "8 16 20000" "4 27 20000"; do \
	  set -- $$run; $(BUILD)/debug/tests/cuckoo_stress_checked --threads 4 \
	    --lookups $(STRESS_LOOKUPS) --bucket-size $$1 --bits $$2 --capacity $$3 || exit 1; \
	done

# Builds the concurrent tests with race windows widened (CUCKOO_TEST_RACE_WINDOW) and the
# protocol intact (control: must pass), without version validation, with writers silent on the
# activity word, with moves that erase before they copy, with both, with inserts that write
# straddling entries unannounced, with a sole writer's writes left unmarked (kWriting), with a
# bias holder that checks the bias before it says it is inside a write, and with a revoker that
# does not wait for the holder's write to end; runs
# the stress, linearizability and sole-writer tests on each and prints what passed. See the README's "Concurrency" section for what each mutant is expected to do.
mutation-check: deps
	@for variant in "control:" "no-validation:-DCUCKOO_TEST_MUTATION_NO_VALIDATION" \
	  "silent-writers:-DCUCKOO_TEST_MUTATION_SILENT_WRITERS" \
	  "erase-before-copy:-DCUCKOO_TEST_MUTATION_ERASE_BEFORE_COPY" \
	  "unannounced-straddlers:-DCUCKOO_TEST_MUTATION_UNANNOUNCED_STRADDLERS" \
	  "erase-without-both-stripes:-DCUCKOO_TEST_MUTATION_ERASE_WITHOUT_BOTH_STRIPES" \
	  "unmarked-sole-writes:-DCUCKOO_TEST_MUTATION_UNMARKED_SOLE_WRITES" \
	  "unchecked-bias:-DCUCKOO_TEST_MUTATION_UNCHECKED_BIAS" \
	  "revoke-without-wait:-DCUCKOO_TEST_MUTATION_REVOKE_WITHOUT_WAIT" \
	  "both:-DCUCKOO_TEST_MUTATION_NO_VALIDATION -DCUCKOO_TEST_MUTATION_ERASE_BEFORE_COPY"; do \
	  name=$${variant%%:*}; flags=$${variant#*:}; dir=$(BUILD)/mutation-$$name; \
	  cmake -S . -B $$dir -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCUCKOO_BUILD_BENCH=OFF \
	    -DCUCKOO_BUILD_TOOLS=OFF -DCUCKOO_BUILD_PYTHON=OFF -DCUCKOO_BUILD_REDIS=OFF \
	    "-DCMAKE_CXX_FLAGS=-DCUCKOO_TEST_RACE_WINDOW=200 $$flags" >/dev/null \
	    && cmake --build $$dir -j $(JOBS) --target cuckoo_concurrent_tests cuckoo_stress_checked \
	    >/dev/null || exit 1; \
	  echo "== $$name ($$flags)"; \
	  timeout 300 $$dir/tests/cuckoo_concurrent_tests --gtest_filter='ConcurrentLinearizability.*:ConcurrentStraddlingEntries.*:SoleWriter.*:BiasedWriting.*' 2>&1 \
	    | grep -E '^\[ +(OK|FAILED) +\] (Conc|Sole|Biased).*ms'; \
	  for run in "4 12 20000" "2 8 20000" "4 27 20000"; do set -- $$run; \
	    timeout 120 $$dir/tests/cuckoo_stress_checked --bucket-size $$1 --bits $$2 --capacity $$3 \
	      | tr '\n' ' ' | sed -E 's/.*(b=[0-9]+ f=[0-9]+).*(lookups [0-9]+ \([^)]*\)).*erases [0-9]+ \(failed ([0-9]+)\).*size ([0-9]+), held by the threads ([0-9]+).*(PASS|FAIL).*/  stress \1: \2, erases failed \3, size \4 against \5 held \6/'; \
	    echo; \
	  done; \
	done

bench: deps $(BUILD)/release/CMakeCache.txt
	cmake --build $(BUILD)/release -j $(JOBS) --target cuckoo-bench
	$(BUILD)/release/bench/cuckoo-bench --scale $(BENCH_SCALE) --out $(BENCH_OUT) all

# The Python module against the C++ library, numpy and a Python set (issue 15), with Debian's
# python3, which the module is built for. PY_BENCH_SCALE=full is the issue's 192 MiB filter (and,
# without --skip-set, about 10 GB for the sets).
PY_BENCH_SCALE ?= default
PY_BENCH_FLAGS ?=
PY_BENCH_PYTHON ?= /usr/bin/python3
.PHONY: bench-python
bench-python: deps $(BUILD)/release/CMakeCache.txt
	cmake -S . -B $(BUILD)/release >/dev/null  # a release build from before the module gains it
	cmake --build $(BUILD)/release -j $(JOBS) --target cuckoo_python cuckoo_python_baseline
	PYTHONPATH=$(BUILD)/release/python $(PY_BENCH_PYTHON) bench/python/bench_python.py \
	  --scale $(PY_BENCH_SCALE) --baseline $(BUILD)/release/bench/cuckoo_python_baseline \
	  --out $(BENCH_OUT)/python $(PY_BENCH_FLAGS)

# Issue 17: the same single-key caller built 16 ways (-O2/-O3, native/portable, facade/BasicFilter,
# one/two filters), each timed against the unprefetched two-line floor in the same process, on a
# 192 MiB filter at 95% load; about 20 s per program. Writes BENCH_OUT/callers.txt.
.PHONY: bench-callers
bench-callers: deps $(BUILD)/release/CMakeCache.txt
	cmake -S . -B $(BUILD)/release >/dev/null
	cmake --build $(BUILD)/release -j $(JOBS) --target cuckoo_callers
	mkdir -p $(BENCH_OUT)
	set -o pipefail; { for p in $(BUILD)/release/bench/cuckoo_caller_*; do $$p || exit 1; done; \
	  for p in $(BUILD)/release/bench/cuckoo_{growable,map}_caller_*; do \
	    $$p && CUCKOO_ISA=portable $$p || exit 1; done; } | tee $(BENCH_OUT)/callers.txt

# Two fuzzers, each FUZZ_SECONDS: the loaders (cuckoo_fuzz_load, over tests/fuzz/corpus) and the
# operations against an exact model (cuckoo_fuzz_ops, over tests/fuzz/ops_corpus). Each runs over a
# copy of its committed seed corpus (new inputs it finds stay in the build dir); a failing input is
# written to $(BUILD)/fuzz/artifacts/ and the target fails. Keep such inputs in
# tests/fuzz/regressions/ or tests/fuzz/ops_regressions/, where the unit tests replay them.
# Warnings are errors here too: clang 14 built the targets with the project's warnings
# (-Wpedantic -Wshadow among them) without one on 2026-12-02.
fuzz: deps
	CXX=clang++ cmake -S . -B $(BUILD)/fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCUCKOO_WERROR=ON \
	  -DCUCKOO_BUILD_FUZZ=ON -DCUCKOO_BUILD_TESTS=OFF -DCUCKOO_BUILD_BENCH=OFF \
	  -DCUCKOO_BUILD_TOOLS=OFF $(CMAKE_FLAGS)
	cmake --build $(BUILD)/fuzz -j $(JOBS) --target cuckoo_fuzz_load cuckoo_fuzz_ops
	mkdir -p $(BUILD)/fuzz/corpus $(BUILD)/fuzz/ops_corpus $(BUILD)/fuzz/artifacts
	cp tests/fuzz/corpus/* $(BUILD)/fuzz/corpus/
	cp tests/fuzz/ops_corpus/* $(BUILD)/fuzz/ops_corpus/
	$(BUILD)/fuzz/tests/fuzz/cuckoo_fuzz_load -max_total_time=$(FUZZ_SECONDS) -max_len=8192 \
	  -rss_limit_mb=2048 -malloc_limit_mb=512 -artifact_prefix=$(BUILD)/fuzz/artifacts/ \
	  $(BUILD)/fuzz/corpus
	$(BUILD)/fuzz/tests/fuzz/cuckoo_fuzz_ops -max_total_time=$(FUZZ_SECONDS) -max_len=4096 \
	  -rss_limit_mb=2048 -malloc_limit_mb=512 -artifact_prefix=$(BUILD)/fuzz/artifacts/ops- \
	  $(BUILD)/fuzz/ops_corpus

format:
	clang-format -i $$(git ls-files '*.hpp' '*.cpp')

format-check:
	clang-format --dry-run --Werror $$(git ls-files '*.hpp' '*.cpp')

clean:
	rm -rf $(BUILD)
