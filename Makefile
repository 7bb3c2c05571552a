# The two commands of the README. Everything else is CMake.
BUILD_DIR ?= build
JOBS ?= $(shell nproc)
.PHONY: run test build deps bench clean

run: build
	$(BUILD_DIR)/bin/cpm run --overwrite

test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

build: deps
	cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release
	cmake --build $(BUILD_DIR) -j $(JOBS)

bench: build
	cmake --build $(BUILD_DIR) -j $(JOBS) --target benchmarks

# The script checks each package and installs only what is missing.
deps:
	bash scripts/install-deps.sh

clean:
	rm -rf $(BUILD_DIR)
