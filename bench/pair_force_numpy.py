#!/usr/bin/python3
"""Vectorised numpy baseline for the pair-force sums of bench/pair_force_bench.cpp.

Row k of the gradient is sum_{l != k} grad W(x_k - x_l) with grad W(z) = g(|z|^2) z, the same
sums as cpm's InteractionSum, computed in row chunks so that memory stays bounded. A pair
interaction is one ordered pair (k, l), k != l: N(N - 1) per evaluation.

With --cpp PATH (the pair_force_bench binary) the C++ blocked sum is timed on the same sizes
and the ratio printed. Both sides are timed in process CPU time: numpy on its one core, the C++
sum as N(N - 1) / (CPU seconds / 2), its rate on the machine's 2 cores. Run with Debian's numpy (/usr/bin/python3), e.g.
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE /usr/bin/python3 bench/pair_force_numpy.py \
        --cpp build/bin/pair_force_bench [--sizes "2:10000,100000"]
It prints the instruction set of both: numpy's SIMD kernels and the one cpm was compiled for.
"""
import argparse
import subprocess
import time

import numpy as np

CHUNK_ELEMENTS = 1 << 21  # rows * N per chunk: about 16 MB per temporary array


def minus_factor(kind, r2):
    """h(r^2) = -g(r^2), so grad W(z) = -h z."""
    if kind == "log":  # W = -log r
        return 1.0 / r2
    s = float(kind.split("=")[1])  # W = r^-s
    return s * r2 ** (-0.5 * s - 1.0)


def pair_gradient(x, kind):
    n, d = x.shape
    gradient = np.empty_like(x)
    rows = max(1, CHUNK_ELEMENTS // n)
    for start in range(0, n, rows):
        stop = min(n, start + rows)
        z = x[start:stop, None, :] - x[None, :, :]  # (rows, N, d)
        r2 = np.einsum("ijk,ijk->ij", z, z)
        idx = np.arange(start, stop)
        r2[idx - start, idx] = np.inf  # the self term: h(inf) = 0
        h = minus_factor(kind, r2)
        gradient[start:stop] = -np.einsum("ij,ijk->ik", h, z)
    return gradient


def best_time(fn, budget):
    """Best process CPU time of fn (numpy's element-wise kernels run on one thread, so this is
    its time on an otherwise idle core, whatever else the machine is doing)."""
    best, start = float("inf"), time.perf_counter()
    while True:
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
        if time.perf_counter() - start > budget:
            return best


def points(n, d, seed=7):
    return np.random.default_rng(seed).uniform(-1.0, 1.0, size=(n, d))


def check_against_loop(kind):
    """The chunked sum equals a plain double loop on a few points."""
    x = points(7, 2, seed=1)
    g = pair_gradient(x, kind)
    for k in range(len(x)):
        expect = sum(-minus_factor(kind, np.dot(x[k] - x[l], x[k] - x[l])) * (x[k] - x[l])
                     for l in range(len(x)) if l != k)
        assert np.allclose(g[k], expect, rtol=1e-12, atol=0), kind


def cpp_rates(binary, sizes):
    """pairs/s of the C++ blocked sum, keyed by (d, kernel, N)."""
    spec = ";".join(f"{d}:{','.join(map(str, ns))}" for d, ns in sizes.items())
    out = subprocess.run([binary, "--csv", "--sizes", spec, "--reference-max-n", "0",
                          "--plain-max-n", "0"], check=True, capture_output=True, text=True).stdout
    rates = {}
    for line in out.splitlines():
        if line.startswith("csv,"):
            _, d, kernel, n, rate = line.split(",")
            rates[(int(d), kernel, int(n))] = float(rate)
        elif line.startswith("instruction set:"):
            print(f"cpm {line}")
    return rates


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cpp", help="path of the pair_force_bench binary, for the ratio")
    parser.add_argument("--budget", type=float, default=1.0, help="seconds per measurement")
    parser.add_argument("--large", action="store_true", help="also N = 100000 (minutes each)")
    parser.add_argument("--sizes", help='dimensions and N instead of the default set, in the '
                        'form of pair_force_bench\'s option: "2:10000,100000;3:10000"')
    args = parser.parse_args()

    kinds = ["log", "riesz s=0.5", "riesz s=1.3"]
    for kind in kinds:
        check_against_loop(kind)
    sizes = {1: [10000], 2: [2000, 5000, 10000, 20000], 3: [10000]}
    if args.large:
        for d in sizes:
            sizes[d].append(100000)
    if args.sizes:
        sizes = {int(d): [int(n) for n in ns.split(",")]
                 for d, ns in (group.split(":") for group in args.sizes.split(";"))}
    rates = cpp_rates(args.cpp, sizes) if args.cpp else {}

    print(f"numpy {np.__version__}")
    try:  # numpy's own SIMD kernels: the baseline it was built for, and what it uses on this CPU
        from numpy.core._multiarray_umath import (__cpu_baseline__, __cpu_dispatch__,
                                                  __cpu_features__)
        found = [f for f in __cpu_dispatch__ if __cpu_features__.get(f)]
        print(f"  SIMD baseline {' '.join(__cpu_baseline__)}; dispatched here: {' '.join(found)}")
    except ImportError:
        pass
    try:
        from threadpoolctl import threadpool_info
        for pool in threadpool_info():
            print(f"  {pool.get('internal_api')} {pool.get('version')} "
                  f"core {pool.get('architecture')} threads {pool.get('num_threads')}")
    except ImportError:
        pass
    print(f"{'d':>2} {'kernel':<12} {'N':>7} {'numpy cpu s':>12} {'numpy pairs/s':>14} "
          f"{'cpm direct pairs/s':>19} {'ratio':>7}")
    for d, ns in sizes.items():
        for kind in kinds:
            for n in ns:
                x = points(n, d)
                t = best_time(lambda: pair_gradient(x, kind), args.budget)
                rate = n * (n - 1) / t
                line = f"{d:>2} {kind:<12} {n:>7} {t:>12.4g} {rate:>14.3e}"
                key = (d, kind, n)
                if key in rates:
                    line += f" {rates[key]:>19.3e} {rates[key] / rate:>7.0f}"
                print(line, flush=True)


if __name__ == "__main__":
    main()
