#!/bin/sh
# The Python reader (python/cpm_reader.py) on files the binary writes: a side-by-side run and
# the tables of a convergence study, checked by tests/python/check_reader.py with Debian's
# /usr/bin/python3. Exit 77 (ctest: skipped) where that Python lacks h5py, numpy or pandas.
#
# usage: run_reader_test.sh CPM_BINARY SOURCE_DIR SCRATCH_DIR
set -eu
cpm=$1
source=$2
scratch=$3
python=/usr/bin/python3
if ! "$python" -c "import h5py, numpy, pandas" >/dev/null 2>&1; then
  echo "run_reader_test: $python cannot import h5py, numpy and pandas (python3-pandas); skipped"
  exit 77
fi
rm -rf "$scratch"
mkdir -p "$scratch"

model='[particles]
n = 200
seed = 4

[domain]
kind = "ball"
centre = [0.0]
radius = 3.0

[potential]
kind = "quadratic"
strength = 1.0

[interaction]
kernel = "log"
lambda = 1.0

[initial]
law = "gaussian"
centre = [0.0]
std = 0.5

[dynamics]
beta = 20.0
integrator = "langevin"
step = 1e-3
t_end = 0.05
outputs = 5

[grid]
cells = [120]
'
printf '%s\n[output]\ndirectory = "%s/run"\n' "$model" "$scratch" > "$scratch/run.toml"
"$cpm" run "$scratch/run.toml" > "$scratch/run.log" 2>&1

# The same model as a convergence study: particles.n moves to [convergence].
printf '%s\n[convergence]\nns = [50, 100]\nreplicas = 2\nbootstrap = 100\n\n[output]\ndirectory = "%s/converge"\n' \
  "$(printf '%s\n' "$model" | sed '/^n = 200$/d')" "$scratch" > "$scratch/converge.toml"
"$cpm" converge --quiet "$scratch/converge.toml" > "$scratch/converge.log" 2>&1

exec "$python" -B "$source/tests/python/check_reader.py" "$source/python" "$scratch"
