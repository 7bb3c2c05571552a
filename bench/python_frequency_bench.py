#!/usr/bin/python3
"""Drawing frequencies from Python costs what it costs from the command line: N = 4,096 coulomb
frequencies in d = 16 (s = -1, beta = inf, seed 1) by cpm.generate_features, against the
generation time `cpm features` records for the same set (its `seconds` column, the generator
alone), and the CPU time of the call against that of the whole command (its points, errors and
report included), which a busy machine disturbs less. Alternating runs, median of --repeats
each; prints the ratios Python / command line (of the medians, and the median of the repeats'
ratios).

    /usr/bin/python3 bench/python_frequency_bench.py --build build [--repeats 3] [--n 4096]
"""
import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build", help="build folder (bin/cpm, python/cpm)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--n", type=int, default=4096)
    parser.add_argument("--dim", type=int, default=16)
    args = parser.parse_args()
    sys.path.insert(0, os.path.join(args.build, "python"))
    import cpm

    study = {"study": {"methods": ["coulomb"], "dims": [args.dim], "n": [args.n], "seeds": 1,
                       "seed": 1, "bootstrap": 10},
             "points": {"count": 64, "selection_count": 64},
             "coulomb": {"s": [-1.0]}}
    binary = os.path.join(args.build, "bin", "cpm")
    python_seconds, command_seconds, command_wall = [], [], []
    python_cpu, command_cpu = [], []
    with tempfile.TemporaryDirectory() as scratch:
        config = os.path.join(scratch, "features.toml")
        with open(config, "w") as f:
            f.write(cpm.to_toml(study))
        out = os.path.join(scratch, "out")

        def from_python():
            start, cpu = time.perf_counter(), cpu_seconds(resource.RUSAGE_SELF)
            omega = cpm.generate_features("coulomb", args.n, args.dim, seed=1, s=-1.0)
            python_seconds.append(time.perf_counter() - start)
            python_cpu.append(cpu_seconds(resource.RUSAGE_SELF) - cpu)
            assert omega.shape == (args.n, args.dim)

        def from_command_line():
            start, cpu = time.perf_counter(), cpu_seconds(resource.RUSAGE_CHILDREN)
            subprocess.run([binary, "features", config, "--output", out, "--overwrite",
                            "--quiet"], check=True)
            command_wall.append(time.perf_counter() - start)
            command_cpu.append(cpu_seconds(resource.RUSAGE_CHILDREN) - cpu)

        for repeat in range(args.repeats):
            # Alternating which goes first, so that a change of the machine's load between the
            # two halves of a repeat favours neither.
            for run in (from_python, from_command_line)[::1 if repeat % 2 == 0 else -1]:
                run()
            table = cpm.reader.load_table(os.path.join(out, "features.h5"), "approximation")
            command_seconds.append(float(table["seconds"].iloc[0]))
            print(f"repeat {repeat}: python {python_seconds[-1]:.3f} s (cpu {python_cpu[-1]:.3f} s),"
                  f" command line {command_seconds[-1]:.3f} s (wall {command_wall[-1]:.3f} s, "
                  f"cpu {command_cpu[-1]:.3f} s)", flush=True)
    median = statistics.median
    py, cli = median(python_seconds), median(command_seconds)
    py_cpu, cli_cpu = median(python_cpu), median(command_cpu)
    print(f"N = {args.n}, d = {args.dim}, coulomb s = -1, OMP_NUM_THREADS = "
          f"{os.environ.get('OMP_NUM_THREADS', 'unset')}, median of {args.repeats}, load average "
          f"{os.getloadavg()[0]:.1f} at the end")
    # The ratio within each repeat, whose two halves ran one after the other, drifts less with
    # the machine's load than the ratio of the medians.
    paired = median(p / c for p, c in zip(python_seconds, command_seconds))
    print(f"generation: python {py:.3f} s, command line {cli:.3f} s "
          f"(whole command {median(command_wall):.3f} s); ratio {py / cli:.3f}, "
          f"median of the repeats' ratios {paired:.3f}")
    print(f"cpu: python call {py_cpu:.3f} s, whole command {cli_cpu:.3f} s; "
          f"ratio {py_cpu / cli_cpu:.3f}")


def cpu_seconds(who):
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


if __name__ == "__main__":
    main()
