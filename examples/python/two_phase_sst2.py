#!/usr/bin/python3
"""The two phases on a PyTorch model: a small Transformer classifier with kernel attention
(cpm.torch.KernelAttention on favor particles) on SST-2, trained with the paired protocol of
`cpm train` (docs/guide/train.md, "Learned against random particles, paired"):

  warm-up   E epochs with the initial particles (Phase B with Omega fixed), then a checkpoint;
  kernel    from the checkpoint: Phase A (cpm.torch.phase_a, the C++ dynamics, target "labels":
            each head's key features align with their sentence's class; or "softmax": with the
            head's own softmax weights), the particles frozen, then E' epochs;
  vanilla   from the same checkpoint, the same E' epochs with the same batches and dropout masks,
            its particles left as drawn: the control that says what Phase A changed.

Prints the device, tokens/s, Phase A's table (a row per layer and head) and, per arm, accuracy,
ECE (15 bins), log loss and Brier score on the dev split. The data come from cpm's data folder
(CPM_DATA_DIR, else the build's default); without SST-2 there it stops with exit code 2.
About 2 minutes on one core of the shared 2-core machine (--quick: about 30 s; --seeds 1,2,3:
about 6 minutes).

    PYTHONPATH=build/python /usr/bin/python3 examples/python/two_phase_sst2.py [--quick]
"""
import argparse
import copy
import math
import os
import sys
import time

parser = argparse.ArgumentParser(description="Phase A and Phase B on a PyTorch classifier")
parser.add_argument("--train-limit", type=int, default=4000, help="training sentences (0: all)")
parser.add_argument("--max-length", type=int, default=64)
parser.add_argument("--d-model", type=int, default=64)
parser.add_argument("--heads", type=int, default=4)
parser.add_argument("--layers", type=int, default=2)
parser.add_argument("--d-ff", type=int, default=128)
parser.add_argument("--features", type=int, default=64, help="m favor particles per head")
parser.add_argument("--dropout", type=float, default=0.1)
parser.add_argument("--batch-size", type=int, default=32)
parser.add_argument("--learning-rate", type=float, default=1e-3)
parser.add_argument("--warmup-epochs", type=int, default=1, help="E: before the checkpoint")
parser.add_argument("--epochs", type=int, default=1, help="E': each arm after the checkpoint")
parser.add_argument("--phase-a-sequences", type=int, default=256)
parser.add_argument("--targets", default="labels,softmax",
                    help="Phase A targets, one kernel arm each (labels, softmax)")
parser.add_argument("--seeds", default="1", help="seeds, e.g. 1,2,3: the table gives mean ± std")
parser.add_argument("--threads", type=int, default=1,
                    help="PyTorch threads (1: steady beside other processes on a shared machine)")
parser.add_argument("--quick", action="store_true", help="1,000 sentences, 64 Phase A sequences")
args = parser.parse_args()
if args.quick:
    args.train_limit, args.phase_a_sequences, args.targets = 1000, 64, "labels"
# One OpenMP thread each for PyTorch and cpm's Phase A unless asked: on two cores shared with other
# processes, two spinning threads per library run several times slower than one.
os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
import torch  # noqa: E402  (after OMP_NUM_THREADS)
from torch import nn  # noqa: E402

import cpm  # noqa: E402
import cpm.torch  # noqa: E402

torch.set_num_threads(args.threads)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

# Phase A as examples/train_paired.toml runs it (target "labels"): normalised alignment of queries
# and keys, relative gamma, the ball of radius 2 sqrt(d_head), the tolerance, a repulsion at a
# quarter of the alignment drift (Riesz s = 1, cpm.attention_phase_a's; the toml's mollified
# kernel is not among its options). The softmax target takes cpm recall's defaults (FIRE).
LABELS_OPTIONS = dict(queries_and_keys=True, normalised=True, gamma=0.1, relative_gamma=True,
                      radius=2 * math.sqrt(args.d_model // args.heads), tolerance=1e-3,
                      check_every=10, repulsion_fraction=0.25, steps=300, step=0.05)


# ---- the model ----------------------------------------------------------------------------------
class Block(nn.Module):
    """Pre-LayerNorm: x + Dropout(Attention(LN(x))), then x + Dropout(MLP(LN(x)))."""

    def __init__(self, layer, seed):
        super().__init__()
        d, heads = args.d_model, args.heads
        phi = cpm.torch.ParticleFeatureMap(d // heads, args.features, heads=heads, map="favor",
                                           seed=seed, layer=layer)
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.attention = cpm.torch.KernelAttention(d, heads, phi, dropout=args.dropout)
        self.mlp = nn.Sequential(nn.Linear(d, args.d_ff), nn.GELU(approximate="tanh"),
                                 nn.Linear(args.d_ff, d), nn.Dropout(args.dropout))

    def forward(self, x, mask):
        x = x + self.attention(self.ln1(x), mask=mask)
        return x + self.mlp(self.ln2(x))


class Classifier(nn.Module):
    """Token + position embeddings, pre-LayerNorm blocks, mean over the real tokens, a linear
    head; weights N(0, 0.02^2) and zero biases, as cpm train starts its classifier."""

    def __init__(self, vocabulary, classes, length, seed):
        super().__init__()
        d = args.d_model
        self.token_embedding, self.position_embedding = nn.Embedding(vocabulary, d), \
            nn.Embedding(length, d)
        self.dropout = nn.Dropout(args.dropout)
        self.blocks = nn.ModuleList(Block(layer, seed) for layer in range(args.layers))
        self.final_ln = nn.LayerNorm(d)
        self.classifier = nn.Linear(d, classes)
        for module in self.modules():
            if isinstance(module, (nn.Linear, nn.Embedding)):
                nn.init.normal_(module.weight, std=0.02)
            if isinstance(module, nn.Linear):
                nn.init.zeros_(module.bias)

    def forward(self, tokens, mask):
        """tokens (B, T), mask (B, T) True at real tokens -> logits (B, classes)."""
        positions = torch.arange(tokens.shape[1], device=tokens.device)
        x = self.dropout(self.token_embedding(tokens) + self.position_embedding(positions))
        for block in self.blocks:
            x = block(x, mask)
        weights = mask.to(x.dtype)[..., None]
        return self.classifier((self.final_ln(x) * weights).sum(1) / weights.sum(1))


# ---- data, training, metrics --------------------------------------------------------------------
def load():
    folder = os.path.join(cpm.data_folder(), "sst2")
    if not os.path.isdir(folder):
        print(f"two_phase_sst2.py: no SST-2 data folder at {folder} (set CPM_DATA_DIR to the "
              f"folder that holds sst2/)", file=sys.stderr)
        sys.exit(2)
    try:
        return cpm.load_classification("sst2", max_length=args.max_length,
                                       train_limit=args.train_limit)
    except ValueError as error:
        print(f"two_phase_sst2.py: {error}", file=sys.stderr)
        sys.exit(2)


def batch(split, rows):
    """(tokens, mask, labels) of the given rows, cut to their longest sentence."""
    lengths = split["lengths"][rows]
    length = int(lengths.max())
    tokens = split["tokens"][rows, :length].long()
    mask = torch.arange(length)[None] < lengths[:, None]
    return tokens.to(device), mask.to(device), split["labels"][rows].long().to(device)


def epochs(split, count, seed):
    """The minibatches of `count` epochs, shuffled by `seed`."""
    g = torch.Generator().manual_seed(seed)
    n = split["labels"].shape[0]
    for _ in range(count):
        order = torch.randperm(n, generator=g)
        for first in range(0, n, args.batch_size):
            yield batch(split, order[first:first + args.batch_size])


def train(model, split, count, seed):
    """AdamW (weight decay 0.01), 10 warm-up steps, cosine decay to 0.1 of the rate, clipping
    at 1: cpm train's Phase B. Returns (real tokens, seconds)."""
    steps = count * math.ceil(split["labels"].shape[0] / args.batch_size)
    optimiser = torch.optim.AdamW(model.parameters(), lr=args.learning_rate, weight_decay=0.01)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimiser, lambda s: min(1.0, (s + 1) / 10) * (
        0.1 + 0.45 * (1 + math.cos(math.pi * min(1.0, s / max(1, steps))))))
    torch.manual_seed(seed)  # the dropout masks
    model.train()
    tokens, started = 0, time.perf_counter()
    for x, mask, y in epochs(split, count, seed):
        loss = nn.functional.cross_entropy(model(x, mask), y)
        optimiser.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimiser.step()
        schedule.step()
        tokens += int(mask.sum())
    return tokens, time.perf_counter() - started


@torch.no_grad()
def metrics(model, split):
    """Accuracy, ECE (15 equal-width bins of the top probability), log loss and Brier score, as
    cpm train computes them (learning/classification_metrics.cpp: with two classes the Brier score
    is (p_1 - y)^2)."""
    model.eval()
    n = split["labels"].shape[0]
    logits = [model(*batch(split, torch.arange(i, min(i + 256, n)))[:2]) for i in range(0, n, 256)]
    probabilities = torch.softmax(torch.cat(logits).double(), 1).cpu()
    labels = split["labels"].long()
    confidence, predicted = probabilities.max(1)
    right = (predicted == labels).double()
    bins = torch.clamp((confidence * 15).long(), max=14)
    ece = sum((bins == b).sum() / n * abs(right[bins == b].mean() - confidence[bins == b].mean())
              for b in range(15) if (bins == b).any())
    onehot = nn.functional.one_hot(labels, probabilities.shape[1]).double()
    squares = (probabilities - onehot) ** 2
    brier = squares[:, 1] if probabilities.shape[1] == 2 else squares.sum(1)
    return {"accuracy": right.mean().item(), "ece": float(ece),
            "log_loss": -torch.log(probabilities[torch.arange(n), labels].clamp(min=1e-15))
            .mean().item(), "brier": brier.mean().item()}


# ---- the protocol -------------------------------------------------------------------------------
def run_seed(seed, data, train_split, dev):
    """The warm-up, the checkpoint and every arm from it: ({arm: metrics}, {target: Phase A
    table}, training tokens, training seconds)."""
    torch.manual_seed(seed)
    model = Classifier(data["vocabulary_size"], data["classes"], args.max_length, seed).to(device)
    tokens, seconds = train(model, train_split, args.warmup_epochs, seed)
    print(f"seed {seed}: warm-up, {args.warmup_epochs} epoch(s) at {tokens / seconds:,.0f} "
          f"tokens/s", flush=True)
    checkpoint = copy.deepcopy(model.state_dict())
    results = {"checkpoint (after warm-up)": metrics(model, dev)}
    rows = torch.randperm(len(train_split["labels"]), generator=torch.Generator().manual_seed(seed))
    rows = rows[:args.phase_a_sequences]
    chunks = [batch(train_split, rows[i:i + 32]) for i in range(0, len(rows), 32)]
    tables = {}
    for arm in ARMS:
        arm_model = copy.deepcopy(model)
        arm_model.load_state_dict(checkpoint)
        phase_a_seconds = 0.0
        if arm != "vanilla":
            target = arm[len("kernel ("):-1]
            started = time.perf_counter()
            tables[target] = cpm.torch.phase_a(
                arm_model, [c[:2] for c in chunks], target=target, masks=[c[1] for c in chunks],
                labels=[c[2] for c in chunks] if target == "labels" else None, seed=seed,
                progress=False, **(LABELS_OPTIONS if target == "labels" else {}))
            phase_a_seconds = time.perf_counter() - started
        arm_tokens, arm_seconds = train(arm_model, train_split, args.epochs, seed + 1)
        tokens, seconds = tokens + arm_tokens, seconds + arm_seconds
        results[arm] = {**metrics(arm_model, dev), "phase_a_s": phase_a_seconds,
                        "train_s": arm_seconds}
        print(f"seed {seed}: {arm}, {args.epochs} epoch(s) after the checkpoint at "
              f"{arm_tokens / arm_seconds:,.0f} tokens/s: accuracy "
              f"{results[arm]['accuracy']:.4f}", flush=True)
    return results, tables, tokens, seconds


ARMS = ["vanilla"] + [f"kernel ({t})" for t in args.targets.split(",")]
METRICS = ("accuracy", "ece", "log_loss", "brier")


def main():
    started = time.perf_counter()
    data = load()
    train_split = {k: torch.as_tensor(v) for k, v in data["train"].items()}
    dev = {k: torch.as_tensor(v) for k, v in data["evaluation"].items()}
    seeds = [int(s) for s in args.seeds.split(",")]
    print(f"device {device}, {torch.get_num_threads()} thread(s); SST-2: "
          f"{len(train_split['labels'])} training sentences, {len(dev['labels'])} dev, vocabulary "
          f"{data['vocabulary_size']}; d_model {args.d_model}, {args.heads} heads, {args.layers} "
          f"layers, m = {args.features} favor particles per head; seeds {args.seeds}")
    runs, tokens, seconds = {}, 0, 0.0
    for seed in seeds:
        results, tables, seed_tokens, seed_seconds = run_seed(seed, data, train_split, dev)
        runs[seed], tokens, seconds = results, tokens + seed_tokens, seconds + seed_seconds
        for target, table in tables.items():
            print(f"\nseed {seed}: Phase A, target '{target}' (a row per layer and head)")
            columns = ["layer", "head", "alignment_before", "alignment_after", "displacement",
                       "steps", "seconds"]
            print(table[columns].to_string(index=False, float_format=lambda x: f"{x:.4g}"))

    def cell(values, sign=""):
        mean = sum(values) / len(values)
        if len(values) == 1:
            return f"{mean:{sign}.4f}"
        std = math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))
        return f"{mean:{sign}.4f} ± {std:.4f}"

    print(f"\nSST-2 dev ({len(dev['labels'])} sentences), "
          f"{'seed' if len(seeds) == 1 else 'mean ± std over seeds'} {args.seeds}")
    print("| arm | accuracy | ECE (15 bins) | log loss | Brier | Phase A s | training s |")
    print("|---|---|---|---|---|---|---|")
    for arm in ["checkpoint (after warm-up)"] + ARMS:
        r = [runs[seed][arm] for seed in seeds]
        phase_a = f"{sum(x['phase_a_s'] for x in r) / len(r):.1f}" if arm in ARMS[1:] else "—"
        training = f"{sum(x['train_s'] for x in r) / len(r):.1f}" if arm in ARMS else "—"
        times = f"{phase_a} | {training}"
        print(f"| {arm} | " + " | ".join(cell([x[k] for x in r]) for k in METRICS) +
              f" | {times} |")
    print("\nwhat Phase A changed (kernel − vanilla: the same checkpoint, batches and dropout)")
    print("| arms | Δ accuracy | Δ ECE | Δ log loss | Δ Brier |\n|---|---|---|---|---|")
    for arm in ARMS[1:]:
        print(f"| {arm} − vanilla | " + " | ".join(
            cell([runs[s][arm][k] - runs[s]["vanilla"][k] for s in seeds], "+") for k in METRICS) +
            " |")
    print(f"\ndevice {device}: training {tokens / seconds:,.0f} tokens/s overall; run time "
          f"{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
