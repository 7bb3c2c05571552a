#!/usr/bin/env bash
# Installs the Debian packages cpm needs. Idempotent: packages already present are skipped, so a
# second run does nothing and needs no network.
#   install-deps.sh        what building and running the `cpm` command needs (make run)
#   install-deps.sh python that, and what the Python package needs (make install)
#   install-deps.sh test   that, and what the tests and benchmarks need (make test)
#   install-deps.sh bench  that, and OpenBLAS for the PyTorch anchor of the benchmarks (make bench;
#                          it becomes the system's libblas.so.3, so numpy uses it too), and LAMMPS
#                          (lmp) for bench/lammps_beside_cpm.py
#   install-deps.sh fuzz   that, and clang's libFuzzer and OpenMP runtime (make fuzz)
set -euo pipefail

packages=(
  build-essential cmake pkg-config git
  libeigen3-dev libboost-dev
  libhdf5-dev
  libvtk9-dev
  libfftw3-dev libfftw3-mpi-dev libxsimd-dev
  libopenmpi-dev openmpi-bin
  libtomlplusplus-dev libcli11-dev
  zlib1g-dev
  gnuplot-nox
)
if [ "${1:-}" = "test" ] || [ "${1:-}" = "bench" ]; then
  packages+=(
    libgtest-dev libgmock-dev googletest libbenchmark-dev librandom123-dev
    python3 python3-numpy python3-h5py python3-pandas python3-mdanalysis python3-torch python3-vtk9
    python3-dev pybind11-dev python3-pytest python3-matplotlib
    dataset-fashion-mnist
  )
  if [ "${1:-}" = "bench" ]; then packages+=(libopenblas0-pthread libopenblas0-openmp lammps); fi
elif [ "${1:-}" = "python" ]; then
  packages+=(python3 python3-dev python3-numpy pybind11-dev)
elif [ "${1:-}" = "fuzz" ]; then
  packages+=(clang libclang-rt-dev libomp-dev)
elif [ -n "${1:-}" ]; then
  echo "install-deps: unknown argument '$1' (none, 'python', 'test', 'bench' or 'fuzz')" >&2
  exit 2
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# dpkg's unsafe-io skips the fsync after every unpacked file: VTK's headers alone are thousands of
# files, and a half-unpacked package after a crash is repaired by running the script again.
$SUDO apt-get install -y -qq --no-install-recommends -o Dpkg::Options::=--force-unsafe-io \
  "${missing[@]}" >/dev/null
