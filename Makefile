# The project's two front doors. Both install what they need (as root, on Debian), configure,
# build and run; nothing else is needed on a fresh machine.
#
#   make test    build with -Werror, run every test; then again under ASan + UBSan
#   make bench   build in Release with -march=native, rerun the paper's evaluation (cuckoo-bench all,
#                BENCH_SCALE=tiny|default|paper) and write CSVs, plots and REPORT.md to BENCH_OUT
#   make fuzz    build the loader's libFuzzer target with clang and run it for FUZZ_SECONDS
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
            libcli11-dev libfmt-dev gnuplot-nox clang libclang-rt-14-dev

.PHONY: all deps configure build test test-debug test-sanitize bench fuzz format format-check clean

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

$(BUILD)/debug/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD)/debug -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCUCKOO_WERROR=ON $(CMAKE_FLAGS)

$(BUILD)/sanitize/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD)/sanitize -DCMAKE_BUILD_TYPE=Debug -DCUCKOO_WERROR=ON \
	  -DCUCKOO_SANITIZE=ON -DCUCKOO_BUILD_BENCH=OFF $(CMAKE_FLAGS)

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

test: test-debug test-sanitize

bench: deps $(BUILD)/release/CMakeCache.txt
	cmake --build $(BUILD)/release -j $(JOBS) --target cuckoo-bench
	$(BUILD)/release/bench/cuckoo-bench --scale $(BENCH_SCALE) --out $(BENCH_OUT) all

# The fuzzer runs over a copy of the committed seed corpus (new inputs it finds stay in the build
# dir); a failing input is written to $(BUILD)/fuzz/artifacts/ and the target fails. Keep such
# inputs in tests/fuzz/regressions/, where the unit tests replay them. No -Werror here: clang
# warns about filter.hpp's deliberate bitwise | of two lookups, which gcc builds hold to -Werror.
fuzz: deps
	CXX=clang++ cmake -S . -B $(BUILD)/fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCUCKOO_WERROR=OFF \
	  -DCUCKOO_BUILD_FUZZ=ON -DCUCKOO_BUILD_TESTS=OFF -DCUCKOO_BUILD_BENCH=OFF \
	  -DCUCKOO_BUILD_TOOLS=OFF $(CMAKE_FLAGS)
	cmake --build $(BUILD)/fuzz -j $(JOBS) --target cuckoo_fuzz_load
	mkdir -p $(BUILD)/fuzz/corpus $(BUILD)/fuzz/artifacts
	cp tests/fuzz/corpus/* $(BUILD)/fuzz/corpus/
	$(BUILD)/fuzz/tests/fuzz/cuckoo_fuzz_load -max_total_time=$(FUZZ_SECONDS) -max_len=8192 \
	  -rss_limit_mb=2048 -malloc_limit_mb=512 -artifact_prefix=$(BUILD)/fuzz/artifacts/ \
	  $(BUILD)/fuzz/corpus

format:
	clang-format -i $$(git ls-files '*.hpp' '*.cpp')

format-check:
	clang-format --dry-run --Werror $$(git ls-files '*.hpp' '*.cpp')

clean:
	rm -rf $(BUILD)
