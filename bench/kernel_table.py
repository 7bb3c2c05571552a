#!/usr/bin/env python3
"""The combined results table of `cpm kernel` on the three synthetic tasks (bench/results/kernel.md).

    python3 bench/kernel_table.py OUT        (OUT/<task>/results.csv from bench/kernel_results.sh)

Prints a markdown table (test accuracy mean ± std over seeds at N = 16, 64, 256, 512, the fraction
of the N = 256 accuracy kept at N = 64, and at N = 512: ECE before/after temperature scaling,
effective rank, alignment on fit vs held-out rows, mean |ω|) and the checks: at N = 512 and 10%
noise, learned against the best fixed baseline (iid / orthogonal) and importance sampling; at
N = 64, learned's fraction of its N = 256 accuracy; the permuted-label null against the baselines.
"""
import csv
import math
import statistics
import sys
from collections import defaultdict

TASKS = ["radial", "variance", "mixture"]
METHODS = ["iid", "orthogonal", "importance", "learned", "learned-beta-inf",
           "learned-no-repulsion", "learned-null"]


def ms(values):
    if not values:
        return float("nan"), float("nan")
    mean = statistics.fmean(values)
    std = statistics.stdev(values) if len(values) > 1 else 0.0
    return mean, std


def fmt(values, digits=3):
    m, s = ms(values)
    return "—" if math.isnan(m) else f"{m:.{digits}f} ± {s:.{digits}f}"


def main(out):
    rows = defaultdict(list)  # (task, noise, method, n) -> [row]
    noises = set()
    for task in TASKS:
        try:
            with open(f"{out}/{task}/results.csv") as f:
                for r in csv.DictReader(f):
                    key = (task, float(r["label_noise"]), r["method"], int(r["n"]))
                    rows[key].append(r)
                    noises.add(float(r["label_noise"]))
        except FileNotFoundError:
            continue

    def col(task, noise, method, n, name):
        return [float(r[name]) for r in rows.get((task, noise, method, n), [])]

    def per_seed(task, noise, method, n):
        return {r["seed"]: float(r["accuracy"]) for r in rows.get((task, noise, method, n), [])}

    print("| task | noise | method | N=16 | N=64 | N=256 | N=512 | acc(64)/acc(256) | ECE (512) "
          "| ECE after T (512) | eff. rank (512) | A fit / held-out (512) | mean abs(ω) (512) |")
    print("|" + "---|" * 13)
    for task in TASKS:
        for noise in sorted(noises):
            for method in METHODS:
                if not rows.get((task, noise, method, 512)):
                    continue
                a64, a256 = per_seed(task, noise, method, 64), per_seed(task, noise, method, 256)
                kept = [a64[s] / a256[s] for s in a64 if s in a256 and a256[s] > 0]
                fit = statistics.fmean(col(task, noise, method, 512, "alignment"))
                held = statistics.fmean(col(task, noise, method, 512, "alignment_validation"))
                print(f"| {task} | {round(100 * noise)}% | {method} | "
                      + " | ".join(fmt(col(task, noise, method, n, "accuracy"))
                                   for n in (16, 64, 256, 512))
                      + f" | {fmt(kept)} | {fmt(col(task, noise, method, 512, 'ece'))} | "
                      f"{fmt(col(task, noise, method, 512, 'ece_calibrated'))} | "
                      f"{fmt(col(task, noise, method, 512, 'effective_rank'), 0)} | "
                      f"{fit:.4f} / {held:.4f} | "
                      f"{statistics.fmean(col(task, noise, method, 512, 'mean_norm')):.2f} |")
    print()
    print("Checks (means over seeds):")
    print()
    for task in TASKS:
        if not rows.get((task, 0.1, "learned", 512)):
            continue
        learned = ms(col(task, 0.1, "learned", 512, "accuracy"))[0]
        fixed = {m: ms(col(task, 0.1, m, 512, "accuracy"))[0] for m in ("iid", "orthogonal")}
        best = max(fixed, key=fixed.get)
        imp = ms(col(task, 0.1, "importance", 512, "accuracy"))[0]
        null = ms(col(task, 0.1, "learned-null", 512, "accuracy"))[0]
        a64, a256 = per_seed(task, 0.1, "learned", 64), per_seed(task, 0.1, "learned", 256)
        kept = ms([a64[s] / a256[s] for s in a64 if s in a256])[0]
        verdict = "holds" if learned >= fixed[best] else "FAILS"
        print(f"- {task}, 10% noise, N = 512: learned {learned:.4f} vs best fixed ({best}) "
              f"{fixed[best]:.4f} ({learned - fixed[best]:+.4f}): {verdict}; importance "
              f"{imp:.4f} ({learned - imp:+.4f}); permuted-label null {null:.4f}; "
              f"N = 64 keeps {100 * kept:.1f}% of N = 256 "
              f"({'holds' if kept >= 0.9 else 'FAILS'} ≥ 90%)")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "out/kernel_results")
