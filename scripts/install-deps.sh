#!/usr/bin/env bash
# Installs every Debian package cpm needs to build, test and run. Idempotent: packages
# already present are skipped, so a second run does nothing and needs no network.
set -euo pipefail

packages=(
  build-essential cmake pkg-config git
  libeigen3-dev libboost-dev
  libhdf5-dev
  libvtk9-dev python3-vtk9
  libfftw3-dev libxsimd-dev
  libopenmpi-dev openmpi-bin
  libtomlplusplus-dev libcli11-dev
  libgtest-dev libgmock-dev googletest libbenchmark-dev librandom123-dev
  gnuplot-nox
  python3 python3-numpy python3-h5py python3-pandas python3-mdanalysis python3-torch
  dataset-fashion-mnist zlib1g-dev
)

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
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
