#!/bin/sh
# The Python package installed into a scratch prefix (`cmake --install --component python`, the
# module and its pure-Python parts), then imported from there alone, as the README says:
#     PYTHONPATH=<prefix>/<python dir> python3 -c "import cpm"
# usage: run_install_test.sh CMAKE BUILD_DIR SCRATCH PYTHON_DIR PYTHON
set -eu
cmake=$1
build=$2
scratch=$3
python_dir=$4
python=$5
rm -rf "$scratch"
mkdir -p "$scratch/elsewhere"
"$cmake" --install "$build" --prefix "$scratch/prefix" --component python > "$scratch/install.log"
package="$scratch/prefix/$python_dir"
test -f "$package/cpm/reader.py"
ls "$package"/cpm/_cpm*.so > /dev/null
cd "$scratch/elsewhere"
PYTHONPATH="$package" "$python" -B -c "
import cpm, cpm.torch
assert cpm.__file__.startswith('$package'), cpm.__file__
omega = cpm.generate_features('sobol', 8, 2, seed=1)
assert omega.shape == (8, 2)
assert cpm.reader.load_tables is not None
print('installed cpm', cpm.__version__, 'from', cpm.__file__)
"
