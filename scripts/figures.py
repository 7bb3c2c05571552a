#!/usr/bin/env python3
"""The figures of docs/findings.md, drawn from the small tables in bench/data/.

Every figure is one function `figure_<name>(data, output)` that reads the CSV files it needs from
`data` (comment lines start with `#`; each file names the results section and the command that
produced its figures) and writes `<output>/<name>.png`. Nothing here runs cpm: the tables are
transcribed from the measured results, and this script only draws them.

    /usr/bin/python3 scripts/figures.py                      # every figure into docs/figures/
    /usr/bin/python3 scripts/figures.py --output /tmp/figs   # elsewhere
    /usr/bin/python3 scripts/figures.py --only recall ldp    # some of them
"""
import argparse
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA_DIR = os.path.join(SOURCE_DIR, "bench", "data")
OUTPUT_DIR = os.path.join(SOURCE_DIR, "docs", "figures")
DPI = 110


def read(data, name):
    """One table of bench/data as a DataFrame (its `#` lines skipped)."""
    return pd.read_csv(os.path.join(data, name), comment="#")


def save(fig, output, name):
    path = os.path.join(output, name + ".png")
    fig.savefig(path, dpi=DPI, bbox_inches="tight")
    plt.close(fig)
    return path


def figure_convergence(data, output):
    """Particles against the PDE: the fitted rate of W1 in N with its 95 % bootstrap band."""
    table = read(data, "convergence.csv")
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8))
    colours = ["tab:blue", "tab:grey"]
    for k, row in table.iterrows():
        left.errorbar(row.slope, k, xerr=[[row.slope - row.low], [row.high - row.slope]],
                      fmt="o", color=colours[k], capsize=4)
    left.axvline(-0.5, color="black", lw=0.8, ls=":", label="−1/2 (sampling floor with noise)")
    left.set_yticks(range(len(table)), table.series)
    left.set_ylim(-0.7, len(table) - 0.3)
    left.set_xlabel("slope of log W1 against log N (95 % bootstrap interval)")
    left.set_title("Fitted rate, N = 100 … 100,000, 16 replicas")
    left.legend(loc="lower left", fontsize=8)

    n = np.logspace(2, 5, 50)
    for k, row in table.iterrows():
        anchor = row.w1_at_100000
        right.plot(n, anchor * (n / 1e5) ** row.slope, color=colours[k], ls="--",
                   label=f"{row.series}: N^{row.slope:.3f}")
        right.fill_between(n, anchor * (n / 1e5) ** row.low, anchor * (n / 1e5) ** row.high,
                           color=colours[k], alpha=0.2, lw=0)
        right.plot([1e5], [anchor], "o", color=colours[k])
    right.set_xscale("log")
    right.set_yscale("log")
    right.set_xlabel("N")
    right.set_ylabel("W1 to the PDE's density")
    right.set_title("Fitted laws through the measured W1 at N = 10⁵ (dots)", fontsize=10)
    right.legend(fontsize=8)
    fig.suptitle("1D log gas: particles against the grid solver of the McKean–Vlasov PDE")
    fig.tight_layout()
    return save(fig, output, "convergence")


def figure_ldp(data, output):
    """Concentration of the random-feature kernel: tails, mean squares and speeds."""
    tails = read(data, "kernel_tails.csv")
    fluctuations = read(data, "kernel_fluctuations.csv")
    speeds = read(data, "kernel_speeds.csv")
    colours = {"iid": "tab:grey", "gas, β = 4": "tab:orange", "gas, β = N/2": "tab:blue"}
    fig, axes = plt.subplots(1, 3, figsize=(14, 3.9))

    ax = axes[0]
    for ensemble, colour in colours.items():
        for n, style in ((16, ":"), (64, "-")):
            rows = tails[(tails.ensemble == ensemble) & (tails.N == n) & (tails.probability > 0)]
            ax.plot(rows.delta, rows.probability, style, marker="o", ms=3, color=colour,
                    label=f"{ensemble}, N = {n}")
    ax.set_yscale("log")
    ax.set_xlabel("δ")
    ax.set_ylabel("P(f > δ)  (2,000 replicas; zeros left out)")
    ax.set_title("Tails of the kernel's relative error f")
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2)

    ax = axes[1]
    for ensemble, colour in colours.items():
        rows = fluctuations[fluctuations.ensemble == ensemble]
        ax.plot(rows.N, rows.mean_f2, "o-", color=colour, label=ensemble)
    exact = fluctuations[fluctuations.ensemble == "iid"]
    ax.plot(exact.N, exact.exact_iid_mean_f2, "k+", ms=10, label="i.i.d., closed form")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks([16, 32, 64], ["16", "32", "64"])
    ax.set_xlabel("N")
    ax.set_ylabel("mean f²")
    ax.set_title("Mean square over replicas")
    ax.legend(fontsize=8)

    ax = axes[2]
    variance = speeds[speeds.measure == "variance"].reset_index(drop=True)
    labels = []
    for k, row in variance.iterrows():
        ax.errorbar(row.speed, k, xerr=[[row.speed - row.low], [row.high - row.speed]], fmt="o",
                    color=colours[row.ensemble], capsize=4)
        labels.append(f"{row.ensemble}\n({row.over})")
    for x, text in ((1, "speed N"), (2, "speed N²")):
        ax.axvline(x, color="black", lw=0.8, ls=":")
        ax.text(x, -0.35, text, ha="center", fontsize=8)
    ax.set_yticks(range(len(variance)), labels, fontsize=7)
    ax.set_ylim(len(variance), -0.6)
    ax.set_xlabel("variance speed: slope of −log Var f in log N\n(95 % bootstrap interval)")
    ax.set_title("Speeds")
    fig.suptitle("Concentration of the random-feature Gaussian kernel over replicas (d = 2, 64 points)")
    fig.tight_layout()
    return save(fig, output, "ldp")


def figure_quadrature(data, output):
    """The compensated repulsive gas as a quadrature: Gram-matrix error against d."""
    gaussian = read(data, "features_gaussian.csv")
    laplace = read(data, "features_laplace.csv")
    styles = {"iid": ("tab:grey", "o"), "orthogonal": ("tab:green", "s"),
              "sobol": ("tab:purple", "^"), "halton": ("tab:brown", "v"),
              "coulomb": ("tab:blue", "D")}
    panels = ((gaussian, 256, "Gaussian kernel, N = 256"),
              (gaussian, 4096, "Gaussian kernel, N = 4,096"),
              (laplace, 4096, "Laplace kernel, N = 4,096"))
    fig, axes = plt.subplots(1, 3, figsize=(14, 3.9), sharey=True)
    for ax, (table, n, title) in zip(axes, panels):
        for method, (colour, marker) in styles.items():
            rows = table[(table.N == n) & (table.method == method)]
            label = "compensated gas (coulomb)" if method == "coulomb" else method
            ax.plot(rows.d, rows.frobenius_error, marker=marker, color=colour, label=label,
                    lw=2.2 if method == "coulomb" else 1.2)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xticks(sorted(table.d.unique()), [str(d) for d in sorted(table.d.unique())])
        ax.set_xlabel("dimension d")
        ax.set_title(title)
    axes[0].set_ylabel("relative Frobenius error of the Gram matrix\n(mean over 5 seeds)")
    axes[0].legend(fontsize=8)
    fig.suptitle("Random-feature frequencies as a quadrature of the kernel")
    fig.tight_layout()
    return save(fig, output, "quadrature")


RECALL_ARMS = {  # arm: (colour, line style); solid: particles learned, dashed: fixed maps
    "softmax": ("black", "-"),
    "dpfp1": ("tab:red", "--"),
    "dpfp2": ("tab:red", "--"),
    "taylor": ("tab:brown", "--"),
    "hedgehog": ("tab:olive", "--"),
    "vanilla-favor": ("tab:grey", "--"),
    "vanilla-favor:coulomb": ("tab:cyan", "--"),
    "kernel-favor": ("tab:blue", "-"),
    "trainable-favor": ("tab:orange", "-"),
}


def figure_recall(data, output):
    """Recall capacity of every arm against S, the length-spread diagnostic, MQAR."""
    capacity = read(data, "recall_capacity.csv")
    diagnostic = read(data, "recall_diagnostic.csv")
    mqar = read(data, "recall_mqar.csv")
    fig, axes = plt.subplots(2, 2, figsize=(12, 8.5))

    for ax, dphi in ((axes[0, 0], 128), (axes[0, 1], 256)):
        for arm, (colour, style) in RECALL_ARMS.items():
            rows = capacity[(capacity.arm == arm) & ((capacity.D_phi == dphi) | capacity.D_phi.isna())]
            if rows.empty:
                continue
            ax.plot(rows.S, rows.accuracy, style, marker="o", ms=4, color=colour, label=arm,
                    lw=2 if style == "-" else 1.2)
        ax.axhline(0.9, color="black", lw=0.6, ls=":")
        ax.set_xlabel("keys S")
        ax.set_ylabel("test accuracy (mean of 3 seeds)")
        ax.set_title(f"Associative retrieval, D_φ = {dphi}, each arm at its validated τ", fontsize=10)
        ax.set_xticks([40, 80, 120, 200])
        ax.legend(fontsize=7, loc="lower left")

    ax = axes[1, 0]
    maps = diagnostic[diagnostic.arm != "softmax"]
    for _, row in maps.iterrows():
        favor = "favor" in row.arm
        colour = "tab:blue" if favor else ("tab:olive" if row.arm == "hedgehog" else "tab:red")
        marker = {128: "o", 256: "s"}.get(row.D_phi, "^")
        ax.plot(row.spread_decades, row.accuracy, marker, color=colour, ms=6,
                mfc="none" if row.D_phi == 256 else colour)
    ax.plot([], [], "o", color="tab:blue", label="favor arms (positive exponential features)")
    ax.plot([], [], "o", color="tab:red", label="polynomial maps (DPFP, Taylor, elu)")
    ax.plot([], [], "o", color="tab:olive", label="Hedgehog (normalised)")
    ax.plot([], [], "ok", label="D_φ = 128 (filled)")
    ax.plot([], [], "sk", mfc="none", label="D_φ = 256 (open)")
    ax.plot([], [], "^k", label="elu, D_φ = 64")
    ax.set_xlabel("spread of ‖φ(k)‖ within a sequence, decades (log10 max/min)")
    ax.set_ylabel("test accuracy at S = 200")
    ax.set_title("The length-spread diagnostic at S = 200", fontsize=10)
    ax.legend(fontsize=7, loc="lower left")

    ax = axes[1, 1]
    order = list(dict.fromkeys(mqar.arm))
    means = [mqar[mqar.arm == arm].accuracy.mean() for arm in order]
    ax.barh(range(len(order)), means, color="lightsteelblue")
    for k, arm in enumerate(order):
        values = mqar[mqar.arm == arm].accuracy
        ax.plot(values, [k] * len(values), "k.", ms=8)
        ax.text(max(values.max(), 0.03) + 0.02, k, f"{means[k]:.3f} ({len(values)} seed{'s' * (len(values) > 1)})",
                va="center", fontsize=7)
    ax.set_yticks(range(len(order)), [arm.replace(" (", "\n(") for arm in order], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlim(0, 1.25)
    ax.set_xlabel("test accuracy over query positions (bar: mean; dots: seeds)")
    ax.set_title("MQAR (L, N) = (256, 16), V = 1,024, D_φ = 128", fontsize=10)
    fig.tight_layout()
    return save(fig, output, "recall")


# the arms of the normalised study: RECALL_ARMS' colours, and the ReBased-style map
NORMALISED_ARMS = {arm: RECALL_ARMS[arm] for arm in ("vanilla-favor", "dpfp1", "taylor")}
NORMALISED_ARMS["rebased"] = ("tab:green", "--")
NORMALISED_ARMS.update({arm: RECALL_ARMS[arm] for arm in ("kernel-favor", "trainable-favor")})


def figure_recall_normalised(data, output):
    """Recall with every key's length taken away: accuracy against S under each normalisation."""
    table = read(data, "recall_normalised.csv")
    frame = table[table.normalisation == "none"]
    unnormalised = read(data, "recall_capacity.csv")
    unnormalised = unnormalised[(unnormalised.D_phi == 128) & unnormalised.S.isin(set(table.S))]
    kinds = [n for n in ("l2", "l1", "qk") if n in set(table.normalisation)]
    titles = {"l2": "φ(k)/‖φ(k)‖₂", "l1": "φ(k)/‖φ(k)‖₁", "qk": "q, k → s_h q/‖q‖, s_h k/‖k‖ (learned s_h)"}
    fig, axes = plt.subplots(1, len(kinds) + 1, figsize=(4.4 * (len(kinds) + 1), 4.2))
    for ax, kind in zip(axes, kinds):
        rows = table[table.normalisation == kind]
        for arm, (colour, style) in NORMALISED_ARMS.items():
            arm_rows = rows[rows.arm == arm].sort_values("S")
            if arm_rows.empty:
                continue
            ax.errorbar(arm_rows.S, arm_rows.accuracy, yerr=arm_rows.accuracy_std, fmt=style, marker="o", ms=4,
                        color=colour, label=arm, lw=2 if style == "-" else 1.2, capsize=2)
        for arm, marker in (("taylor", "s"), ("kernel-favor", "o")):
            rows_none = unnormalised[unnormalised.arm == arm].sort_values("S")
            ax.plot(rows_none.S, rows_none.accuracy, ":", marker=marker, ms=3, color="silver", lw=1,
                    label=f"{arm}, keys not normalised")
        softmax = frame[frame.arm == "softmax"].sort_values("S")
        ax.plot(softmax.S, softmax.accuracy, ":", color="black", lw=1, label="softmax")
        ax.axhline(0.9, color="black", lw=0.6, ls=":")
        ax.set_ylim(0.3, 1.02)
        ax.set_xticks(sorted(set(rows.S)))
        ax.set_xlabel("keys S")
        ax.set_ylabel("test accuracy (mean ± std, 3 seeds)")
        ax.set_title(f"{kind}: {titles[kind]}", fontsize=9)
        ax.legend(fontsize=7, loc="lower left")
    ax = axes[-1]
    largest = table[(table.S == table.S.max()) & (table.normalisation != "none")]
    markers = {"l2": "o", "l1": "s", "qk": "^"}
    for _, row in largest.iterrows():
        colour = NORMALISED_ARMS.get(row.arm, ("black", "-"))[0]
        ax.plot(row.length_cv, row.accuracy, markers[row.normalisation], color=colour, ms=7)
    for kind in kinds:
        ax.plot([], [], markers[kind], color="black", mfc="none", label=kind)
    ax.set_xscale("symlog", linthresh=0.01)
    ax.set_xlabel("coefficient of variation of ‖φ(k)‖ within a sequence")
    ax.set_ylabel(f"test accuracy at S = {int(table.S.max())}")
    ax.set_title("Variation of the key feature lengths against accuracy", fontsize=9)
    ax.legend(fontsize=7, loc="lower left", title="normalisation (colour: arm)", title_fontsize=7)
    fig.suptitle("Associative retrieval with normalised keys, D_φ = 128, each arm at its validated τ")
    fig.tight_layout()
    return save(fig, output, "recall_normalised")


def figure_classification(data, output):
    """The classification benchmarks: paired differences, robustness and calibration."""
    paired = read(data, "classification_paired.csv")
    arms = read(data, "classification_arms.csv")
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.6), gridspec_kw={"width_ratios": [1.3, 1, 1]})

    ax = axes[0]
    colours = {"SST-2 dev": "tab:blue", "Rotten Tomatoes test": "tab:orange"}
    comparisons = list(dict.fromkeys(paired.comparison))
    for offset, (dataset, colour) in zip((-0.15, 0.15), colours.items()):
        rows = paired[paired.dataset == dataset].set_index("comparison").loc[comparisons]
        y = np.arange(len(comparisons)) + offset
        ax.errorbar(rows.delta_accuracy, y, xerr=[rows.delta_accuracy - rows.low, rows.high - rows.delta_accuracy],
                    fmt="o", color=colour, capsize=3, ms=4, label=dataset)
    ax.axvline(0, color="black", lw=0.8)
    ax.set_yticks(range(len(comparisons)), comparisons, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("paired Δ accuracy, 10 seeds (95 % bootstrap interval)")
    ax.set_title("Paired tests: no difference is significant", fontsize=10)
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.19), ncol=2)

    ax = axes[1]
    names = list(dict.fromkeys(arms.arm))
    for dataset, colour in colours.items():
        rows = arms[arms.dataset == dataset].set_index("arm").loc[names]
        for column, marker, label in (("accuracy", "o", "clean"), ("word_drop_10", "s", "10 % words dropped"),
                                      ("word_drop_20", "^", "20 % words dropped")):
            ax.plot(rows[column], range(len(names)), marker, color=colour, ms=5, mfc="none" if column != "accuracy" else colour,
                    label=f"{dataset}, {label}")
    ax.set_yticks(range(len(names)), names, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("accuracy (mean of 10 seeds)")
    ax.set_title("Robustness: clean and with words dropped", fontsize=10)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.19), ncol=2)

    ax = axes[2]
    for offset, (dataset, colour) in zip((-0.15, 0.15), colours.items()):
        rows = arms[arms.dataset == dataset].set_index("arm").loc[names]
        ax.errorbar(rows.ece, np.arange(len(names)) + offset, xerr=rows.ece_std, fmt="o", color=colour,
                    capsize=3, ms=4, label=dataset)
    ax.set_yticks(range(len(names)), names, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("ECE (mean ± std over 10 seeds)")
    ax.set_title("Calibration", fontsize=10)
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.19), ncol=2)
    fig.suptitle("Kernel attention on SST-2 and Rotten Tomatoes: Phase A particles (kernel-) against the same "
                 "network continued (vanilla-)", fontsize=11)
    fig.tight_layout()
    return save(fig, output, "classification")


def figure_kernel_learning(data, output):
    """Learned random features on the synthetic tasks (10 % label noise) and the subspace task."""
    table = read(data, "kernel_learning.csv")
    subspace = read(data, "kernel_subspace.csv")
    styles = {"iid": ("tab:grey", "--"), "orthogonal": ("tab:green", "--"), "importance": ("tab:purple", "--"),
              "learned": ("tab:blue", "-"), "learned-beta-inf": ("tab:red", "-"), "learned-null": ("black", ":"),
              "sobol": ("tab:brown", "--"), "coulomb": ("tab:cyan", "--"),
              "learned-no-repulsion": ("tab:orange", "-"), "learned (from orthogonal)": ("tab:blue", "-")}
    fig, axes = plt.subplots(1, 4, figsize=(16, 3.9))
    for ax, task in zip(axes[:3], ("radial", "variance", "mixture")):
        for method in ("iid", "orthogonal", "importance", "learned", "learned-beta-inf", "learned-null"):
            rows = table[(table.task == task) & (table.noise_percent == 10) & (table.method == method)]
            colour, style = styles[method]
            ax.errorbar(rows.N, rows.accuracy, yerr=rows.accuracy_std, fmt=style, marker="o", ms=3,
                        color=colour, capsize=2, label=method)
        ax.set_xscale("log", base=2)
        ax.set_xticks([16, 64, 256, 512], ["16", "64", "256", "512"])
        ax.set_xlabel("features N")
        ax.set_title(f"{task}, 10 % label noise (3 seeds)", fontsize=10)
    axes[0].set_ylabel("test accuracy")
    axes[0].legend(fontsize=7)
    ax = axes[3]
    for method in ("iid", "orthogonal", "sobol", "coulomb", "learned (from orthogonal)", "learned-no-repulsion"):
        rows = subspace[subspace.method == method]
        colour, style = styles[method]
        ax.errorbar(rows.N, rows.accuracy, yerr=rows.accuracy_std, fmt=style, marker="o", ms=3, color=colour,
                    capsize=2, label=method)
    ax.set_xscale("log", base=2)
    ax.set_xticks([16, 32, 64, 128, 256, 512], ["16", "32", "64", "128", "256", "512"])
    ax.set_xlabel("features N")
    ax.set_title("subspace task, d = 16 (5 seeds)", fontsize=10)
    ax.legend(fontsize=7)
    fig.suptitle("Kernel learning with frequencies as charged particles (cpm kernel)")
    fig.tight_layout()
    return save(fig, output, "kernel_learning")


def figure_training_speed(data, output):
    """Training speed against PyTorch: the eight cells of the >= 5x target."""
    table = read(data, "training_speed.csv")
    labels = [f"{r.model} {r.attention}, L = {r.L:,}" for r in table.itertuples()]
    y = np.arange(len(table))
    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 4.2), sharey=True)
    left.barh(y - 0.2, table.vs_installed_1, height=0.4, color="tab:grey", label="PyTorch + OpenBLAS as installed")
    left.barh(y + 0.2, table.vs_tuned_1, height=0.4, color="tab:blue", label="PyTorch tuned by hand (the faster build)")
    second = table.vs_tuned_2.notna()
    left.plot(table.vs_installed_2[second], y[second] - 0.2, "k|", ms=12, mew=2, label="second run (L = 128)")
    left.plot(table.vs_tuned_2[second], y[second] + 0.2, "k|", ms=12, mew=2)
    left.axvline(5, color="tab:red", lw=1.2, label="target 5×")
    left.set_xscale("log")
    left.set_xlim(1, 300)
    left.set_yticks(y, labels, fontsize=8)
    left.invert_yaxis()
    left.set_xlabel("tokens/s of cpm / tokens/s of PyTorch (same model, same 2 cores)")
    left.set_title("Training speed against PyTorch", fontsize=10)
    for k, row in enumerate(table.itertuples()):
        tuned = np.nanmax([row.vs_tuned_1, row.vs_tuned_2])
        installed = np.nanmax([row.vs_installed_1, row.vs_installed_2])
        second = "" if np.isnan(row.vs_tuned_2) else f"; {row.vs_tuned_2:.2f}"
        left.text(tuned * 1.06, k + 0.2, f"{row.vs_tuned_1:.2f}{second}", va="center", fontsize=7)
        second = "" if np.isnan(row.vs_installed_2) else f"; {row.vs_installed_2:g}"
        left.text(installed * 1.06, k - 0.2, f"{row.vs_installed_1:g}{second}", va="center", fontsize=7)
    left.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2)

    for k, row in enumerate(table.itertuples()):
        right.plot([row.cpm_percent_peak_1, row.percent_peak_for_5x_1], [k, k], color="lightgrey", lw=3, zorder=0)
    right.plot(table.cpm_percent_peak_1, y, "o", color="tab:blue", label="cpm's step, % of the FMA peak")
    right.plot(table.percent_peak_for_5x_1, y, "D", color="tab:red", label="what 5× the tuned PyTorch would need")
    right.set_xlabel("% of the measured FMA peak over the whole training step")
    right.set_title("Why six cells stay short of 5× the tuned PyTorch", fontsize=10)
    right.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2)
    fig.suptitle("Kernel-attention Transformer training (Zen 5, 2 threads, 2026-12-07)")
    fig.tight_layout()
    return save(fig, output, "training_speed")


def figure_mpi(data, output):
    """Scaling over MPI ranks: two ranks against one, and the cost model for 10^9 particles."""
    two = read(data, "mpi_two_ranks.csv")
    model = read(data, "mpi_cost_model.csv")
    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 4.2), gridspec_kw={"width_ratios": [1.3, 1]})
    strong = two[two.kind != "weak"].reset_index(drop=True)
    middle = (strong.low + strong.high) / 2
    left.barh(range(len(strong)), middle, color="tab:blue", alpha=0.7,
              xerr=[middle - strong.low, strong.high - middle], capsize=3)
    left.axvline(2, color="black", lw=0.8, ls=":", label="ideal (2 ranks)")
    left.axvline(1, color="black", lw=0.8)
    for k, row in strong.iterrows():
        text = f"{row.low:.2f}" if row.low == row.high else f"{row.low:.2f}–{row.high:.2f}"
        left.text(row.high + 0.05, k, text, va="center", fontsize=8)
    weak = two[two.kind == "weak"]
    note = "; ".join(f"{w.workload.split(', ')[1]}: {w.low:.0%}" for w in weak.itertuples())
    left.set_yticks(range(len(strong)), strong.workload, fontsize=8)
    left.invert_yaxis()
    left.set_xlim(0, 3.1)
    left.set_xlabel(f"speed-up, 2 ranks × 1 thread over 1 rank\n(weak-scaling efficiency of the mesh sum, {note})",
                    fontsize=9)
    left.set_title("Measured on the 2-core machine", fontsize=10)
    left.legend(fontsize=8)

    parts = [("particles_s", "particle work"), ("ffts_s", "FFTs"), ("transposes_s", "transposes"),
             ("ghosts_halos_migration_s", "ghosts, halos, migration")]
    bottom = np.zeros(len(model))
    x = np.arange(len(model))
    for column, label in parts:
        right.bar(x, model[column], bottom=bottom, label=label)
        bottom += model[column]
    for k, row in model.iterrows():
        right.text(k, row.total_s + 0.3, f"{row.total_s:.2f} s\n{row.memory_per_rank_gb} GB", ha="center", fontsize=7)
    right.set_xticks(x, [f"{r.ranks}\n" + r.decomposition.replace(" ", "\n") for r in model.itertuples()],
                    fontsize=8)
    right.set_ylim(0, 23)
    right.set_xlabel("ranks")
    right.set_ylabel("predicted seconds per step")
    right.set_title("Cost model (not measured): N = 10⁹, 1024³ mesh, 3D", fontsize=10)
    right.legend(fontsize=7, loc="upper right")
    fig.suptitle("One system over MPI ranks")
    fig.tight_layout()
    return save(fig, output, "mpi")


def figure_torch_attention(data, output):
    """cpm.torch.KernelAttention against L: time and memory, causal and not, beside the einsum baseline."""
    table = read(data, "torch_kernel_attention.csv")
    fig, (time_axis, memory_axis) = plt.subplots(1, 2, figsize=(11, 4))
    lines = [("module", "tab:blue", "-", "KernelAttention, non-causal"),
             ("causal_module", "tab:blue", "--", "KernelAttention, causal"),
             ("einsum", "tab:grey", "-", "performer-pytorch einsum, non-causal"),
             ("causal_einsum", "tab:grey", "--", "performer-pytorch noncuda, causal")]
    for column, colour, style, label in lines:
        time_axis.plot(table.L, table[column + "_ms"], style, color=colour, marker="o", ms=4, label=label)
        memory_axis.plot(table.L, table[column + "_mib"], style, color=colour, marker="o", ms=4, label=label)
    reference = table.module_ms.iloc[0] * table.L / table.L.iloc[0]
    time_axis.plot(table.L, reference, ":", color="black", lw=1, label="slope 1")
    for axis, unit in ((time_axis, "forward + backward, ms"), (memory_axis, "peak memory growth, MiB")):
        axis.set_xscale("log", base=2)
        axis.set_yscale("log")
        axis.set_xlabel("sequence length L")
        axis.set_ylabel(unit)
    for row in table.itertuples():
        time_axis.annotate(f"{row.paired_causal_ratio:.2f}×", (row.L, row.causal_module_ms),
                           textcoords="offset points", xytext=(0, 7), ha="center", fontsize=7, color="tab:blue")
    time_axis.set_title("Time (labels: causal / non-causal, target ≤ 1.5×)", fontsize=10)
    memory_axis.set_title("Memory", fontsize=10)
    time_axis.legend(fontsize=7)
    fig.suptitle("One favor attention layer in PyTorch (m = 64, B = 2, 4 heads of 32, float32, 2 threads)")
    fig.tight_layout()
    return save(fig, output, "torch_attention")


FIGURES = {
    "convergence": figure_convergence,
    "ldp": figure_ldp,
    "quadrature": figure_quadrature,
    "recall": figure_recall,
    "recall_normalised": figure_recall_normalised,
    "classification": figure_classification,
    "kernel_learning": figure_kernel_learning,
    "training_speed": figure_training_speed,
    "mpi": figure_mpi,
    "torch_attention": figure_torch_attention,
}


def main(argv=None):
    global DPI
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", default=OUTPUT_DIR, help="folder for the PNG files (default docs/figures)")
    parser.add_argument("--data", default=DATA_DIR, help="folder of the CSV tables (default bench/data)")
    parser.add_argument("--only", nargs="+", choices=sorted(FIGURES), help="draw only these figures")
    parser.add_argument("--dpi", type=int, default=DPI, help=f"resolution of the PNG files (default {DPI})")
    arguments = parser.parse_args(argv)
    DPI = arguments.dpi
    os.makedirs(arguments.output, exist_ok=True)
    written = []
    for name in arguments.only or FIGURES:
        written.append(FIGURES[name](arguments.data, arguments.output))
        print(written[-1])
    return written


if __name__ == "__main__":
    main()
    sys.exit(0)
