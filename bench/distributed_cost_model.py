#!/usr/bin/env python3
"""Cost model of the particle-mesh sum over MPI ranks, fitted to distributed_mesh_bench lines.

    python3 bench/distributed_cost_model.py RESULTS.txt [--N 1e9] [--cells 1024] [--d 3]

RESULTS.txt holds the key=value lines printed by build/bin/distributed_mesh_bench (strong runs on
1 and 2 ranks, one thread each, in the dimension predicted). Per step of a rank (seconds):

    particles  c_p N/P              stencils, deposit, interpolation, near field (per particle)
    ffts       c_f M' log2 M' / P   plane and last-axis transforms, M' = 2^d M padded cells
    transposes 2 S (P-1)/P^2 / B + 2 (P-1) a
                                    two MPI transposes of the plane spectra, S bytes in all
    ghosts     (2 W N/n d 8 + 4 M/n 8) / B + c_m N/P
                                    ghosts of W planes and two halo planes each side (slab faces:
                                    independent of P), and the migration's pass over the particles

c_p, c_f and c_m are fitted on the one-rank run; the transposes' bandwidth measured on 2 ranks of
this machine (shared memory) is printed next to the assumed network bandwidth B per rank (a node's
injection bandwidth shared by its ranks) and latency a. Memory per rank: eight d-vectors per
particle, the sum's buffers per particle and ghost, and the mesh buffers per cell measured by the
benchmark.
"""
import argparse
import math
import sys


def read_runs(path):
    runs = []
    with open(path) as f:
        for line in f:
            if not line.startswith("mode="):
                continue
            run = {}
            for item in line.split():
                key, value = item.split("=", 1)
                try:
                    run[key] = float(value)
                except ValueError:
                    run[key] = value
            runs.append(run)
    return runs


def spectrum_bytes(cells, d):
    """Bytes of the plane spectra of all n planes: n (n+1) (2n)^(d-2) complex values."""
    planes_frequencies = (cells + 1) * (2 * cells) ** (d - 2) if d > 1 else 1
    return cells * planes_frequencies * 16.0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results")
    parser.add_argument("--d", type=int, default=3)
    parser.add_argument("--N", type=float, default=1e9)
    parser.add_argument("--cells", type=int, default=1024)
    parser.add_argument("--node-bandwidth", type=float, default=12.5e9,
                        help="bytes/s a node injects (default 100 Gb/s)")
    parser.add_argument("--ranks-per-node", type=int, default=32)
    parser.add_argument("--latency", type=float, default=2e-6)
    args = parser.parse_args()

    runs = [r for r in read_runs(args.results)
            if r["mode"] == "strong" and r["d"] == args.d and r["threads"] == 1]
    one = next((r for r in runs if r["ranks"] == 1), None)
    two = next((r for r in runs if r["ranks"] == 2), None)
    if one is None or two is None:
        sys.exit(f"{args.results}: needs strong runs on 1 and 2 ranks with one thread in d = {args.d}")
    d, n = args.d, one["cells"]
    cells_fit = n ** d
    padded_fit = (2 * n) ** d
    c_p = (one["particles"] + one["near_field"]) / one["N"]
    c_f = (one["planes"] + one["columns"]) / (padded_fit * math.log2(padded_fit))
    c_m = one["migration"] / one["N"]
    # The sum's buffers: per particle its copy, stencil, sorted copies and results; the rest per cell.
    bytes_per_particle = (4 * d + 3) * 8 + 48
    bytes_per_cell = (one["buffer_bytes"] - one["N"] * bytes_per_particle) / cells_fit
    shared_bandwidth = (spectrum_bytes(n, d) / 2 * 0.5 * 2) / max(two["transposes"], 1e-12)
    B = args.node_bandwidth / args.ranks_per_node
    W = one["near"] + 1

    print(f"fitted on {args.results} (d = {d}, N = {one['N']:.3g}, {int(n)}^{d} cells):")
    print(f"  particle work c_p = {c_p * 1e9:.0f} ns per particle; FFT c_f = {c_f * 1e12:.1f} ps per"
          f" padded cell and log2; migration pass c_m = {c_m * 1e9:.1f} ns per particle")
    print(f"  buffers: {bytes_per_particle} bytes per particle or ghost, {bytes_per_cell:.0f} per cell")
    print(f"  transposes between 2 ranks of this machine: {shared_bandwidth / 1e9:.2f} GB/s per rank;"
          f" assumed network: {args.node_bandwidth / 1e9:.1f} GB/s per node over"
          f" {args.ranks_per_node} ranks = {B / 1e9:.2f} GB/s per rank, latency"
          f" {args.latency * 1e6:.0f} us")
    N, c = args.N, args.cells
    M = float(c) ** d
    padded = (2.0 * c) ** d
    S = spectrum_bytes(c, d)
    slab_limit = int(c // max(W, 2))
    print(f"\npredicted per step, N = {N:.3g}, {c}^{d} mesh (slabs: at most {slab_limit} ranks"
          f" with {int(max(W, 2))} planes each):")
    print("| ranks | particles s | FFTs s | transposes s | ghosts, halos, migration s | total s |"
          " memory per rank GB |")
    print("|---|---|---|---|---|---|---|")
    for P in (64, 128, 256, 512, 1024):
        particles = c_p * N / P
        ffts = c_f * padded * math.log2(padded) / P
        transposes = 2 * S * (P - 1) / P**2 / B + 2 * (P - 1) * args.latency
        ghosts = (2 * W * N / c * d * 8 + 4 * M / c * 8) / B + c_m * N / P
        total = particles + ffts + transposes + ghosts
        ghosts_held = 2 * W * N / c
        memory = ((N / P + ghosts_held) * bytes_per_particle + N / P * 8 * d * 8
                  + M / P * bytes_per_cell) / 1e9
        note = "" if P <= slab_limit else " (beyond slabs: pencils)"
        print(f"| {P}{note} | {particles:.2f} | {ffts:.2f} | {transposes:.2f} | {ghosts:.2f} |"
              f" {total:.2f} | {memory:.1f} |")


if __name__ == "__main__":
    main()
