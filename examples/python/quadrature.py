#!/usr/bin/python3
"""The Gaussian kernel exp(-|x - y|^2/2) from N random-feature frequencies: i.i.d. draws against
cpm's coulomb gas (the compensated repulsive particles, docs/features.md), as the relative
Frobenius error of the Gram matrix on 128 points in d = 4, mean over 3 seeds; the figure goes to
quadrature.png. A few seconds.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/quadrature.py [--output FILE]
"""
import argparse

import matplotlib
import numpy as np

import cpm

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

parser = argparse.ArgumentParser(description="i.i.d. against coulomb frequencies")
parser.add_argument("--output", default="quadrature.png")
output = parser.parse_args().output

d, seeds, ns = 4, 3, [16, 32, 64, 128, 256]
x = np.random.default_rng(0).normal(scale=d ** -0.5, size=(128, d))  # |x - y|^2/2 ~ 1
errors = {}
for method in ["iid", "coulomb"]:
    errors[method] = [np.mean([
        cpm.kernel_errors(x, cpm.generate_features(method, n, d, seed=1, replica=r))["frobenius"]
        for r in range(seeds)]) for n in ns]

print(f"{'N':>5} {'iid':>10} {'coulomb':>10} {'ratio':>7}")
for n, a, b in zip(ns, errors["iid"], errors["coulomb"]):
    print(f"{n:5d} {a:10.5f} {b:10.5f} {b / a:7.2f}")

plt.figure(figsize=(5, 4))
for method, marker in [("iid", "o"), ("coulomb", "s")]:
    plt.loglog(ns, errors[method], marker=marker, label=method)
plt.loglog(ns, errors["iid"][0] * (np.array(ns) / ns[0]) ** -0.5, "k:", label="N^-1/2")
plt.xlabel("N frequencies")
plt.ylabel("relative Frobenius error of the Gram matrix")
plt.title(f"Gaussian kernel, d = {d}")
plt.legend()
plt.tight_layout()
plt.savefig(output, dpi=120)
print("figure:", output)
