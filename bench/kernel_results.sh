#!/usr/bin/env bash
# The kernel-learning results table of bench/RESULTS.md ("Kernel learning with Coulomb
# particles"): `cpm kernel` on the three synthetic tasks (examples/kernel_{variance,radial,
# mixture}.toml: 5 seeds, label noise 0/10/20%, N = 16..512, five feature methods), each into
# OUT/<task>/, and the tables gathered into OUT/tables.md.
#
#   bash bench/kernel_results.sh [BUILD_DIR] [OUT]      (defaults: build, out/kernel_results)
set -euo pipefail
build=${1:-build}
out=${2:-out/kernel_results}
cd "$(dirname "$0")/.."
mkdir -p "$out"
: > "$out/tables.md"
start=$(date +%s)
for task in variance radial mixture; do
  "$build/bin/cpm" kernel "examples/kernel_$task.toml" --output "$out/$task" --overwrite
  { echo "### $task"; echo; cat "$out/$task/summary.md"; echo; } >> "$out/tables.md"
done
echo "kernel_results: $(( $(date +%s) - start )) s; tables in $out/tables.md, plots in $out/*/accuracy_vs_n.png"
