#!/usr/bin/env bash
# Builds cpm's fuzz targets (clang's libFuzzer with AddressSanitizer and UndefinedBehaviorSanitizer)
# into build-fuzz/ and runs each for SECONDS (default 60), one after the other:
#   scripts/fuzz.sh [SECONDS] [TARGET...]        e.g. scripts/fuzz.sh 600 fuzz_config
# Each target starts from its seed corpus fuzz/corpus/<target>/ (read, never written); what it
# finds new is kept in build-fuzz/corpus/<target>/, and an input that crashes, hangs, leaks or
# throws anything but cpm's InputError is written to build-fuzz/findings/<target>/. Prints the
# executions per second and in total of each target; exits with 1 if any target found something.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
shift || true
build=build-fuzz
CXX=clang++ CC=clang cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" -DCPM_BUILD_TESTS=OFF -DCPM_FUZZ=ON >/dev/null
cmake --build "$build" -j "$(nproc)" --target fuzz_targets

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for source in fuzz/fuzz_*.cpp; do
    name=$(basename "$source" .cpp)
    [ "$name" = fuzz_input ] || targets+=("$name")
  done
fi

status=0
for target in "${targets[@]}"; do
  corpus="$build/corpus/$target" findings="$build/findings/$target"
  mkdir -p "$corpus" "$findings"
  log="$build/$target.log"
  # A reader may take 1 GiB for one input; more is a finding (an allocation sized by the input).
  if OMP_NUM_THREADS=1 ASAN_OPTIONS=allocator_may_return_null=0 \
     UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
     "$build/bin/$target" "$corpus" "fuzz/corpus/$target" -max_total_time="$seconds" \
       -timeout=20 -rss_limit_mb=2048 -malloc_limit_mb=1024 -print_final_stats=1 \
       -artifact_prefix="$findings/" >"$log" 2>&1; then
    result="no finding"
  else
    result="FINDING (see $log and $findings/)"
    status=1
  fi
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  printf '%-24s %6s s  %10s executions  %7s exec/s  %s\n' "$target" "$seconds" "${runs:-?}" \
    "${rate:-?}" "$result"
done
exit $status
