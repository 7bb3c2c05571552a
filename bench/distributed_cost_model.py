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

Pencils (d >= 3; not in cpm, not measured): the first two axes split over a P1 x P2 grid of ranks,
each rank a column of n/P1 x n/P2 x n^(d-2) cells, at most n/max(W, 2) ranks along either axis.
The same constants, with c_p split into the near field c_n and the rest c_s (spreading and
interpolation), and with these assumptions:

    ffts       as for slabs: the same padded transforms, c_f per padded cell and log2 whether a
               transform runs over planes or lines
    transposes 2 [S/2 (P2-1)/P2 + S (P1-1)/P1] / P / B + 2 (P1-1 + P2-1) a
               the local axes transformed first (the last one real-to-complex), then a transpose
               among the P2 ranks that share a block of axis 0 (S/2 bytes in all: the split axes
               are not padded yet), axis 1 transformed (padded), a transpose among the P1 ranks
               that share a block of frequencies (S bytes), axis 0; back the same way. Every
               transpose at the network's B per rank, as for slabs (no credit for ranks of one
               node); a 2 x P/2 grid moves the slab's S (P-1)/P bytes, any other grid more
    ghosts     as for slabs on the faces a rank has along each split axis (two, one with two ranks
               on that axis, none unsplit), plus the W x W and 2 x 2 edges where two faces meet

The grid chosen for P ranks is the factorisation with the least modelled time; the most square
one's total is printed beside it. The ghosts' own stencils and deposits are not counted (neither
for slabs): their bound c_s x ghosts is printed below the table.
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


class CostModel:
    """The fitted constants and the system predicted: seconds per step and bytes per rank."""

    def __init__(self, one, N, cells, d, B, latency):
        n = one["cells"]
        cells_fit = n ** d
        padded_fit = (2 * n) ** d
        self.c_s = one["particles"] / one["N"]
        self.c_n = one["near_field"] / one["N"]
        self.c_p = self.c_s + self.c_n
        self.c_f = (one["planes"] + one["columns"]) / (padded_fit * math.log2(padded_fit))
        self.c_m = one["migration"] / one["N"]
        # The sum's buffers: per particle its copy, stencil, sorted copies and results; the rest per
        # cell.
        self.bytes_per_particle = (4 * d + 3) * 8 + 48
        self.bytes_per_cell = (one["buffer_bytes"] - one["N"] * self.bytes_per_particle) / cells_fit
        self.W = one["near"] + 1
        self.N, self.c, self.d, self.B, self.a = N, cells, d, B, latency
        self.M = float(cells) ** d
        self.padded = (2.0 * cells) ** d
        self.S = spectrum_bytes(cells, d)
        self.axis_limit = int(cells // max(self.W, 2))  # ranks along a split axis

    def step(self, P, transposes, ghost_cells, halo_cells):
        """The parts of a step on P ranks, given the transposes' seconds and the ghost and halo
        cells of a rank (their particles and W*rho values cross the network)."""
        ghosts_held = ghost_cells * self.N / self.M
        part = {
            "near": self.c_n * self.N / P,
            "spread": self.c_s * self.N / P,
            "ffts": self.c_f * self.padded * math.log2(self.padded) / P,
            "transposes": transposes,
            "ghosts": ((ghosts_held * self.d * 8 + halo_cells * 8) / self.B
                       + self.c_m * self.N / P),
            "ghosts_held": ghosts_held,
        }
        part["total"] = sum(part[k] for k in ("near", "spread", "ffts", "transposes", "ghosts"))
        part["memory"] = ((self.N / P + ghosts_held) * self.bytes_per_particle
                          + self.N / P * 8 * self.d * 8 + self.M / P * self.bytes_per_cell)
        return part

    def slab(self, P):
        faces = min(2, P - 1)  # the first and last slab have one neighbour
        plane = self.M / self.c
        transposes = 2 * self.S * (P - 1) / P**2 / self.B + 2 * (P - 1) * self.a
        return self.step(P, transposes, faces * self.W * plane, faces * 2 * plane)

    def pencil(self, P1, P2):
        P = P1 * P2
        line = self.M / self.c**2  # cells along the unsplit axes of a column of the mesh
        f1, f2 = min(2, P1 - 1), min(2, P2 - 1)

        def layer(width):
            # The cells within `width` of a rank's faces: across axis 0 a face of n/P2 lines,
            # across axis 1 one of n/P1, and where two faces meet an edge of width^2 lines.
            return (f1 * width * self.c / P2 + f2 * width * self.c / P1 + f1 * f2 * width**2) * line

        # Of its 1/P of a transpose's data a rank keeps the 1/P2 (first transpose) or 1/P1
        # (second) that it holds again afterwards, and sends the rest.
        moved = self.S / 2 * (P2 - 1) / P2 + self.S * (P1 - 1) / P1
        transposes = 2 * moved / P / self.B + 2 * (P1 - 1 + P2 - 1) * self.a
        return self.step(P, transposes, layer(self.W), layer(2))

    def grids(self, P):
        """Every P1 x P2 = P with 2 <= P1, P2 <= the axis limit."""
        return [(P1, P // P1) for P1 in range(2, P // 2 + 1)
                if P % P1 == 0 and max(P1, P // P1) <= self.axis_limit]


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
    B = args.node_bandwidth / args.ranks_per_node
    model = CostModel(one, args.N, args.cells, d, B, args.latency)
    shared_bandwidth = (spectrum_bytes(n, d) / 2 * 0.5 * 2) / max(two["transposes"], 1e-12)
    W = model.W

    print(f"fitted on {args.results} (d = {d}, N = {one['N']:.3g}, {int(n)}^{d} cells):")
    print(f"  particle work c_p = {model.c_p * 1e9:.0f} ns per particle; FFT c_f ="
          f" {model.c_f * 1e12:.1f} ps per padded cell and log2; migration pass c_m ="
          f" {model.c_m * 1e9:.1f} ns per particle")
    print(f"  buffers: {model.bytes_per_particle} bytes per particle or ghost,"
          f" {model.bytes_per_cell:.0f} per cell")
    print(f"  transposes between 2 ranks of this machine: {shared_bandwidth / 1e9:.2f} GB/s per rank;"
          f" assumed network: {args.node_bandwidth / 1e9:.1f} GB/s per node over"
          f" {args.ranks_per_node} ranks = {B / 1e9:.2f} GB/s per rank, latency"
          f" {args.latency * 1e6:.0f} us")
    N, c = args.N, args.cells
    slab_limit = model.axis_limit
    print(f"\npredicted per step, N = {N:.3g}, {c}^{d} mesh (slabs: at most {slab_limit} ranks"
          f" with {int(max(W, 2))} planes each):")
    print("| ranks | particles s | FFTs s | transposes s | ghosts, halos, migration s | total s |"
          " memory per rank GB |")
    print("|---|---|---|---|---|---|---|")
    for P in (64, 128, 256, 512, 1024):
        if P > slab_limit:
            below = ": pencils below" if d >= 3 else ""
            print(f"| {P} | slabs impossible (more than {slab_limit} ranks){below} | | | | | |")
            continue
        s = model.slab(P)
        print(f"| {P} | {s['near'] + s['spread']:.2f} | {s['ffts']:.2f} | {s['transposes']:.2f} |"
              f" {s['ghosts']:.2f} | {s['total']:.2f} | {s['memory'] / 1e9:.1f} |")
    if d < 3:
        return

    print(f"\nslabs and pencils, 1 to 4096 ranks (pencils: P1 x P2 with at most {slab_limit} ranks"
          f" along an axis, the grid of least modelled time; not measured, cpm has slabs only):")
    print("| ranks | decomposition | near field s | spreading, interpolation s | FFTs s |"
          " transposes s | ghosts, halos, migration s | total s | memory per rank GB |"
          " most square grid: total s |")
    print("|---|---|---|---|---|---|---|---|---|---|")

    def row(P, name, s, square=""):
        print(f"| {P} | {name} | {s['near']:.3f} | {s['spread']:.3f} | {s['ffts']:.3f} |"
              f" {s['transposes']:.3f} | {s['ghosts']:.3f} | {s['total']:.3f} |"
              f" {s['memory'] / 1e9:.2f} | {square} |")

    slab_ghost_deposits, pencil_ghost_deposits = 0.0, (0, 0.0)
    ranks = sorted({2**k for k in range(13)} | {slab_limit})
    for P in ranks:
        if P <= slab_limit:
            s = model.slab(P)
            row(P, "one rank" if P == 1 else "slabs", s)
            slab_ghost_deposits = max(slab_ghost_deposits, model.c_s * s["ghosts_held"])
        else:
            print(f"| {P} | slabs impossible: {c} planes, at least {int(max(W, 2))} per rank |"
                  f" | | | | | | | |")
        grids = model.grids(P)
        if not grids:
            continue
        fastest = min(grids, key=lambda g: model.pencil(*g)["total"])
        square = min(grids, key=lambda g: (abs(g[0] - g[1]), g[0]))
        s = model.pencil(*fastest)
        row(P, f"{fastest[0]}x{fastest[1]} pencils", s,
            f"{square[0]}x{square[1]}: {model.pencil(*square)['total']:.3f}")
        pencil_ghost_deposits = (P, model.c_s * s["ghosts_held"])
    # c_s also covers the differences and the interpolation, which ghosts skip: an upper bound.
    print(f"\nnot counted, for slabs and pencils alike: the ghosts' own stencils and deposits, at"
          f" most c_s = {model.c_s * 1e9:.0f} ns per ghost: {slab_ghost_deposits:.2f} s per step on"
          f" slabs of 3 to {slab_limit} ranks, {pencil_ghost_deposits[1]:.3f} s on the"
          f" {pencil_ghost_deposits[0]} ranks' pencils")


if __name__ == "__main__":
    main()
