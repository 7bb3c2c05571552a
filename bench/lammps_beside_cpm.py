#!/usr/bin/python3
"""LAMMPS beside cpm: the same 3D Coulomb system, the same force accuracy, time per step and time
to write a frame of positions.

The system: N charges of one sign in 3D, pair force (lambda/N)/r^2 (cpm: Riesz s = 1, lambda = 1;
LAMMPS: charges q = sqrt(lambda/N) in lj units), in the trap V = a|x|^2/2 (a = 1), drawn as the
uniform ball of radius R = (lambda/a)^(1/3) = 1 (the trap's equilibrium at beta = inf) and moved
by overdamped Langevin dynamics at beta = 1000 with step 1e-3 (LAMMPS: fix langevin + fix nve
with friction 1, see bench/lammps/in.dynamics.lmp). cpm sums in free space (`method = "mesh"`:
a zero-padded FFT on 32^3 or 64^3 cells plus exact near pairs); LAMMPS with PPPM in a periodic cube
of side L = box factor * R around the cloud (6 R at N = 1e5, 8 R at 1e6), the pull of the
neutralising background PPPM puts under a charged system compensated in the trap force.

0. The shared start: cpm moves the drawn ball `--relax` steps; its last frame (positions and
   forces) is the configuration both codes start from (cpm by --restart, LAMMPS by read_data).
1. Accuracy: cpm's forces and LAMMPS's (`run 0`, bench/lammps/in.forces.lmp) at that
   configuration against the direct sum in numpy (double) for the first 1,000 particles, as a
   relative RMS error. PPPM accuracies are tried loosest first and the first whose measured
   error is at or below cpm's is kept (LAMMPS's own estimate assumes charge spread over the
   whole box, and was 13-21x too optimistic for a cloud filling 1/50-1/120 of it).
2. Time per step, 1 and 2 MPI ranks with one thread each, LAMMPS then cpm at every point:
   LAMMPS's loop time of the timed run after a warm-up run; cpm's by the difference of two runs
   on from the start (warm-up, and warm-up + steps; the same start-up and frames in both).
3. One frame of positions: LAMMPS's `Output` time in runs writing every step (dump atom, the
   native format; dump custom id x y z sorted by id at 17 digits; dump h5md where the build has
   it), per frame; cpm's by the difference of two runs of the same steps with more and fewer
   output frames (each cpm frame: the energy and the forces for the frame, run.h5 and the
   ParaView .vtp).
4. The box's cost: LAMMPS at the smallest N on one rank in a box of --small-box R (4) with the
   same PPPM accuracy: its error and time per step.

    OMP_NUM_THREADS=1 /usr/bin/python3 bench/lammps_beside_cpm.py --cpm /tmp/cpm-bench/cpm
    /usr/bin/python3 bench/lammps_beside_cpm.py --quick     # N = 1e5, one rank, under 2 minutes

Needs numpy, Debian's `lammps` (lmp; scripts/install-deps.sh bench) and Open MPI's mpirun.
"""
import argparse
import math
import os
import re
import shutil
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TEMPLATES = os.path.join(ROOT, "bench", "lammps")
LAMBDA = 1.0
SUBSET = 1000


# ---------------------------------------------------------------- machine

def instruction_set():
    flags = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    flags = line
                    break
    except OSError:
        pass
    words = set(flags.split())
    if "avx512f" in words:
        return "AVX-512F"
    if "avx2" in words:
        return "AVX2"
    return "no AVX2"


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def load_average():
    return "%.2f %.2f %.2f" % os.getloadavg()


# ---------------------------------------------------------------- files

def fill(template, values):
    with open(os.path.join(TEMPLATES, template)) as f:
        text = f.read()
    for key, value in values.items():
        text = text.replace("{" + key + "}", str(value))
    return text


def read_vtp(path):
    """Points and point arrays of a .vtp in VTK's appended raw encoding (what cpm writes)."""
    with open(path, "rb") as f:
        data = f.read()
    start = data.index(b"<AppendedData")
    start = data.index(b"_", start) + 1
    header = data[:start].decode("latin-1")
    size_type = np.uint64 if 'header_type="UInt64"' in header else np.uint32
    types = {"Float64": np.float64, "Float32": np.float32, "Int64": np.int64, "Int32": np.int32}
    arrays = {}
    for m in re.finditer(r"<DataArray ([^>]*)>", header):
        attrs = dict(re.findall(r'(\w+)="([^"]*)"', m.group(1)))
        if attrs.get("format") != "appended":
            continue
        offset = start + int(attrs["offset"])
        nbytes = int(np.frombuffer(data, size_type, 1, offset)[0])
        offset += np.dtype(size_type).itemsize
        values = np.frombuffer(data, types[attrs["type"]], nbytes // np.dtype(types[attrs["type"]]).itemsize, offset)
        components = int(attrs.get("NumberOfComponents", "1"))
        arrays.setdefault(attrs["Name"], values.reshape(-1, components) if components > 1 else values)
    return arrays


def write_lammps_data(path, x, box):
    n = len(x)
    q = math.sqrt(LAMBDA / n)
    half = box / 2
    with open(path, "w") as f:
        f.write("N charges of one sign, q = sqrt(lambda/N) (bench/lammps_beside_cpm.py)\n\n")
        f.write("%d atoms\n1 atom types\n\n" % n)
        for axis in "xyz":
            f.write("%.17g %.17g %slo %shi\n" % (-half, half, axis, axis))
        f.write("\nMasses\n\n1 1.0\n\nAtoms # charge\n\n")
        table = np.empty((n, 6))
        table[:, 0] = np.arange(1, n + 1)
        table[:, 1] = 1
        table[:, 2] = q
        table[:, 3:] = x
        np.savetxt(f, table, fmt=["%d", "%d", "%.17g", "%.17g", "%.17g", "%.17g"])


def read_lammps_forces(path):
    with open(path) as f:
        lines = f.readlines()
    i = lines.index("ITEM: NUMBER OF ATOMS\n")
    n = int(lines[i + 1])
    j = next(k for k, line in enumerate(lines) if line.startswith("ITEM: ATOMS"))
    table = np.loadtxt(lines[j + 1:j + 1 + n])
    table = table[np.argsort(table[:, 0])]
    return table[:, 1:4], table[:, 4:7]


# ---------------------------------------------------------------- forces

def direct_forces(x, subset):
    """(lambda/N) sum_{l != k} (x_k - x_l)/|x_k - x_l|^3 for k in subset, in double."""
    n = len(x)
    out = np.zeros((len(subset), 3))
    block = max(1, 4_000_000 // n)
    for b in range(0, len(subset), block):
        rows = subset[b:b + block]
        diff = x[rows, None, :] - x[None, :, :]
        r2 = np.einsum("ijk,ijk->ij", diff, diff)
        r2[np.arange(len(rows)), rows] = np.inf
        out[b:b + len(rows)] = np.einsum("ij,ijk->ik", r2 ** -1.5, diff)
    return out * (LAMBDA / n)


def relative_rms(f, reference):
    return math.sqrt(np.sum((f - reference) ** 2) / np.sum(reference ** 2))


def background_pull(x_subset, x_all, box):
    """The force the neutralising background of PPPM adds: -4 pi lambda/(3 L^3) (x - x_cm)."""
    return -4 * math.pi * LAMBDA / (3 * box ** 3) * (x_subset - x_all.mean(axis=0))


# ---------------------------------------------------------------- logs

def lammps_runs(log):
    """Per `run` of a LAMMPS log: steps, loop seconds and the MPI timing breakdown."""
    runs = []
    for m in re.finditer(r"Loop time of ([0-9.eE+-]+) on (\d+) procs for (\d+) steps", log):
        tail = log[m.end():]
        breakdown = {}
        table = re.search(r"Section \|.*?\n-+\n(.*?)\n\n", tail, re.S)
        if table:
            for line in table.group(1).splitlines():
                cells = [c.strip() for c in line.split("|")]
                if len(cells) >= 3:
                    breakdown[cells[0]] = float(cells[2])  # the average over ranks
        runs.append({"loop": float(m.group(1)), "steps": int(m.group(3)), "sections": breakdown})
    return runs


def lammps_pppm(log):
    out = {}
    for key, pattern in (("g_ewald", r"G vector \(1/distance\) = ([0-9.eE+-]+)"),
                         ("grid", r"grid = (\d+ \d+ \d+)"),
                         ("order", r"stencil order = (\d+)"),
                         ("estimated_absolute", r"estimated absolute RMS force accuracy = ([0-9.eE+-]+)"),
                         ("estimated_relative", r"estimated relative force accuracy = ([0-9.eE+-]+)")):
        m = re.search(pattern, log)
        if m:
            out[key] = m.group(1)
    return out


def lammps_help(lmp):
    try:
        return subprocess.run([lmp, "-h"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None


def mesh_cells(n):
    """cpm's mesh per axis in 3D (solvers/particle_mesh_sum.cpp, default_mesh_cells)."""
    return 1 << min(6, max(5, round(math.log2(max(n ** (1 / 3) / 2, 1)))))


# ---------------------------------------------------------------- runs

class Bench:
    def __init__(self, args, cutoffs):
        self.args = args
        self.cutoffs = cutoffs
        self.env = dict(os.environ, OMP_NUM_THREADS="1")

    def mpirun(self, ranks):
        return [self.args.mpirun, "--oversubscribe", "--allow-run-as-root", "--bind-to", "none",
                "-x", "OMP_NUM_THREADS", "-np", str(ranks)]

    def run(self, command, cwd, what):
        start = time.perf_counter()
        p = subprocess.run(command, cwd=cwd, env=self.env, capture_output=True, text=True)
        seconds = time.perf_counter() - start
        if p.returncode != 0:
            sys.exit("%s failed (exit %d): %s\n%s\n%s" % (what, p.returncode, " ".join(command),
                                                         p.stdout[-3000:], p.stderr[-3000:]))
        return seconds

    # cpm ---------------------------------------------------------------

    def cpm_run(self, folder, n, ranks, steps, outputs, restart=None):
        """One `cpm run` of `steps` steps from t = 0 (or on from a checkpoint): wall seconds and
        the number of frames it wrote."""
        os.makedirs(folder, exist_ok=True)
        out = os.path.join(folder, "out")
        values = dict(n=n, seed=self.args.seed, domain_radius=self.args.domain_radius, trap=1.0,
                      near_cells=self.args.near_cells, beta=self.args.beta, step=self.args.step,
                      t_end="%.17g" % (steps * self.args.step), outputs=outputs, directory=out)
        config = os.path.join(folder, "config.toml")
        with open(config, "w") as f:
            f.write(fill("cpm_coulomb_cloud.toml", values))
        command = ([] if ranks == 1 else self.mpirun(ranks)) + [
            self.args.cpm, "run", config, "--overwrite", "--quiet"]
        if restart:
            command += ["--restart", restart]
        seconds = self.run(command, folder, "cpm run")
        frames = len([f for f in os.listdir(os.path.join(out, "run_frames")) if f.endswith(".vtp")])
        return seconds, frames

    # LAMMPS ------------------------------------------------------------

    def cutoff(self, n):
        """Real-space cutoff: cutoff_spacings mean spacings of the cloud (density n / (4 pi/3))."""
        return self.cutoffs[n] * (4 * math.pi / 3 / n) ** (1 / 3)

    def lammps(self, folder, ranks, script, variables, what):
        os.makedirs(folder, exist_ok=True)
        command = ([] if ranks == 1 else self.mpirun(ranks)) + [
            self.args.lmp, "-in", os.path.join(TEMPLATES, script), "-log", "log.lammps",
            "-screen", "none", "-nocite"]
        for key, value in variables.items():
            command += ["-var", key, str(value)]
        seconds = self.run(command, folder, what)
        with open(os.path.join(folder, "log.lammps")) as f:
            return seconds, f.read()

    def common(self, data, n, accuracy):
        rc = self.cutoff(n)
        # tabinner: below it pairs skip coul/long's table; its default (sqrt(2) in lj units) lies
        # beyond these cutoffs, and LAMMPS then evaluates every pair without the table (slower,
        # and 1e-2 off the exact real-space force in this LAMMPS).
        return dict(data=data, acc=accuracy, rc="%.6g" % rc, skin="%.6g" % (self.args.skin * rc),
                    tabinner="%.6g" % (0.1 * rc))

    def lammps_forces(self, folder, data, n, accuracy):
        _, log = self.lammps(folder, 1, "in.forces.lmp",
                             dict(self.common(data, n, accuracy), nsub=SUBSET,
                                  forces="forces.txt"), "lmp (forces)")
        x, f = read_lammps_forces(os.path.join(folder, "forces.txt"))
        return x, f, lammps_pppm(log)

    def lammps_dynamics(self, folder, data, n, box, ranks, accuracy, frames, h5md):
        comp = 4 * math.pi * LAMBDA / (3 * box ** 3)
        seconds, log = self.lammps(
            folder, ranks, "in.dynamics.lmp",
            dict(self.common(data, n, accuracy), kc="%.17g" % (1.0 - comp),
                 comp="%.17g" % comp, temp="%.17g" % (1 / self.args.beta),
                 damp="%.6g" % self.args.damp, dt="%.6g" % self.args.step,
                 seed=self.args.seed + 1, warmup=self.args.warmup, steps=self.args.steps,
                 frames=frames, h5md=int(h5md), outdir=folder), "lmp (dynamics)")
        runs = lammps_runs(log)
        out = {"per_step": runs[1]["loop"] / runs[1]["steps"], "pppm": lammps_pppm(log),
               "sections": runs[1]["sections"], "wall": seconds}
        for name, k in (("atom", 2), ("custom", 3), ("h5md", 4)):
            out[name] = (runs[k]["sections"].get("Output", float("nan")) / frames
                         if frames and len(runs) > k else float("nan"))
        return out


# ---------------------------------------------------------------- main

def frame_outputs(start, end, frames):
    """cpm's `outputs` for a run from step `start` to `end` whose output times (multiples of
    end/outputs steps) put about frames + 1 frames in (start, end]."""
    spacings = [g for g in range(1, end + 1) if end % g == 0 and end // g - start // g >= 2]
    best = min(spacings, key=lambda g: abs(end // g - start // g - (frames + 1)))
    return end // best


def per_size(text, sizes, kind):
    values = [kind(v) for v in text.split(",")]
    if len(values) == 1:
        values *= len(sizes)
    if len(values) != len(sizes):
        sys.exit("lammps_beside_cpm: give one value, or one per size: %s" % text)
    return dict(zip(sizes, values))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0].replace("\n", " "))
    parser.add_argument("--quick", action="store_true",
                        help="N = 1e5 on one rank, fewer steps (under 2 minutes)")
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--ranks", default="1,2")
    parser.add_argument("--relax", type=int, default=20,
                        help="cpm steps from the uniform draw to the configuration both start from")
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--steps", default="20,10", help="timed steps (one, or one per size)")
    parser.add_argument("--frames", type=int, default=3, help="frames timed per format")
    parser.add_argument("--repeats", type=int, default=1,
                        help="rounds of (LAMMPS, cpm) per point; the figures are the medians")
    parser.add_argument("--accuracies", default="1e-4,5e-5,4e-5,3e-5,2e-5,1e-5",
                        help="PPPM accuracies tried, loosest first, against cpm's force error")
    parser.add_argument("--near-cells", type=int, default=2, help="cpm's mesh_near_cells")
    parser.add_argument("--box-factors", default="6,8",
                        help="LAMMPS's box side / R (one, or one per size)")
    parser.add_argument("--small-box", type=float, default=4.0,
                        help="also time LAMMPS at the smallest N on one rank in this box, with "
                             "the accuracy chosen for the large one (0: not)")
    parser.add_argument("--cutoff-spacings", default="3,4",
                        help="LAMMPS's real-space cutoff in mean particle spacings of the cloud "
                             "(one, or one per size)")
    parser.add_argument("--skin", type=float, default=0.2,
                        help="LAMMPS's neighbour skin as a fraction of the cutoff")
    parser.add_argument("--domain-radius", type=float, default=1.05,
                        help="cpm's ball domain (its mesh box), R = 1")
    parser.add_argument("--beta", type=float, default=1000.0)
    parser.add_argument("--step", type=float, default=1e-3)
    parser.add_argument("--damp", type=float, default=0.01,
                        help="LAMMPS's Langevin damping time (= mass, friction 1)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--cpm", default=os.path.join(ROOT, "build", "bin", "cpm"))
    parser.add_argument("--lmp", default="lmp")
    parser.add_argument("--mpirun", default="mpirun")
    parser.add_argument("--work", default="/tmp/lammps_beside_cpm")
    args = parser.parse_args()
    if args.quick:
        args.sizes, args.ranks, args.relax, args.warmup, args.steps = "100000", "1", 10, 2, "10"
        args.box_factors = args.box_factors.split(",")[0]
        args.cutoff_spacings = args.cutoff_spacings.split(",")[0]
    sizes = [int(float(s)) for s in args.sizes.split(",")]
    ranks_list = [int(r) for r in args.ranks.split(",")]
    accuracies = sorted((float(a) for a in args.accuracies.split(",")), reverse=True)
    boxes = per_size(args.box_factors, sizes, float)
    timed_steps = per_size(args.steps, sizes, int)
    cutoffs = per_size(args.cutoff_spacings, sizes, float)
    help_text = lammps_help(args.lmp)
    if help_text is None:
        sys.exit("lammps_beside_cpm: no LAMMPS (%s); `apt-get install lammps` "
                 "(scripts/install-deps.sh bench)" % args.lmp)
    if not os.access(args.cpm, os.X_OK):
        sys.exit("lammps_beside_cpm: no cpm binary at %s (--cpm)" % args.cpm)
    h5md = bool(re.search(r"\bh5md\b", help_text.split("Dump styles", 1)[-1].split("Command styles")[0]))
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    bench = Bench(args, cutoffs)

    print("instruction set: %s (%s, %d cores)" % (instruction_set(), cpu_model(), os.cpu_count()))
    print("cpm:", subprocess.run([args.cpm, "--version"], capture_output=True,
                                 text=True).stdout.splitlines()[0])
    m = re.search(r"Large-scale Atomic/Molecular Massively Parallel Simulator - ([^\n]+)", help_text)
    print("LAMMPS:", m.group(1).strip() if m else "unknown version",
          "" if h5md else "(no dump h5md: this build lacks the H5MD package)")
    print("load average at start:", load_average())
    print("system: lambda = 1, trap a = 1, R = 1, beta = %g, step %g; %d cpm steps from the "
          "uniform ball to the shared start; LAMMPS: box L = %s R, real-space cutoff %s mean "
          "spacings, damp %g; cpm: ball domain radius %g, mesh_near_cells %d"
          % (args.beta, args.step, args.relax, args.box_factors, args.cutoff_spacings, args.damp,
             args.domain_radius, args.near_cells))
    sys.stdout.flush()

    chosen = {}
    for n in sizes:
        folder = os.path.join(args.work, "n%d" % n)
        box = boxes[n]
        # The shared start: cpm's configuration after `relax` steps, and cpm's forces there.
        relaxed = os.path.join(folder, "relax")
        bench.cpm_run(relaxed, n, 1, args.relax, 1)
        frame = read_vtp(os.path.join(relaxed, "out", "run_frames", "run_particles_0001.vtp"))
        x = np.array(frame["Points"])
        f_cpm = np.array(frame["force"]) + 1.0 * x  # the frame holds -(a x + interaction drift)
        subset = np.arange(min(SUBSET, n))
        reference = direct_forces(x, subset)
        e_cpm = relative_rms(f_cpm[subset], reference)
        print("\nN = %d: cpm's relative RMS force error %.2e (mesh %s, mesh_near_cells %d), "
              "first %d particles against the direct sum"
              % (n, e_cpm, "x".join([str(mesh_cells(n))] * 3), args.near_cells, len(subset)))
        c = dict(cpm_error=e_cpm, restart=os.path.join(relaxed, "out", "run.h5"), box=box)
        boxes_tried = [("large", box)] + ([("small", args.small_box)]
                                          if args.small_box and n == sizes[0] else [])
        for label, side in boxes_tried:
            data = os.path.join(folder, "cloud_L%g.data" % side)
            write_lammps_data(data, x, side)
            pull = background_pull(x[subset], x, side)
            tried = accuracies if label == "large" else [c["accuracy"]]
            for accuracy in tried:
                xl, fl, pppm = bench.lammps_forces(
                    os.path.join(folder, "forces_L%g_%g" % (side, accuracy)), data, n, accuracy)
                assert np.allclose(xl, x[subset], atol=1e-12), "LAMMPS moved the atoms"
                raw = relative_rms(fl, reference)
                compensated = relative_rms(fl - pull, reference)
                print("  L = %g R, PPPM %-6g: grid %-11s g_ewald %-9s LAMMPS's estimate %-9.3g "
                      "measured %.2e (%.2e without compensating the background)"
                      % (side, accuracy, pppm.get("grid", "?"), pppm.get("g_ewald", "?"),
                         float(pppm.get("estimated_relative", "nan")), compensated, raw))
                sys.stdout.flush()
                if label == "small":
                    c.update(small_data=data, small_error=compensated,
                             small_grid=pppm.get("grid"))
                elif compensated <= e_cpm or accuracy == accuracies[-1]:
                    c.update(data=data, accuracy=accuracy, error=compensated,
                             grid=pppm.get("grid"), raw=raw, g_ewald=pppm.get("g_ewald"))
                    break
        if c["error"] > e_cpm:
            print("  no PPPM accuracy tried reaches cpm's error; kept the tightest")
        print("  kept: PPPM %g, grid %s, error %.2e beside cpm's %.2e"
              % (c["accuracy"], c["grid"], c["error"], e_cpm))
        chosen[n] = c
        sys.stdout.flush()

    rows = []
    points = [(n, ranks, "large") for n in sizes for ranks in ranks_list]
    if args.small_box:
        points.insert(1, (sizes[0], 1, "small"))
    for n, ranks, label in points:
        c = chosen[n]
        folder = os.path.join(args.work, "n%d" % n, "p%d%s" % (ranks, label))
        steps = timed_steps[n]
        saved = args.steps
        args.steps = steps
        got = {k: [] for k in ("lmp", "cpm", "atom", "custom", "h5md", "cpm_frame", "load")}
        for repeat in range(args.repeats):
            got["load"].append(os.getloadavg()[0])
            small = label == "small"
            lmp = bench.lammps_dynamics(os.path.join(folder, "lammps_%d" % repeat),
                                        c["small_data"] if small else c["data"], n,
                                        args.small_box if small else c["box"], ranks,
                                        c["accuracy"], 0 if small else args.frames, h5md)
            got["lmp"].append(lmp["per_step"])
            for name in ("atom", "custom", "h5md"):
                got[name].append(lmp[name])
            if not small:
                # cpm on from the shared start: relax + warmup and relax + warmup + steps
                # steps, then the longer run writing a frame every few steps.
                cf = os.path.join(folder, "cpm_%d_" % repeat)
                end = args.relax + args.warmup + steps
                t_a, f_a = bench.cpm_run(cf + "a", n, ranks, args.relax + args.warmup, 1,
                                         c["restart"])
                t_b, f_b = bench.cpm_run(cf + "b", n, ranks, end, 1, c["restart"])
                t_c, f_c = bench.cpm_run(cf + "c", n, ranks, end,
                                         frame_outputs(args.relax, end, args.frames), c["restart"])
                got["cpm"].append((t_b - t_a) / steps)
                got["cpm_frame"].append((t_c - t_b) / (f_c - f_b))
            got["load"].append(os.getloadavg()[0])
        args.steps = saved
        med = {k: float(np.median(v)) if v else float("nan") for k, v in got.items()}
        med["load"] = max(got["load"])
        row = dict(med, n=n, ranks=ranks, label=label, sections=lmp["sections"],
                   box=args.small_box if label == "small" else c["box"])
        rows.append(row)
        if label == "small":
            print("N = %d, %d rank, L = %g R: LAMMPS %.4f s/step (error %.2e, grid %s); load %.1f"
                  % (n, ranks, row["box"], row["lmp"], c["small_error"], c["small_grid"],
                     row["load"]))
        else:
            print("N = %d, %d rank(s), L = %g R: LAMMPS %.4f s/step, cpm %.4f s/step (LAMMPS / "
                  "cpm %.2f); a frame: LAMMPS dump atom %.4f s, dump custom %.4f s, cpm %.4f s; "
                  "load %.1f" % (n, ranks, row["box"], row["lmp"], row["cpm"],
                                 row["lmp"] / row["cpm"], row["atom"], row["custom"],
                                 row["cpm_frame"], row["load"]))
        print("  LAMMPS's timed run by section (s, average over ranks): " +
              ", ".join("%s %.3f" % kv for kv in row["sections"].items()))
        sys.stdout.flush()

    print("\nload average at end:", load_average())
    print("\n| N | cpm mesh | cpm error | L / R | PPPM accuracy | PPPM grid | LAMMPS error "
          "| LAMMPS error, background not compensated |")
    print("|---|---|---|---|---|---|---|---|")
    for n in sizes:
        c = chosen[n]
        print("| %d | %d³ | %.2e | %g | %g | %s | %.2e | %.2e |"
              % (n, mesh_cells(n), c["cpm_error"], c["box"], c["accuracy"],
                 c["grid"].replace(" ", "×") if c["grid"] else "?", c["error"], c["raw"]))
        if args.small_box and n == sizes[0]:
            print("| %d | | | %g | %g | %s | %.2e | |"
                  % (n, args.small_box, c["accuracy"],
                     (c["small_grid"] or "?").replace(" ", "×"), c["small_error"]))
    print("\n| N | ranks | L / R | LAMMPS s/step | cpm s/step | LAMMPS / cpm | frame: LAMMPS "
          "dump atom s | dump custom s | dump h5md s | cpm s | load (1 min) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        if r["label"] == "small":
            print("| %d | %d | %g | %.4f | | | | | | | %.1f |"
                  % (r["n"], r["ranks"], r["box"], r["lmp"], r["load"]))
            continue
        h5 = "%.4f" % r["h5md"] if r["h5md"] == r["h5md"] else "—"
        print("| %d | %d | %g | %.4f | %.4f | %.2f | %.4f | %.4f | %s | %.4f | %.1f |"
              % (r["n"], r["ranks"], r["box"], r["lmp"], r["cpm"], r["lmp"] / r["cpm"],
                 r["atom"], r["custom"], h5, r["cpm_frame"], r["load"]))


if __name__ == "__main__":
    main()
