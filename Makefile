# The two commands of the README, and a few more. Everything else is CMake.
#   make run       installs what is missing, builds the cpm command alone, runs the default study
#   make test      the same set-up, then every test (builds the tests first)
#   make install   installs cpm into PREFIX (default /usr/local): see README, "Installing"
BUILD_DIR ?= build
JOBS ?= $(shell nproc)
PREFIX ?= /usr/local
CMAKE_FLAGS ?=
.PHONY: run test build configure deps bench install clean

run: configure
	cmake --build $(BUILD_DIR) -j $(JOBS) --target cpm_app
	$(BUILD_DIR)/bin/cpm run --overwrite

test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

configure: deps
	cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)

bench: configure
	cmake --build $(BUILD_DIR) -j $(JOBS) --target benchmarks

install: configure
	cmake --build $(BUILD_DIR) -j $(JOBS) --target cpm cpm_app
	cmake --install $(BUILD_DIR) --prefix $(PREFIX)

# The script checks each package and installs only what is missing.
deps:
	bash scripts/install-deps.sh

clean:
	rm -rf $(BUILD_DIR)
