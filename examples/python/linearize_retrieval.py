#!/usr/bin/python3
"""A softmax Transformer trained on associative retrieval, then linearised three ways at equal
D_phi, each evaluated before and after a short fine-tune with its feature map frozen:

  favor      fixed favor particles (m orthogonal draws and their negatives), the bandwidth tau
             chosen on validation data from a small grid (cpm recall's vanilla-favor@softmax)
  phase-a    the same particles at the same tau, moved by Phase A on the softmax target, the
             teacher's own weights softmax(q.k / sqrt(d)) (cpm.torch.phase_a; cpm recall's
             kernel-favor@softmax)
  hedgehog   a trainable Hedgehog map [softmax(Wx); softmax(-Wx)] trained by attention transfer
             (Hedgehog, LoLCATs): the cross-entropy of the linear attention's weights against the
             softmax weights, every other weight frozen; its bandwidth chosen on validation

The task is the one of `cpm recall` (learning/recall_tasks.hpp): S keys, a permutation of S key
symbols, S values, a permutation of S value symbols, value i paired with key i, one query among
the keys; the answer is its value. The teacher: each pair one token (key + value embedding), the
query a last token (key embedding + a query marker), pre-LayerNorm attention layers (d_model 64,
one head, no MLP) and a linear read-out at the query's position. Every choice is made on
validation data (tau: the linearised network's validation cross-entropy; the fine-tune's state:
the best validation accuracy); the test split is read for the table only. Writes runs.csv and
summary.csv to --output. About 5 minutes on one core of the shared 2-core machine (S = 40,
3 seeds; --quick: S = 20, one seed, under a minute).

    PYTHONPATH=build/python /usr/bin/python3 examples/python/linearize_retrieval.py [--quick]
"""
import argparse
import copy
import math
import os
import time

parser = argparse.ArgumentParser(description="softmax attention linearised three ways")
parser.add_argument("--pairs", type=int, default=40, help="S, (key, value) pairs per sequence")
parser.add_argument("--features", type=int, default=128, help="D_phi of every linear map")
parser.add_argument("--d-model", type=int, default=64)
parser.add_argument("--heads", type=int, default=1)
parser.add_argument("--layers", type=int, default=1)
parser.add_argument("--seeds", default="1,2,3")
parser.add_argument("--train-examples", type=int, default=20000)
parser.add_argument("--validation-examples", type=int, default=256)
parser.add_argument("--test-examples", type=int, default=512)
parser.add_argument("--batch-size", type=int, default=32)
parser.add_argument("--steps", type=int, default=600, help="Adam steps of the softmax teacher")
parser.add_argument("--learning-rate", type=float, default=3e-3, help="the teacher's Adam rate")
parser.add_argument("--bandwidths", default="0.18,0.25,0.35,0.5,0.7,1", help="favor's tau grid")
parser.add_argument("--hedgehog-bandwidths", default="0.25,0.5,1")
parser.add_argument("--transfer-steps", type=int, default=150)
parser.add_argument("--transfer-learning-rate", type=float, default=1e-2)
parser.add_argument("--phase-a-sequences", type=int, default=32,
                    help="training sequences Phase A aligns on (every token a query)")
parser.add_argument("--finetune-steps", type=int, default=150)
parser.add_argument("--finetune-learning-rate", type=float, default=1e-3)
parser.add_argument("--output", default="out/linearize_retrieval")
parser.add_argument("--threads", type=int, default=1,
                    help="PyTorch threads (1: steady beside other processes on a shared machine)")
parser.add_argument("--quick", action="store_true",
                    help="S = 20, one seed, shorter training: under a minute")
args = parser.parse_args()
if args.quick:
    args.pairs, args.seeds, args.steps, args.train_examples = 20, "1", 400, 5000
    args.bandwidths, args.hedgehog_bandwidths = "0.35,0.5,0.7", "0.5,1"
    args.transfer_steps, args.finetune_steps, args.phase_a_sequences = 100, 100, 16
if args.features % 2:
    parser.error("--features: D_phi must be even (favor: m draws and their negatives; "
                 "hedgehog: 2 x rows)")
if args.d_model % args.heads:
    parser.error("--heads must divide --d-model")
# One OpenMP thread each for PyTorch and cpm's Phase A unless asked: on two cores shared with other
# processes, two spinning threads per library run several times slower than one.
os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
import numpy as np  # noqa: E402  (after OMP_NUM_THREADS)
import pandas  # noqa: E402
import torch  # noqa: E402
from torch import nn  # noqa: E402

import cpm  # noqa: E402
import cpm.torch  # noqa: E402
from cpm.torch.kernel_attention import attention_weights  # noqa: E402

torch.set_num_threads(args.threads)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
HEAD_DIM = args.d_model // args.heads


# ---- the task -----------------------------------------------------------------------------------
def retrieval_split(size, seed, split):
    """keys, values (size, S), query, target (size,): a split of its own stream per seed."""
    g = torch.Generator().manual_seed(1000 * seed + split)
    S = args.pairs
    keys = torch.argsort(torch.rand(size, S, generator=g), dim=1)    # an S-subset of S symbols
    values = torch.argsort(torch.rand(size, S, generator=g), dim=1)  # distinct values
    pick = torch.randint(S, (size,), generator=g)
    rows = torch.arange(size)
    return [t.to(device) for t in (keys, values, keys[rows, pick], values[rows, pick])]


# ---- the model ----------------------------------------------------------------------------------
class SwitchableAttention(cpm.torch.KernelAttention):
    """KernelAttention whose projections also give exact softmax attention. mode "softmax": the
    teacher, softmax_j(q_i.k_j / sqrt(d)); "linear": KernelAttention on its feature map;
    "transfer": the teacher's output, and the cross-entropy of the linear weights against the
    softmax weights appended to transfer_losses (the attention-transfer loss). keep_weights:
    each pass appends its weights (B, H, T, T) to `kept`."""

    def __init__(self, *a, **k):
        super().__init__(*a, **k)
        self.mode, self.transfer_losses, self.keep_weights, self.kept = "softmax", [], False, []

    def attend(self, q, k, v, mask=None, return_weights=False):
        if self.mode == "linear":
            if not self.keep_weights:
                return super().attend(q, k, v, mask, return_weights)
            out, weights = super().attend(q, k, v, mask, return_weights=True)
            self.kept.append(weights.detach())
            return (out, weights) if return_weights else out
        scores = torch.einsum("bihd,bjhd->bhij", q, k) / math.sqrt(q.shape[-1])
        weights = torch.softmax(scores, dim=-1)  # (B, H, T, T); no padding in this task
        out = torch.einsum("bhij,bjhd->bihd", weights, v)
        if self.keep_weights:
            self.kept.append(weights.detach())
        if self.mode == "transfer":
            phi_q = self.feature_map.forward_queries(q)
            phi_k = self.feature_map.forward_keys(k)
            linear = attention_weights(phi_q, phi_k)
            self.transfer_losses.append(
                -(weights.detach() * torch.log(linear + 1e-12)).sum(-1).mean())
        return (out, weights) if return_weights else out


class Block(nn.Module):
    """Pre-LayerNorm attention, x + attention(LN(x)); no MLP (as Zoology's recall models)."""

    def __init__(self, d_model, heads, feature_map):
        super().__init__()
        self.ln = nn.LayerNorm(d_model)
        self.attention = SwitchableAttention(d_model, heads, feature_map)

    def forward(self, x):
        return x + self.attention(self.ln(x))


class RetrievalTransformer(nn.Module):
    """tokens: S pairs E_k[key_j] + E_v[value_j] and the query E_k[query] + marker; logits over
    the S value symbols at the query's position."""

    def __init__(self):
        super().__init__()
        d, S = args.d_model, args.pairs
        self.key_embedding, self.value_embedding = nn.Embedding(S, d), nn.Embedding(S, d)
        self.query_marker = nn.Parameter(torch.randn(d))
        self.blocks = nn.ModuleList(  # the maps: placeholders until linearised() replaces them
            Block(d, args.heads, favor_map(1.0, layer, seed=1)) for layer in range(args.layers))
        self.final_ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, S)
        # W_K starts as W_Q (they train apart): the query's own key scores highest from the first
        # step, and softmax leaves the plateau of uniform weights in a few hundred steps, where
        # with independent draws some seeds stay on it for more than 800.
        for attention in self.attentions():
            attention.k_proj.load_state_dict(attention.q_proj.state_dict())

    def forward(self, keys, values, query):
        pairs = self.key_embedding(keys) + self.value_embedding(values)      # (B, S, d)
        asked = self.key_embedding(query) + self.query_marker                 # (B, d)
        x = torch.cat([pairs, asked[:, None]], 1)                             # (B, S + 1, d)
        for block in self.blocks:
            x = block(x)
        return self.head(self.final_ln(x[:, -1]))

    def attentions(self):
        return [block.attention for block in self.blocks]


def favor_map(tau, layer, seed):
    """favor with D_phi = features: m = features / 2 orthogonal draws and their negatives, each
    head from its own replica (as cpm recall's antithetic particles)."""
    m = args.features // 2
    blocks = []
    for h in range(args.heads):
        w = cpm.generate_features("orthogonal", m, HEAD_DIM, seed=seed,
                                  replica=layer * args.heads + h)
        blocks.append(np.concatenate([w, -w]))
    return cpm.torch.ParticleFeatureMap.from_particles_array(np.stack(blocks), map="favor",
                                                             bandwidth=tau)


def hedgehog_map(tau, layer, seed):
    """A trainable Hedgehog map, features / 2 rows per head (D_phi = features)."""
    return cpm.torch.ParticleFeatureMap(HEAD_DIM, args.features // 2, heads=args.heads,
                                        map="hedgehog", seed=seed, layer=layer, bandwidth=tau,
                                        trainable=True)


def linearised(teacher, make_map, mode="linear"):
    """A copy of the teacher whose attention runs on the maps make_map(layer) gives."""
    student = copy.deepcopy(teacher)
    for layer, attention in enumerate(student.attentions()):
        attention.feature_map = make_map(layer).to(device)
        attention.mode = mode
    return student


# ---- training and evaluation --------------------------------------------------------------------
def batches(data, steps, seed):
    """`steps` minibatches drawn from the fixed training set."""
    g = torch.Generator().manual_seed(seed)
    n = data[0].shape[0]
    for _ in range(steps):
        rows = torch.randint(n, (args.batch_size,), generator=g).to(device)
        yield [t[rows] for t in data]


@torch.no_grad()
def evaluate(model, data):
    """(accuracy, cross-entropy) over a split."""
    model.eval()
    right, loss, n = 0, 0.0, data[0].shape[0]
    for first in range(0, n, 256):
        keys, values, query, target = (t[first:first + 256] for t in data)
        logits = model(keys, values, query)
        right += (logits.argmax(1) == target).sum().item()
        loss += nn.functional.cross_entropy(logits, target, reduction="sum").item()
    model.train()
    return right / n, loss / n


def train(model, data, validation, steps, rate, seed, checks=5):
    """Adam on every parameter that requires a gradient, the state at the best validation
    accuracy (then loss) of `checks` evaluations and of the start kept, as cpm recall keeps its
    best validated state. Returns (tokens/s, the step of the state kept)."""
    parameters = [p for p in model.parameters() if p.requires_grad]
    optimiser = torch.optim.Adam(parameters, lr=rate)
    every = max(1, steps // checks)
    accuracy, loss = evaluate(model, validation)
    best, best_step, best_state = (accuracy, -loss), 0, copy.deepcopy(model.state_dict())
    tokens, started = 0, time.perf_counter()
    for step, (keys, values, query, target) in enumerate(batches(data, steps, seed), 1):
        loss = nn.functional.cross_entropy(model(keys, values, query), target)
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        tokens += keys.numel() + query.numel()
        if step % every == 0 or step == steps:
            accuracy, val_loss = evaluate(model, validation)
            if (accuracy, -val_loss) >= best:
                best, best_step = (accuracy, -val_loss), step
                best_state = copy.deepcopy(model.state_dict())
    seconds = time.perf_counter() - started
    model.load_state_dict(best_state)
    return tokens / seconds, best_step


def transfer(student, data, seed):
    """Attention transfer: only the Hedgehog maps train, on the cross-entropy of their weights
    against the softmax weights of the (frozen) teacher's queries and keys."""
    maps = [a.feature_map for a in student.attentions()]
    for p in student.parameters():
        p.requires_grad_(False)
    for m in maps:
        m.omega.requires_grad_(True)
    optimiser = torch.optim.Adam([m.omega for m in maps], lr=args.transfer_learning_rate)
    for keys, values, query, _ in batches(data, args.transfer_steps, seed):
        for a in student.attentions():
            a.transfer_losses.clear()
        student(keys, values, query)
        loss = sum(sum(a.transfer_losses) for a in student.attentions())
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
    for p in student.parameters():
        p.requires_grad_(True)
    for a in student.attentions():
        a.feature_map.freeze()
        a.mode, a.transfer_losses = "linear", []


@torch.no_grad()
def query_kl(teacher, student, data):
    """Mean KL(softmax || linear) of the query's attention weights in the last layer."""
    rows = []
    for model in (teacher, student):
        attention = model.attentions()[-1]
        attention.keep_weights = True
        evaluate(model, data)
        attention.keep_weights = False
        rows.append(torch.cat(attention.kept)[:, :, -1])  # (n, H, T): the query's row
        attention.kept = []
    p, q = rows
    return (p * (torch.log(p + 1e-12) - torch.log(q + 1e-12))).sum(-1).mean().item()


# ---- the study ----------------------------------------------------------------------------------
def run_seed(seed):
    train_data = retrieval_split(args.train_examples, seed, 0)
    validation = retrieval_split(args.validation_examples, seed, 1)
    test = retrieval_split(args.test_examples, seed, 2)
    rows = []

    def record(arm, model, stage, tau, seconds, kl=math.nan, step=0):
        v, _ = evaluate(model, validation)
        t, _ = evaluate(model, test)
        rows.append({"seed": seed, "arm": arm, "stage": stage, "tau": tau, "validation": v,
                     "test": t, "query_kl": kl, "best_step": step, "seconds": seconds})

    torch.manual_seed(seed)
    started = time.perf_counter()
    teacher = RetrievalTransformer().to(device)
    speed, step = train(teacher, train_data, validation, args.steps, args.learning_rate, seed)
    record("softmax (teacher)", teacher, "trained", math.nan, time.perf_counter() - started,
           step=step)
    print(f"seed {seed}: softmax teacher, {args.steps} steps at {speed:,.0f} tokens/s: "
          f"validation {rows[-1]['validation']:.3f}, test {rows[-1]['test']:.3f}", flush=True)

    def finetuned(arm, student, tau, spent):
        started = time.perf_counter()
        kl = query_kl(teacher, student, validation)
        record(arm, student, "linearised", tau, spent, kl)
        _, step = train(student, train_data, validation, args.finetune_steps,
                        args.finetune_learning_rate, seed + 100)
        record(arm, student, "fine-tuned", tau, spent + time.perf_counter() - started,
               query_kl(teacher, student, validation), step)
        r0, r1 = rows[-2], rows[-1]
        print(f"seed {seed}: {arm:>8} tau {tau:g}: KL {r0['query_kl']:.3f}, test "
              f"{r0['test']:.3f} -> {r1['test']:.3f} after fine-tuning (state of step {step}), "
              f"{r1['seconds']:.0f} s", flush=True)

    # (a) fixed favor: tau by the validation cross-entropy of the linearised teacher (smoother than
    # its accuracy, which sits near chance on every tau when S is large)
    started = time.perf_counter()
    grid = []
    for tau in map(float, args.bandwidths.split(",")):
        student = linearised(teacher, lambda layer: favor_map(tau, layer, seed))
        _, loss = evaluate(student, validation)
        grid.append((loss, tau, student))
    _, tau, student = min(grid, key=lambda g: g[0])
    finetuned("favor", student, tau, time.perf_counter() - started)

    # (b) Phase A on the softmax target, the same particles and tau
    started = time.perf_counter()
    student = linearised(teacher, lambda layer: favor_map(tau, layer, seed))
    n = args.phase_a_sequences
    inputs = [tuple(t[first:first + 32] for t in train_data[:3]) for first in range(0, n, 32)]
    table = cpm.torch.phase_a(student, inputs, target="softmax", seed=seed, sequences=n,
                              progress=False)
    print(f"seed {seed}: phase A, KL(p || a) " + ", ".join(
        f"{r.alignment_before:.3f} -> {r.alignment_after:.3f}" for r in table.itertuples()) +
        f" in {table.seconds.sum():.1f} s", flush=True)
    finetuned("phase-a", student, tau, time.perf_counter() - started)

    # (c) Hedgehog by attention transfer: its bandwidth by the validation cross-entropy after it
    started = time.perf_counter()
    grid = []
    for tau_h in map(float, args.hedgehog_bandwidths.split(",")):
        torch.manual_seed(seed)
        student = linearised(teacher, lambda layer: hedgehog_map(tau_h, layer, seed), "transfer")
        transfer(student, train_data, seed + 200)
        _, loss = evaluate(student, validation)
        grid.append((loss, tau_h, student))
    _, tau_h, student = min(grid, key=lambda g: g[0])
    finetuned("hedgehog", student, tau_h, time.perf_counter() - started)
    return rows


def main():
    print(f"device {device}, {torch.get_num_threads()} threads; associative retrieval S = "
          f"{args.pairs}, d_model {args.d_model}, {args.heads} head(s), {args.layers} layer(s), "
          f"D_phi = {args.features}")
    started = time.perf_counter()
    runs = pandas.DataFrame([r for seed in map(int, args.seeds.split(",")) for r in run_seed(seed)])
    os.makedirs(args.output, exist_ok=True)
    runs.to_csv(os.path.join(args.output, "runs.csv"), index=False)
    summary = runs.groupby(["arm", "stage"], sort=False).agg(
        tau=("tau", lambda t: ",".join("—" if math.isnan(x) else f"{x:g}" for x in t)),
        validation=("validation", "mean"), test_mean=("test", "mean"), test_std=("test", "std"),
        query_kl=("query_kl", "mean"), seeds=("seed", "count")).reset_index()
    summary.to_csv(os.path.join(args.output, "summary.csv"), index=False)
    print(f"\ntest accuracy, mean ± std over {summary.seeds.max()} seed(s) (tau per seed; "
          f"query_kl: KL(softmax || linear) of the query's weights, validation)")
    print("| arm | stage | tau | validation | test | query KL |\n|---|---|---|---|---|---|")
    for r in summary.itertuples():
        std = "" if math.isnan(r.test_std) else f" ± {r.test_std:.3f}"
        kl = "—" if math.isnan(r.query_kl) else f"{r.query_kl:.3f}"
        print(f"| {r.arm} | {r.stage} | {r.tau} | {r.validation:.3f} | {r.test_mean:.3f}{std} | "
              f"{kl} |")
    print(f"\nwrote {args.output}/runs.csv and summary.csv; {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
