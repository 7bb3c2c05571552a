#!/usr/bin/python3
"""cpm.torch.KernelAttention against the sequence length: forward + backward of one layer (favor
features, float32), causal and not, beside a plain PyTorch einsum implementation of the same
attention in performer-pytorch's formulation, on the same projections, feature map and input.

    PYTHONPATH=build/python /usr/bin/python3 bench/torch_kernel_attention_bench.py [--quick]
        [--batch 2] [--heads 4] [--head-dim 32] [--features 64] [--lengths 1024,...,16384]
        [--repeats 5] [--threads 2] [--device cpu|cuda] [--no-memory]

The baseline (performer-pytorch, performer_pytorch.py): non-causal
    context = einsum('...nd,...ne->...de', k', v),  out = einsum('...nd,...de->...ne', q', context)
    * D_inv,  D_inv = 1 / (q' . sum_n k'_n + delta);
causal, causal_linear_attention_noncuda: the sequence in 128 pieces, each with the running sums
    k_cumsum = last + cumsum(k'),  context_cumsum = last + cumsum(einsum('...nd,...ne->...nde',
    k', v)),  out = einsum('...nde,...nd,...n->...ne', context_cumsum, q', D_inv),
whose (L, D_phi, d_head) outer products and their running sums are kept for the backward pass:
O(L D_phi d_head) memory. delta = 1e-12 is added to the denominator as KernelAttention adds it
(performer-pytorch adds its eps to every entry of k_cumsum instead), so the two outputs agree to
rounding; the bench prints their largest difference.

Time: median of --repeats forward + backward passes, the four (module and baseline, causal and
not) interleaved per L in one process, the order reversed every repeat, after one warm-up pass
each; causal / non-causal of the module also as the median of its adjacent pairs. Memory (CPU):
the growth of the peak resident set over one forward + backward pass (VmHWM after it, reset to
the resident set before it, less that), in a fresh subprocess per point (torch's CPU allocator is
malloc, which tracemalloc does not see); on CUDA torch.cuda.max_memory_allocated over the pass. Slopes are least-squares fits of log(time)
and log(memory) against log(L). The first line names the CPU's instruction set, torch's threads
and the BLAS its products ran on (tests/torch_blas.py; Debian's PyTorch takes whichever
libblas.so.3 the loader finds, LD_LIBRARY_PATH chooses another).
"""
import argparse
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DENOMINATOR_GUARD = 1e-12  # delta, as cpm.torch.kernel_attention
PERFORMER_CHUNKS = 128  # causal_linear_attention_noncuda(chunk_size=128): 128 pieces of L/128


# --- the baseline: performer-pytorch's linear attention on [B, H, N, .] -------------------------

def performer_linear_attention(q, k, v):
    """Non-causal: q, k [B, H, N, M] features, v [B, H, N, D] -> [B, H, N, D]."""
    k_sum = k.sum(dim=-2)
    d_inv = 1.0 / (torch.einsum("...nd,...d->...n", q, k_sum) + DENOMINATOR_GUARD)
    context = torch.einsum("...nd,...ne->...de", k, v)
    return torch.einsum("...nd,...de->...ne", q, context) * d_inv[..., None]


def performer_causal_linear_attention(q, k, v, chunks=PERFORMER_CHUNKS):
    """causal_linear_attention_noncuda: running sums of k' and of the outer products k' v^T."""
    last_k_cumsum, last_context_cumsum, outs = 0, 0, []
    for q, k, v in zip(*(t.chunk(chunks, dim=-2) for t in (q, k, v))):
        k_cumsum = last_k_cumsum + k.cumsum(dim=-2)
        d_inv = 1.0 / (torch.einsum("...nd,...nd->...n", q, k_cumsum) + DENOMINATOR_GUARD)
        context = torch.einsum("...nd,...ne->...nde", k, v)
        context_cumsum = last_context_cumsum + context.cumsum(dim=-3)
        outs.append(torch.einsum("...nde,...nd,...n->...ne", context_cumsum, q, d_inv))
        last_k_cumsum = k_cumsum[:, :, -1:]
        last_context_cumsum = context_cumsum[:, :, -1:]
    return torch.cat(outs, dim=-2)


def einsum_layer(attention, x):
    """The layer of `attention` (its projections and feature map) with the baseline's read-out."""
    b, t, _ = x.shape
    split = (b, t, attention.heads, attention.head_dim)
    q = attention.q_proj(x).reshape(split)
    k = attention.k_proj(x).reshape(split)
    v = attention.v_proj(x).reshape(split)
    phi = attention.feature_map
    phi_q, phi_k = phi.forward_queries(q), phi.forward_keys(k)
    heads_first = [y.permute(0, 2, 1, 3) for y in (phi_q, phi_k, v)]  # 'b n h d -> b h n d'
    core = performer_causal_linear_attention if attention.causal else performer_linear_attention
    out = core(*heads_first).permute(0, 2, 1, 3).reshape(b, t, attention.d_model)
    return attention.out_proj(out)


# --- one point -----------------------------------------------------------------------------

def make_layer(args, causal, device):
    import cpm.torch
    torch.manual_seed(1)
    phi = cpm.torch.ParticleFeatureMap(args.head_dim, args.features, heads=args.heads,
                                       map="favor", generator="orthogonal", seed=1)
    layer = cpm.torch.KernelAttention(args.heads * args.head_dim, args.heads, phi, causal=causal)
    return layer.to(device)


def make_input(args, length, device):
    generator = torch.Generator().manual_seed(length)
    d_model = args.heads * args.head_dim
    x = torch.randn(args.batch, length, d_model, generator=generator)
    grad = torch.randn(args.batch, length, d_model, generator=generator)
    return x.to(device), grad.to(device)


def step(layer, run, x, grad):
    """One forward + backward pass, the parameters' gradients cleared first."""
    layer.zero_grad(set_to_none=True)
    run(layer, x).backward(grad)


def synchronise(device):
    if device == "cuda":
        torch.cuda.synchronize()


def status_bytes(field):
    """VmRSS or VmHWM (the peak) of this process, from /proc/self/status."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"/proc/self/status has no {field}")


def reset_peak_rss():
    """Sets VmHWM to the current VmRSS (Linux >= 4.0); False where that is refused."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def memory_point(args):
    """Peak memory growth of one forward + backward pass (prints one JSON line)."""
    torch.set_num_threads(args.threads)
    device = args.device
    layer = make_layer(args, args.causal, device)
    run = RUNS[args.variant]
    # The first pass's one-off allocations are not the L's. The warm-up is short: the heap pages
    # it frees stay with the process and would be reused without showing as growth.
    small_x, small_grad = make_input(args, 64, device)
    step(layer, run, small_x, small_grad)
    x, grad = make_input(args, args.length, device)
    if device == "cuda":
        synchronise(device)
        before = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        step(layer, run, x, grad)
        synchronise(device)
        growth = torch.cuda.max_memory_allocated() - before
    else:
        # VmHWM, not ru_maxrss: a child's ru_maxrss starts from the peak of the parent it was
        # forked from (the parent here has run every earlier point). The peak is reset to the
        # present resident set first where Linux allows it; else it is the process's own peak,
        # which the warm-up at L = 64 keeps far below the pass here.
        reset_peak_rss()
        before = status_bytes("VmRSS")
        step(layer, run, x, grad)
        growth = status_bytes("VmHWM") - before
    print(json.dumps({"bytes": growth}))


def measured_memory(args, variant, causal, length):
    command = [sys.executable, os.path.abspath(__file__), "--memory-point", "--variant", variant,
               "--length", str(length), "--batch", str(args.batch), "--heads", str(args.heads),
               "--head-dim", str(args.head_dim), "--features", str(args.features),
               "--threads", str(args.threads), "--device", args.device]
    if causal:
        command.append("--causal")
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        return None, done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "failed"
    return json.loads(done.stdout.strip().splitlines()[-1])["bytes"], None


def timed(args, layer, run, x, grad):
    synchronise(args.device)
    start = time.perf_counter()
    step(layer, run, x, grad)
    synchronise(args.device)
    return time.perf_counter() - start


RUNS = {"module": lambda layer, x: layer(x), "einsum": einsum_layer}


# --- the report ---------------------------------------------------------------------------------

def slope(lengths, values):
    """Least-squares slope of log(value) against log(L)."""
    pairs = [(math.log(n), math.log(v)) for n, v in zip(lengths, values) if v and v > 0]
    if len(pairs) < 2:
        return float("nan")
    mx = statistics.fmean(p[0] for p in pairs)
    my = statistics.fmean(p[1] for p in pairs)
    return (sum((a - mx) * (b - my) for a, b in pairs) /
            sum((a - mx) ** 2 for a, _ in pairs))


def instruction_set():
    try:
        with open("/proc/cpuinfo") as f:
            text = f.read()
    except OSError:
        return "unknown", "unknown"
    model = next((line.split(":", 1)[1].strip() for line in text.splitlines()
                  if line.startswith("model name")), platform.processor() or "unknown")
    flags = next((line.split(":", 1)[1].split() for line in text.splitlines()
                  if line.startswith("flags")), [])
    isa = "AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else "below AVX2"
    return model, isa


def mebibytes(value):
    return "—" if value is None else f"{value / 2**20:.1f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="L = 1,024 to 4,096 and 3 repeats (a check, not a result)")
    parser.add_argument("--batch", type=int, default=2)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--head-dim", type=int, default=32)
    parser.add_argument("--features", type=int, default=64, help="m, favor's D_phi per head")
    parser.add_argument("--lengths", default="1024,2048,4096,8192,16384")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--no-memory", action="store_true", help="time only")
    parser.add_argument("--memory-point", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--variant", choices=sorted(RUNS), help=argparse.SUPPRESS)
    parser.add_argument("--length", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--causal", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.memory_point:
        return memory_point(args)
    if args.quick:
        args.lengths, args.repeats = "1024,2048,4096", min(args.repeats, 3)
    lengths = [int(n) for n in args.lengths.split(",")]
    torch.set_num_threads(args.threads)

    model, isa = instruction_set()
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    import torch_blas  # the BLAS torch's products ran on, as the other PyTorch benchmarks print it
    print(f"CPU: {model}, {isa}, {os.cpu_count()} cores; torch on "
          f"{torch.get_num_threads()} threads, device {args.device}"
          + (f" ({torch.cuda.get_device_name()})" if args.device == "cuda" else "")
          + f"; {torch_blas.describe()}")
    print(f"favor, float32, B = {args.batch}, {args.heads} heads, d_head = {args.head_dim}, "
          f"m = {args.features}, forward + backward; time: median of {args.repeats}; memory: "
          + ("torch.cuda.max_memory_allocated" if args.device == "cuda" else
             "peak RSS growth in a fresh process per point")
          + f"; load average {os.getloadavg()[0]:.2f} at the start", flush=True)

    layers = {causal: make_layer(args, causal, args.device) for causal in (False, True)}
    for causal, layer in layers.items():
        x, grad = make_input(args, 128, args.device)
        with torch.no_grad():
            difference = (layer(x) - einsum_layer(layer, x)).abs().max().item()
            size = layer(x).abs().max().item()
        print(f"{'causal' if causal else 'non-causal'}: |module − einsum| ≤ {difference:.2e} "
              f"(outputs up to {size:.2f}, L = 128)")

    # Per L, the four passes in one interleaved series, the order reversed every repeat; the two
    # modules always run next to each other, and their ratio is the median of those pairs.
    points = [(causal, v) for causal in (False, True) for v in RUNS]  # nc module, nc einsum, ...
    order = [(False, "module"), (True, "module"), (False, "einsum"), (True, "einsum")]
    results = {point: {"time": [], "memory": []} for point in points}
    paired = []
    for length in lengths:
        x, grad = make_input(args, length, args.device)
        for causal, v in points:
            step(layers[causal], RUNS[v], x, grad)  # warm-up at this length
        times = {point: [] for point in points}
        for repeat in range(args.repeats):
            for causal, v in (order if repeat % 2 == 0 else order[::-1]):
                times[(causal, v)].append(timed(args, layers[causal], RUNS[v], x, grad))
        del x, grad
        paired.append(statistics.median(
            c / n for c, n in zip(times[(True, "module")], times[(False, "module")])))
        for causal, v in points:
            results[(causal, v)]["time"].append(statistics.median(times[(causal, v)]))
            memory = None
            if not args.no_memory:
                memory, error = measured_memory(args, v, causal, length)
                if error:
                    print(f"  memory of {v} at L = {length}: {error}")
            results[(causal, v)]["memory"].append(memory)
        print(f"  L = {length} done, causal / non-causal module {paired[-1]:.2f}", flush=True)

    for causal in (False, True):
        rows = {v: results[(causal, v)] for v in RUNS}
        print(f"\n{'causal' if causal else 'non-causal'}:")
        print(f"{'L':>6} {'module ms':>10} {'einsum ms':>10} {'module/einsum':>14} "
              f"{'module MiB':>10} {'einsum MiB':>10} {'local slope t':>14}")
        for i, length in enumerate(lengths):
            t_mod, t_ein = rows["module"]["time"][i], rows["einsum"]["time"][i]
            local = "" if i == 0 else f"{slope(lengths[i - 1:i + 1], rows['module']['time'][i - 1:i + 1]):.2f}"
            print(f"{length:>6} {1e3 * t_mod:>10.1f} {1e3 * t_ein:>10.1f} {t_mod / t_ein:>14.2f} "
                  f"{mebibytes(rows['module']['memory'][i]):>10} "
                  f"{mebibytes(rows['einsum']['memory'][i]):>10} {local:>14}")
        for v in RUNS:
            memory_slope = ("" if args.no_memory else
                            f", memory {slope(lengths, rows[v]['memory']):.3f}")
            print(f"slope of log–log fit over L = {lengths[0]}–{lengths[-1]}, {v}: time "
                  f"{slope(lengths, rows[v]['time']):.3f}{memory_slope}")

    print(f"\ncausal / non-causal, time (memory); module paired: median of the adjacent pairs:")
    print(f"{'L':>6} {'module':>16} {'module paired':>14} {'einsum':>16}")
    for i, length in enumerate(lengths):
        cells = []
        for v in RUNS:
            t = results[(True, v)]["time"][i] / results[(False, v)]["time"][i]
            mc, mn = results[(True, v)]["memory"][i], results[(False, v)]["memory"][i]
            m = f" ({mc / mn:.2f})" if mc and mn else ""
            cells.append(f"{t:.2f}{m}")
        print(f"{length:>6} {cells[0]:>16} {paired[i]:>14.2f} {cells[1]:>16}")
    print("targets: module time and memory slopes <= 1.1, causal <= 1.5x non-causal")
    for causal in (False, True):
        rows = results[(causal, "module")]
        memory = "" if args.no_memory else f", memory {slope(lengths, rows['memory']):.3f}"
        print(f"  {'causal' if causal else 'non-causal'} module: time slope "
              f"{slope(lengths, rows['time']):.3f}{memory}")
    print(f"  causal / non-causal, module, paired: {min(paired):.2f}–{max(paired):.2f}")
    print(f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
