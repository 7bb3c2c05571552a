#!/usr/bin/env python3
"""The selected runs of a `cpm recall` study, averaged over seeds: one CSV row per normalisation,
arm, D_φ and size (test accuracy mean and std, the validated τ and τ_eff, and the capacity
diagnostic), for the figures of docs/findings.md.

    python3 bench/recall_selected_means.py out/retrieval_normalised > bench/data/recall_normalised.csv
"""
import argparse
import csv
import os
import statistics
import sys

COLUMNS = ["accuracy", "effective_bandwidth", "margin", "norm_spread", "norm_cv", "effective_temperature"]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("study", help="the study's output folder (its capacity.csv)")
    parser.add_argument("--source", default="", help="a comment line naming where the figures are recorded")
    arguments = parser.parse_args(argv)
    path = os.path.join(arguments.study, "capacity.csv")
    if not os.path.exists(path):
        sys.exit(f"{path}: missing (the folder of a finished cpm recall study)")
    cells = {}
    with open(path) as table:
        for row in csv.DictReader(table):
            if row["selected"] != "1":
                continue
            key = (row["normalisation"], row["variant"], int(row["feature_dim"]), int(row["size"]))
            cells.setdefault(key, []).append(row)
    if not cells:
        sys.exit(f"{path}: no selected run (the study has not finished)")
    out = csv.writer(sys.stdout, lineterminator="\n")
    if arguments.source:
        print(f"# {arguments.source}")
    print(f"# mean over seeds of the selected runs; command: python3 bench/recall_selected_means.py {arguments.study}")
    out.writerow(["normalisation", "arm", "D_phi", "S", "seeds", "accuracy", "accuracy_std", "tau", "tau_effective",
                  "margin", "spread_decades", "length_cv", "effective_temperature"])
    for (normalisation, arm, dim, size), runs in sorted(cells.items()):
        mean = {c: statistics.fmean(float(r[c]) for r in runs) for c in COLUMNS}
        spread = statistics.stdev(float(r["accuracy"]) for r in runs) if len(runs) > 1 else 0.0
        out.writerow([normalisation, arm, dim or "", size, len(runs), f"{mean['accuracy']:.4f}", f"{spread:.4f}",
                      f"{float(runs[0]['bandwidth']):g}", f"{mean['effective_bandwidth']:.4g}", f"{mean['margin']:.4f}",
                      f"{mean['norm_spread']:.3f}", f"{mean['norm_cv']:.3f}", f"{mean['effective_temperature']:.4g}"])


if __name__ == "__main__":
    main()
