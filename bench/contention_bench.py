#!/usr/bin/python3
"""Threads beside other work: the same job on 1 and on 2 OpenMP threads, on a quiet machine and
beside a busy process, and the ratio time(2 threads) / time(1 thread) in each condition.

Jobs: the classifier's training step at L = 128 and 1,024 (bench/training_step_bench, with the
ThreadGovernor as cpm's trainers run it, and on a fixed team for comparison), a small retrieval
study (`cpm recall bench/contention_retrieval.toml`), the default `cpm run` and a 2D run whose
grid solver dominates (`cpm run bench/contention_grid.toml`, FFTs of 512²). Conditions: quiet;
beside one spinning process; beside a second 2-thread `cpm recall` of a retrieval study, looping;
beside two spinning processes (every core busy). Each cell is the median of --repeats runs.

    /usr/bin/python3 bench/contention_bench.py --build build [--repeats 3] [--jobs step128,...]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def jobs(build, scratch, baseline):
    cpm = os.path.join(build, "bin", "cpm")
    step = os.path.join(build, "bin", "training_step_bench")
    retrieval = os.path.join(ROOT, "bench", "contention_retrieval.toml")
    grid = os.path.join(ROOT, "bench", "contention_grid.toml")
    table = {
        "step128": [step, "--length", "128", "--steps", "100"],
        "step128-fixed": [step, "--length", "128", "--steps", "100", "--fixed"],
        "step1024": [step, "--length", "1024", "--steps", "20"],
        "step1024-fixed": [step, "--length", "1024", "--steps", "20", "--fixed"],
        "retrieval": [cpm, "recall", retrieval, "--output", os.path.join(scratch, "retrieval"),
                      "--overwrite", "--quiet"],
        "run": [cpm, "run", "--output", os.path.join(scratch, "run"), "--overwrite", "--quiet"],
        "grid": [cpm, "run", grid, "--output", os.path.join(scratch, "grid"), "--overwrite",
                 "--quiet"],
    }
    if baseline:  # the same commands of an earlier build, for a before/after in one run
        old = os.path.join(baseline, "bin", "cpm")
        table["retrieval-baseline"] = [old] + table["retrieval"][1:]
        table["run-baseline"] = [old] + table["run"][1:]
        table["grid-baseline"] = [old] + table["grid"][1:]
    return table


def start_load(kind, build, scratch):
    """The busy processes of one condition."""
    spin = [sys.executable, "-c", "while True: pass"]
    if kind == "quiet":
        return []
    if kind == "spin":
        return [subprocess.Popen(spin)]
    if kind == "spin2":
        return [subprocess.Popen(spin), subprocess.Popen(spin)]
    if kind == "cpm2":
        cpm = os.path.join(build, "bin", "cpm")
        config = os.path.join(ROOT, "bench", "contention_retrieval.toml")
        loop = (f"while :; do OMP_NUM_THREADS=2 {cpm} recall {config} --output "
                f"{scratch}/load --overwrite --quiet > /dev/null 2>&1; done")
        return [subprocess.Popen(["/bin/sh", "-c", loop], start_new_session=True)]
    raise ValueError(kind)


def stop_load(processes):
    for p in processes:
        try:
            os.killpg(p.pid, 15) if p.args[0] == "/bin/sh" else p.terminate()
        except ProcessLookupError:
            pass
        p.wait()


def timed(command, threads):
    """Seconds of the job: the steps' own time for training_step_bench (it prints it first; the
    set-up before the first step is not the step), the whole process for the others."""
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    start = time.perf_counter()
    done = subprocess.run(command, env=env, check=True, stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, text=True)
    elapsed = time.perf_counter() - start
    if os.path.basename(command[0]) == "training_step_bench":
        return float(done.stdout.split()[0])
    return elapsed


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--baseline", help="the build folder of an earlier cpm: its retrieval, "
                        "run and grid jobs are added as retrieval-baseline, run-baseline and "
                        "grid-baseline")
    parser.add_argument("--jobs", default="step128,step128-fixed,step1024,step1024-fixed,"
                                          "retrieval,run,grid")
    parser.add_argument("--conditions", default="quiet,spin,cpm2,spin2")
    args = parser.parse_args()
    scratch = tempfile.mkdtemp(prefix="cpm-contention-")
    table = jobs(args.build, scratch, args.baseline)
    selected = args.jobs.split(",")
    for name in selected:
        if name not in table:
            sys.exit(f"contention_bench: unknown job {name} (jobs: {', '.join(table)})")
    isa = subprocess.run([os.path.join(args.build, "bin", "cpm"), "--version"],
                         capture_output=True, text=True).stdout.strip()
    print(f"cpm: {isa}; {os.cpu_count()} cores; median of {args.repeats} runs per cell")
    print(f"{'job':<16} {'condition':<8} {'1 thread s':>11} {'2 threads s':>12} {'2t / 1t':>8}")
    try:
        for condition in args.conditions.split(","):
            load = start_load(condition, args.build, scratch)
            time.sleep(1.0 if load else 0.0)  # let the load reach its steady state
            try:
                for name in selected:
                    one = statistics.median(timed(table[name], 1) for _ in range(args.repeats))
                    two = statistics.median(timed(table[name], 2) for _ in range(args.repeats))
                    print(f"{name:<16} {condition:<8} {one:>11.2f} {two:>12.2f} {two / one:>8.2f}",
                          flush=True)
            finally:
                stop_load(load)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
