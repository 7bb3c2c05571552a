# The two commands of the README, and a few more. Everything else is CMake.
#   make run       installs what is missing, builds the cpm command alone, runs the default study
#   make test      the same set-up, then every test (builds the tests first)
#   make install   installs cpm and its Python package into PREFIX (default /usr/local): see
#                  docs/guide/installing.md
#   make sanitize  every test built with AddressSanitizer and UndefinedBehaviorSanitizer
#   make fuzz      every reader fuzzed for FUZZ_SECONDS each (default 60): scripts/fuzz.sh
BUILD_DIR ?= build
JOBS ?= $(shell nproc)
PREFIX ?= /usr/local
CMAKE_FLAGS ?=
FUZZ_SECONDS ?= 60
.PHONY: run test build configure configure-run deps deps-test deps-python bench install sanitize fuzz clean

run: configure-run
	cmake --build $(BUILD_DIR) -j $(JOBS) --target cpm_app
	$(BUILD_DIR)/bin/cpm run --overwrite

test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

# clang (it compiles sanitized code several times faster than GCC), debug information, -O1,
# ASan + UBSan, assertions off as in the release build (Boost.Math's debug assertions fire on
# rounding its release code handles); OpenMP's runtime keeps thread-local blocks ASan's leak
# check cannot follow, so leaks are not reported here (the fuzz targets check them).
sanitize: deps-test
	bash scripts/install-deps.sh fuzz
	CXX=clang++ CC=clang cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g -DNDEBUG" -DCPM_BUILD_TESTS=ON \
	  -DCPM_SANITIZE=address,undefined \
	  $(CMAKE_FLAGS)
	cmake --build build-sanitize -j $(JOBS)
	cd build-sanitize && ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --output-on-failure -j $(JOBS)

fuzz:
	bash scripts/install-deps.sh fuzz
	bash scripts/fuzz.sh $(FUZZ_SECONDS)

# `make run` and `make install` configure without the tests, whose packages they do not install;
# `make install` builds what it installs: the command, the library and the Python package.
configure-run: deps
	cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release -DCPM_BUILD_TESTS=OFF $(CMAKE_FLAGS)

configure: deps-test
	cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release -DCPM_BUILD_TESTS=ON $(CMAKE_FLAGS)

bench: configure
	bash scripts/install-deps.sh bench
	cmake --build $(BUILD_DIR) -j $(JOBS) --target benchmarks

install: deps-python
	cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release -DCPM_BUILD_TESTS=OFF $(CMAKE_FLAGS)
	cmake --build $(BUILD_DIR) -j $(JOBS)
	cmake --install $(BUILD_DIR) --prefix $(PREFIX)

# The script checks each package and installs only what is missing: `make run` the packages the
# cpm command needs, everything else (tests, benchmarks, Python checks) the other targets.
deps:
	bash scripts/install-deps.sh

deps-test:
	bash scripts/install-deps.sh test

deps-python:
	bash scripts/install-deps.sh python

clean:
	rm -rf $(BUILD_DIR)
