#!/usr/bin/env bash
# The kernel-learning results table of bench/results/kernel.md ("Kernel learning with Coulomb
# particles"): `cpm kernel` on the three synthetic tasks (examples/kernel_{radial,variance,
# mixture}.toml: label noise 0/10/20%, N = 16..512, seven feature methods, every choice made on a
# validation split of the training rows), each into OUT/<task>/, then the tables gathered into
# OUT/tables.md (each task's summary.md) and OUT/table.md (the combined table and the checks, by
# bench/kernel_table.py).
#
#   bash bench/kernel_results.sh [BUILD_DIR] [OUT] [SEEDS]   (defaults: build, out/kernel_results,
#                                                            the examples' seeds)
set -euo pipefail
build=${1:-build}
out=${2:-out/kernel_results}
seeds=${3:-}
cd "$(dirname "$0")/.."
mkdir -p "$out"
: > "$out/tables.md"
start=$(date +%s)
for task in radial variance mixture; do
  config="examples/kernel_$task.toml"
  if [ -n "$seeds" ]; then
    config="$out/kernel_$task.toml"
    sed "s/^seeds = .*/seeds = $seeds/" "examples/kernel_$task.toml" > "$config"
  fi
  t0=$(date +%s)
  "$build/bin/cpm" kernel "$config" --output "$out/$task" --overwrite --quiet
  echo "kernel_results: $task $(( $(date +%s) - t0 )) s"
  { echo "### $task"; echo; cat "$out/$task/summary.md"; echo; } >> "$out/tables.md"
done
python3 bench/kernel_table.py "$out" > "$out/table.md"
echo "kernel_results: $(( $(date +%s) - start )) s; tables in $out/table.md and $out/tables.md, plots in $out/*/{accuracy_vs_n,diagnostics}.png"
