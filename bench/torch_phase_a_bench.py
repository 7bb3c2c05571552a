#!/usr/bin/python3
"""Phase A from Python against `cpm train`'s Phase A on heads of the same size: the seconds
`cpm train` records per head (phase_a.csv), cpm.attention_phase_a on the queries and keys that run
dumped (phase_a_tokens.h5), and the whole cpm.torch.phase_a on the PyTorch copy of the same model.

    PYTHONPATH=build/python /usr/bin/python3 bench/torch_phase_a_bench.py [--quick]
        [--build build] [--data rotten_tomatoes|tiny|<sst2-style folder>] [--repeats 3]

`cpm train` runs one warm-up epoch, then Phase A (target: the sequence labels) and no further
epoch ([phase_a] warmup_epochs = 1, write_tokens = true; [training] epochs = 0): kernel-favor,
d_model 64, 4 heads of 16, 2 layers, m = 64, up to --sequences Phase A sequences of up to 64
tokens, 50 steps of 0.05 (tolerance 0: every head runs all of them). Its phase_a.csv `seconds`
cover a head's dynamics alone (align_head_tokens: the potential, the drifts that set gamma, the
steps, the report); the collection of the tokens from the network before them is not timed.

Per head, then:
  C++       phase_a.csv's seconds;
  module    cpm.attention_phase_a on that head's dumped queries, keys and initial particles, with
            the same options, seed and replica (its particles must equal the run's final ones):
            the report's seconds (the same dynamics in the module) and the call's wall time
            (numpy in and out included);
  torch     cpm.torch.phase_a on the PyTorch copy of the run's model (cpm.torch.
            TransformerClassifier.from_model_file of model.h5, the particles put back to Phase
            A's start) on the same sequences, labels and options, batches of 32: per head its
            report's seconds and seconds_with_transfer, and the wall time of the whole call
            (forward passes with the recorders, the copy to float64 numpy, the dynamics, the
            particles written back) against the sum of the C++ heads. Its particles differ from
            the run's by what float32 keys computed in another order allow.
Alternating C++ run, module, torch in each of --repeats rounds; medians over the rounds.
"""
import argparse
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import pandas

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RT_FOLDER = os.path.join(ROOT, "..", "shared", "data", "rotten_tomatoes")

# Phase A's options, written once into the configuration and passed to the Python calls.
MODEL = dict(d_model=64, heads=4, layers=2, d_ff=128, features=64)
DYNAMICS = dict(steps=50, step=0.05, gamma=0.1, relative_gamma=True, radius=8.0, s=1.0,
                lambda_=0.01, beta=math.inf, tolerance=0.0)
SEED = 1


def write_tiny_sst2(folder, count, seed=1):
    """An SST-2-style folder (train.tsv, dev.tsv): short sentences of two classes, words of one
    cue list marking class 1 and of another class 0 (as tests/python/conftest.py's tiny_sst2)."""
    positive = ["good", "great", "fine", "warm", "bright", "lovely", "clever", "gripping"]
    negative = ["bad", "dull", "weak", "cold", "grey", "boring", "clumsy", "tedious"]
    filler = ["a", "film", "the", "story", "is", "and", "very", "plot", "acting", "with"]
    rng = np.random.default_rng(seed)
    os.makedirs(folder, exist_ok=True)
    for name, n in (("train.tsv", count), ("dev.tsv", max(32, count // 8))):
        with open(os.path.join(folder, name), "w") as out:
            out.write("sentence\tlabel\n")
            for i in range(n):
                label = i % 2
                words = list(rng.choice(filler, size=rng.integers(3, 9)))
                for _ in range(rng.integers(1, 3)):
                    words.insert(int(rng.integers(0, len(words) + 1)),
                                 str(rng.choice(positive if label else negative)))
                out.write(f"{' '.join(words)} \t{label}\n")


def train_config(data, dataset, output, sequences):
    d = DYNAMICS
    return f"""[data]
dataset = "{dataset}"
directory = "{data}"
max_length = 64
min_count = 1

[model]
d_model = {MODEL['d_model']}
heads = {MODEL['heads']}
layers = {MODEL['layers']}
d_ff = {MODEL['d_ff']}
features = {MODEL['features']}
dropout = 0.0
attention = "kernel-favor"
qk_tied = false

[training]
epochs = 0
batch_size = 32
warmup_steps = 10
seed = {SEED}

[phase_a]
warmup_epochs = 1
sequences = {sequences}
write_tokens = true
gamma = {d['gamma']}
relative_gamma = {str(d['relative_gamma']).lower()}
radius = {d['radius']}
tolerance = {d['tolerance']}

[phase_a.dynamics]
steps = {d['steps']}
step = {d['step']}
beta = "inf"

[phase_a.interaction]
kernel = "riesz"
s = {d['s']}
lambda = {d['lambda_']}

[evaluation]
robustness = false

[output]
directory = "{output}"
"""


def run_cpm_train(binary, config):
    """Runs the command; returns its wall time."""
    start = time.perf_counter()
    subprocess.run([binary, "train", config, "--overwrite", "--quiet"], check=True,
                   stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    return wall


def read_tokens(path):
    """The dumped heads {(layer, head): (queries, keys, initial, final)} and the sequences."""
    import h5py
    heads = {}
    with h5py.File(path, "r") as f:
        tokens, lengths, labels = f["tokens"][:], f["sequence_lengths"][:], f["labels"][:]
        for layer in range(MODEL["layers"]):
            for head in range(MODEL["heads"]):
                g = f[f"layer_{layer}/head_{head}"]
                heads[(layer, head)] = tuple(g[name][:] for name in (
                    "queries", "keys", "initial_particles", "final_particles"))
    return heads, tokens, lengths, labels


def module_phase_a(cpm, heads, lengths, labels):
    """cpm.attention_phase_a on every dumped head: {(l, h): (report seconds, wall seconds,
    largest |particles - final_particles| / max |final_particles|)}."""
    sequence = np.repeat(np.arange(len(lengths)), lengths)
    out = {}
    for (layer, head), (q, k, initial, final) in heads.items():
        start = time.perf_counter()
        particles, report = cpm.attention_phase_a(
            q, k, initial, sequence=sequence, target="labels", labels=labels, map="favor",
            seed=SEED, replica=layer * MODEL["heads"] + head, **DYNAMICS)
        wall = time.perf_counter() - start
        deviation = np.abs(particles - final).max() / np.abs(final).max()
        out[(layer, head)] = (report["seconds"], wall, deviation, report["steps"])
    return out


def torch_phase_a(cpm_torch, model_file, tokens, lengths, labels, initial, batch_size=32):
    """cpm.torch.phase_a on the PyTorch copy of the run's model (model.h5, whose particles are
    put back to where Phase A started): (wall seconds, its per-head table, largest
    |particles - final_particles| / max |final_particles|)."""
    import torch
    model = cpm_torch.TransformerClassifier.from_model_file(model_file)
    maps = [block.attention.feature_map for block in model.blocks]
    for layer, fmap in enumerate(maps):
        fmap.set_particles(torch.as_tensor(np.stack([initial[(layer, h)][0]
                                                     for h in range(MODEL["heads"])])))
    tokens = torch.as_tensor(tokens, dtype=torch.long)
    lengths = torch.as_tensor(lengths)
    mask = torch.arange(tokens.shape[1])[None, :] < lengths[:, None]
    batches, masks, batch_labels = [], [], []
    for start in range(0, len(tokens), batch_size):
        end = start + batch_size
        width = int(lengths[start:end].max())  # each batch as wide as its longest sequence
        batches.append((tokens[start:end, :width], lengths[start:end]))
        masks.append(mask[start:end, :width])
        batch_labels.append(torch.as_tensor(labels[start:end]))
    started = time.perf_counter()
    table = cpm_torch.phase_a(model, batches, target="labels", labels=batch_labels, masks=masks,
                              seed=SEED, progress=False, **DYNAMICS)
    wall = time.perf_counter() - started
    deviation = max(
        np.abs(fmap.omega.double().numpy()[h] - initial[(layer, h)][1]).max() /
        np.abs(initial[(layer, h)][1]).max()
        for layer, fmap in enumerate(maps) for h in range(MODEL["heads"]))
    return wall, table, deviation


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="a generated SST-2-style folder of 96 sentences, one round")
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--data", default=None,
                        help="rotten_tomatoes (../shared/data; the default), tiny (generated), "
                             "or an SST-2-style folder (train.tsv, dev.tsv)")
    parser.add_argument("--sequences", type=int, default=1000, help="Phase A sequences")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2, help="torch's threads")
    args = parser.parse_args()
    if args.quick:
        args.data, args.repeats = args.data or "tiny", 1
    args.data = args.data or "rotten_tomatoes"
    sys.path.insert(0, os.path.join(args.build, "python"))
    import torch
    import cpm
    import cpm.torch as cpm_torch
    torch.set_num_threads(args.threads)
    binary = os.path.join(args.build, "bin", "cpm")

    scratch = tempfile.mkdtemp(prefix="cpm-phase-a-bench-")
    try:
        if args.data == "tiny":
            folder, dataset = os.path.join(scratch, "sst2"), "sst2"
            write_tiny_sst2(folder, 96)
        elif args.data == "rotten_tomatoes":
            folder, dataset = os.path.realpath(RT_FOLDER), "rotten_tomatoes"
        else:
            folder, dataset = os.path.realpath(args.data), "sst2"
        output = os.path.join(scratch, "out")
        config = os.path.join(scratch, "train.toml")
        with open(config, "w") as f:
            f.write(train_config(folder, dataset, output, args.sequences))

        cxx, module, torch_heads, torch_wall, command_wall = [], [], [], [], []
        torch_deviation = []
        for repeat in range(args.repeats):
            command_wall.append(run_cpm_train(binary, config))
            csv = pandas.read_csv(os.path.join(output, "phase_a.csv"))
            cxx.append({(int(r.layer), int(r.head)): float(r.seconds) for r in csv.itertuples()})
            heads, tokens, lengths, labels = read_tokens(os.path.join(output, "phase_a_tokens.h5"))
            module.append(module_phase_a(cpm, heads, lengths, labels))
            initial = {key: (value[2], value[3]) for key, value in heads.items()}
            wall, table, deviation = torch_phase_a(cpm_torch, os.path.join(output, "model.h5"),
                                                   tokens, lengths, labels, initial)
            torch_wall.append(wall)
            torch_deviation.append(deviation)
            torch_heads.append({(int(r.layer), int(r.head)): (r.seconds, r.seconds_with_transfer,
                                                              int(r.steps))
                                for r in table.itertuples()})
            module_wall = sum(v[1] for v in module[-1].values())
            print(f"round {repeat}: cpm train {command_wall[-1]:.2f} s (whole command), Phase A "
                  f"heads {sum(cxx[-1].values()):.3f} s; module {module_wall:.3f} s; "
                  f"cpm.torch.phase_a {wall:.3f} s", flush=True)

        median = statistics.median
        keys = sorted(cxx[0])
        rows = len(heads[keys[0]][1])
        print(f"\n{len(lengths)} Phase A sequences, {rows} key rows per head "
              f"({rows / len(lengths):.1f} tokens a sequence), m = {MODEL['features']}, d_head = "
              f"{MODEL['d_model'] // MODEL['heads']}, {DYNAMICS['steps']} steps; data {args.data}; "
              f"torch {torch.__version__} on {torch.get_num_threads()} threads, OMP_NUM_THREADS = "
              f"{os.environ.get('OMP_NUM_THREADS', 'unset')}; median of {args.repeats}; load "
              f"average {os.getloadavg()[0]:.2f} at the end")
        worst = max(v[2] for m in module for v in m.values())
        print(f"particles against cpm train's final particles, largest difference relative to "
              f"the largest coordinate: module {worst:.1e}, torch {max(torch_deviation):.1e} "
              f"(float32 keys)")
        steps = {v[3] for m in module for v in m.values()} | {
            v[2] for t in torch_heads for v in t.values()}
        print(f"steps per head: {sorted(steps)}")
        print(f"{'layer':>5} {'head':>4} {'C++ s':>8} {'module s':>9} {'module wall':>12} "
              f"{'torch s':>8} {'torch+transfer':>15} {'module/C++':>11} {'torch+tr/C++':>13}")
        total = {name: 0.0 for name in ("cxx", "mod", "modwall", "torch", "torchtr")}
        for key in keys:
            c = median(r[key] for r in cxx)
            m = median(r[key][0] for r in module)
            mw = median(r[key][1] for r in module)
            t = median(r[key][0] for r in torch_heads)
            tt = median(r[key][1] for r in torch_heads)
            for name, value in zip(total, (c, m, mw, t, tt)):
                total[name] += value
            print(f"{key[0]:>5} {key[1]:>4} {c:>8.4f} {m:>9.4f} {mw:>12.4f} {t:>8.4f} {tt:>15.4f} "
                  f"{mw / c:>11.2f} {tt / c:>13.2f}")
        print(f"{'all':>10} {total['cxx']:>8.4f} {total['mod']:>9.4f} {total['modwall']:>12.4f} "
              f"{total['torch']:>8.4f} {total['torchtr']:>15.4f} "
              f"{total['modwall'] / total['cxx']:>11.2f} {total['torchtr'] / total['cxx']:>13.2f}")
        whole = median(torch_wall)
        print(f"whole cpm.torch.phase_a (forward passes, recorders, transfer, dynamics, "
              f"write-back): {whole:.3f} s = {whole / total['cxx']:.2f}× the C++ heads' seconds; "
              f"its dynamics alone {total['torch'] / total['cxx']:.2f}×; the module's dynamics "
              f"{total['mod'] / total['cxx']:.2f}×")
        print(f"whole cpm train (warm-up epoch, Phase A, evaluation, files): "
              f"{median(command_wall):.2f} s")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
