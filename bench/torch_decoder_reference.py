#!/usr/bin/python3
"""PyTorch reference of cpm's causal decoder (transformer/transformer_decoder.hpp).

The same network, written independently with torch operations: token + learned position
embeddings (or none), pre-LayerNorm blocks x <- x + Proj(Attn(LN1(x))) and, if d_ff > 0,
x <- x + FC2(GELU_tanh(FC1(LN2(x)))), a final LayerNorm, a linear head onto the vocabulary at the
scored positions only (target >= 0) and the mean cross-entropy over them. With a convolution
kernel k > 0 it is the hybrid of Zoology's MQAR anchor (zoology/mixers/hybrid.py, Arora et al.
2023): the even layers mix the sequence with BaseConv (zoology/mixers/base_conv.py, copied below
with its torch.nn.Conv1d), x <- x + BaseConv(LN1(x)), the odd layers with attention. The attention is causal
softmax, or causal linear attention with the favor feature map (transformer/attention_features.hpp):
inputs scaled by s = d_head^(-1/4), phi(x) = exp(w^T x - |x|^2/2 - c) + eps with a per-query shift c
and one key shift shared by the whole sequence (both constants for the gradient), and
out_i = phi(q_i)^T S_i / (phi(q_i)^T z_i + delta), S_i, z_i the prefix sums over j <= i.

  --check IN OUT [IN OUT ...]  read a model, its particles and a batch written by the C++ test
                   (tests/transformer/torch_decoder_reference_test.cpp), write the scored logits,
                   the loss and every parameter gradient (float64), then the losses of a few
                   AdamW steps on the same batch and the parameters after them
  --bench ...      training tokens/s on random MQAR-like batches (forward + backward + AdamW step)
"""
import argparse
import math
import sys
import time

import torch
import torch.nn.functional as F

import torch_blas

DENOMINATOR_GUARD = 1e-12  # delta, kAttentionDenominatorGuard of transformer/linear_attention.hpp


class ShortConvolution(torch.nn.Module):
    """Zoology's ShortConvolution: a depthwise Conv1d padded by k - 1 on both sides, of which the
    first L outputs are kept, so that output t reads inputs t - k + 1 ... t."""

    def __init__(self, d_model, kernel_size, dtype):
        super().__init__()
        self.conv = torch.nn.Conv1d(d_model, d_model, kernel_size, groups=d_model,
                                    padding=kernel_size - 1, dtype=dtype)

    def forward(self, x):
        """x (B, L, C)."""
        length = x.size(1)
        return self.conv(x.transpose(1, 2))[..., :length].transpose(1, 2)


class BaseConv(torch.nn.Module):
    """Zoology's BaseConv with a short kernel and no activation: conv(u) * projection(u) + u."""

    def __init__(self, d_model, kernel_size, dtype):
        super().__init__()
        self.projection = torch.nn.Linear(d_model, d_model, dtype=dtype)
        self.conv = ShortConvolution(d_model, kernel_size, dtype)

    def forward(self, u):
        return self.conv(u) * self.projection(u) + u


class Decoder(torch.nn.Module):
    def __init__(self, vocabulary, max_length, d_model, heads, layers, d_ff, features, attention,
                 epsilon, qk_tied, linear_form="chunked", chunk=32, dtype=torch.float32,
                 conv_kernel=0, position_embedding=True):
        super().__init__()
        if attention not in ("softmax", "linear"):
            raise ValueError(f"attention must be softmax or linear, not {attention}")
        if linear_form not in ("chunked", "cumsum"):
            raise ValueError(f"linear form must be chunked or cumsum, not {linear_form}")
        self.C, self.H, self.layers, self.d_ff = d_model, heads, layers, d_ff
        self.attention, self.eps, self.tied = attention, epsilon, qk_tied
        self.linear_form, self.chunk = linear_form, chunk
        self.conv_kernel, self.position_embedding = conv_kernel, position_embedding
        R = (2 if qk_tied else 3) * d_model
        p = lambda *shape: torch.nn.Parameter(torch.zeros(*shape, dtype=dtype))
        # Names as cpm's tensors() with "." -> "_" (a ParameterDict key may not hold dots).
        self.params = torch.nn.ParameterDict()
        self.params["embedding_token"] = p(vocabulary, d_model)
        if position_embedding:
            self.params["embedding_position"] = p(max_length, d_model)
        self.mixers = torch.nn.ModuleDict()  # the BaseConv of each convolution layer, by str(l)
        for l in range(layers):
            shapes = [("ln1.weight", (d_model,)), ("ln1.bias", (d_model,))]
            if self.attention_layer(l):
                shapes += [("attention.qkv.weight", (R, d_model)), ("attention.qkv.bias", (R,)),
                           ("attention.proj.weight", (d_model, d_model)),
                           ("attention.proj.bias", (d_model,))]
            else:
                self.mixers[str(l)] = BaseConv(d_model, conv_kernel, dtype)
            if d_ff > 0:
                shapes += [("ln2.weight", (d_model,)), ("ln2.bias", (d_model,)),
                           ("mlp.fc.weight", (d_ff, d_model)), ("mlp.fc.bias", (d_ff,)),
                           ("mlp.proj.weight", (d_model, d_ff)), ("mlp.proj.bias", (d_model,))]
            for name, shape in shapes:
                self.params[f"layers_{l}_" + name.replace(".", "_")] = p(*shape)
        self.params["final_ln_weight"] = p(d_model)
        self.params["final_ln_bias"] = p(d_model)
        self.params["head_weight"] = p(vocabulary, d_model)
        self.params["head_bias"] = p(vocabulary)
        hs = d_model // heads
        self.register_buffer("particles", torch.randn(layers, heads, features, hs, dtype=dtype))
        self.masks = {}

    def attention_layer(self, l):
        """zoology/mixers/hybrid.py: layer l mixes with configs[l % 2], [BaseConv, attention]."""
        return self.conv_kernel == 0 or l % 2 == 1

    def w(self, name):
        return self.params[name.replace(".", "_")]

    def named_tensors(self):
        """Every parameter under its cpm name ("." -> "_"); a Conv1d weight keeps its (C, 1, k)
        shape, which flattens as cpm's (C, k)."""
        tensors = dict(self.params.items())
        for l, mixer in self.mixers.items():
            tensors[f"layers_{l}_conv_weight"] = mixer.conv.conv.weight
            tensors[f"layers_{l}_conv_bias"] = mixer.conv.conv.bias
            tensors[f"layers_{l}_conv_proj_weight"] = mixer.projection.weight
            tensors[f"layers_{l}_conv_proj_bias"] = mixer.projection.bias
        return tensors

    def upper(self, n, device):
        """(n, n) boolean mask of the entries j > i that causal attention excludes."""
        if n not in self.masks:
            self.masks[n] = torch.ones(n, n, dtype=torch.bool, device=device).triu(1)
        return self.masks[n]

    def favor(self, x, omega, shared):
        """phi (B, H, L, m) of x (B, H, L, hs), already scaled; omega (H, m, hs)."""
        u = x @ omega.transpose(-1, -2) - 0.5 * (x * x).sum(-1, keepdim=True)
        shift = u.amax(dim=(-2, -1), keepdim=True) if shared else u.amax(-1, keepdim=True)
        return torch.exp(u - shift.detach()) + self.eps

    def causal_linear(self, phi_q, phi_k, v):
        """out_i = phi_q_i^T S_i / (phi_q_i^T z_i + delta) for phi (B, H, L, m), v (B, H, L, hs).

        v gets a column of ones, so that the same products accumulate z beside S.

        "chunked" (the default, used by --bench) is the chunkwise-parallel form of causal linear
        attention (Hua et al. 2022, "Transformer quality in linear time"): per chunk of c tokens
        the masked (c x c) product A = phi_q phi_k^T covers the chunk's own keys, and an exclusive
        cumsum over the chunks' states phi_k^T v the earlier ones; everything is batched matmuls
        over (B, H, L/c) with O(L c + L/c m hs) memory. It is the fastest plain-PyTorch form we
        found: "cumsum" (the textbook cumsum of the outer products phi_k_j v_j^T) materialises a
        (B, H, L, m, hs + 1) tensor, 0.57 GB per layer at the benchmark's L = 1024, and ran about
        2x slower; a per-token loop would run L sequential small autograd steps. c = 32 was the
        fastest chunk on the benchmark model at L = 128 and 1024 (against 16, 64, 128). c >= L is
        the quadratic masked form, c = 1 the cumsum.
        """
        B, H, L, m = phi_q.shape
        v1 = torch.cat([v, torch.ones_like(v[..., :1])], -1)
        if self.linear_form == "cumsum":
            state = torch.cumsum(phi_k.unsqueeze(-1) * v1.unsqueeze(-2), dim=2)  # (B, H, L, m, hs + 1)
            nd = torch.einsum("bhlm,bhlmd->bhld", phi_q, state)
        else:
            c = min(self.chunk, L)
            n = -(-L // c)
            pad = n * c - L  # zero rows: padded keys add nothing, padded queries are cut off below
            if pad:
                phi_q, phi_k, v1 = (F.pad(t, (0, 0, 0, pad)) for t in (phi_q, phi_k, v1))
            fq = phi_q.reshape(B, H, n, c, m)
            fk = phi_k.reshape(B, H, n, c, m)
            vc = v1.reshape(B, H, n, c, v1.shape[-1])
            a = (fq @ fk.transpose(-1, -2)).masked_fill(self.upper(c, fq.device), 0.0)
            kv = fk.transpose(-1, -2) @ vc  # each chunk's sum of phi_k_j v_j^T (B, H, n, m, hs + 1)
            before = F.pad(torch.cumsum(kv[:, :, :-1], 2), (0, 0, 0, 0, 1, 0))  # state before the chunk
            nd = (a @ vc + fq @ before).reshape(B, H, n * c, -1)[:, :, :L]
        return nd[..., :-1] / (nd[..., -1:] + DENOMINATOR_GUARD)

    def attend(self, qkv, layer):
        B, L, _ = qkv.shape
        C, H = self.C, self.H
        hs = C // H
        heads = lambda t: t.reshape(B, L, H, hs).transpose(1, 2)
        q = heads(qkv[..., :C])
        k = q if self.tied else heads(qkv[..., C:2 * C])
        v = heads(qkv[..., -C:])
        if self.attention == "softmax":
            s = (q @ k.transpose(-1, -2) / math.sqrt(hs)).masked_fill(self.upper(L, q.device), -math.inf)
            out = torch.softmax(s, -1) @ v
        else:
            scale = hs ** -0.25
            omega = self.particles[layer]
            out = self.causal_linear(self.favor(q * scale, omega, False),
                                     self.favor(k * scale, omega, True), v)
        return out.transpose(1, 2).reshape(B, L, C)

    def forward(self, tokens, targets):
        """Scored logits (S, V) in (batch, position) order and the mean cross-entropy."""
        B, L = tokens.shape
        C = self.C
        x = F.embedding(tokens, self.w("embedding.token"))
        if self.position_embedding:
            x = x + self.w("embedding.position")[:L]
        for l in range(self.layers):
            q = f"layers.{l}."
            h = F.layer_norm(x, (C,), self.w(q + "ln1.weight"), self.w(q + "ln1.bias"), 1e-5)
            if self.attention_layer(l):
                qkv = F.linear(h, self.w(q + "attention.qkv.weight"),
                               self.w(q + "attention.qkv.bias"))
                x = x + F.linear(self.attend(qkv, l), self.w(q + "attention.proj.weight"),
                                 self.w(q + "attention.proj.bias"))
            else:
                x = x + self.mixers[str(l)](h)
            if self.d_ff > 0:
                h = F.layer_norm(x, (C,), self.w(q + "ln2.weight"), self.w(q + "ln2.bias"), 1e-5)
                h = F.gelu(F.linear(h, self.w(q + "mlp.fc.weight"), self.w(q + "mlp.fc.bias")),
                           approximate="tanh")
                x = x + F.linear(h, self.w(q + "mlp.proj.weight"), self.w(q + "mlp.proj.bias"))
        x = F.layer_norm(x, (C,), self.w("final_ln.weight"), self.w("final_ln.bias"), 1e-5)
        flat = targets.reshape(-1)
        scored = (flat >= 0).nonzero().squeeze(1)
        logits = F.linear(x.reshape(B * L, C).index_select(0, scored), self.w("head.weight"),
                          self.w("head.bias"))
        return logits, F.cross_entropy(logits, flat.index_select(0, scored))


def read_blocks(path):
    """Text format: one block per line, `name n v1 … vn`; `config key value` lines for sizes."""
    config, blocks = {}, {}
    with open(path) as f:
        for line in f:
            parts = line.split()
            if not parts:
                continue
            if parts[0] == "config":
                config[parts[1]] = parts[2]
            else:
                blocks[parts[0]] = [float(v) for v in parts[2:2 + int(parts[1])]]
    return config, blocks


def check(inp, out):
    config, blocks = read_blocks(inp)
    if config["attention"] == "linear" and config["feature_map"] != "favor":
        raise ValueError("the decoder reference implements the favor feature map only")
    ints = {k: int(config[k]) for k in ("vocabulary", "max_length", "d_model", "heads", "layers", "d_ff",
                                        "features", "batch", "length", "qk_tied", "chunk")}
    model = Decoder(ints["vocabulary"], ints["max_length"], ints["d_model"], ints["heads"], ints["layers"],
                    ints["d_ff"], ints["features"], config["attention"], float(config["epsilon"]),
                    bool(ints["qk_tied"]), config["linear_form"], ints["chunk"], dtype=torch.float64,
                    conv_kernel=int(config.get("conv_kernel", 0)),
                    position_embedding=bool(int(config.get("position_embedding", 1))))
    tensors = model.named_tensors()
    if set(tensors) != {name for name in blocks if name.startswith(("embedding_", "layers_", "final_", "head_"))}:
        raise ValueError("the C++ model's tensors differ from the reference's")
    with torch.no_grad():
        for name, p in tensors.items():
            p.copy_(torch.tensor(blocks[name], dtype=torch.float64).view_as(p))
        if config["attention"] == "linear":
            model.particles.copy_(torch.tensor(blocks["particles"], dtype=torch.float64).view_as(model.particles))
    B, L = ints["batch"], ints["length"]
    tokens = torch.tensor([int(v) for v in blocks["tokens"]]).view(B, L)
    targets = torch.tensor([int(v) for v in blocks["targets"]]).view(B, L)
    logits, loss = model(tokens, targets)
    loss.backward()
    with open(out, "w") as f:
        write = lambda name, t: f.write(name + " " + str(t.numel()) + " " +
                                        " ".join(repr(float(v)) for v in t.reshape(-1)) + "\n")
        write("logits", logits.detach())
        write("loss", loss.detach().reshape(1))
        for name, p in tensors.items():
            write("grad." + name, p.grad)
        # AdamW steps on the same batch, weight decay on the tensors cpm decays (decay.<name>).
        steps = int(config.get("steps", 0))
        if steps == 0:
            return
        groups = [{"params": [p for name, p in tensors.items() if blocks["decay." + name][0] == flag],
                   "weight_decay": float(config["weight_decay"]) if flag else 0.0} for flag in (0.0, 1.0)]
        optimiser = torch.optim.AdamW(groups, lr=float(config["learning_rate"]), betas=(0.9, 0.999),
                                      eps=1e-8)
        losses = []
        for _ in range(steps):
            optimiser.zero_grad(set_to_none=True)
            _, loss = model(tokens, targets)
            loss.backward()
            optimiser.step()
            losses.append(loss.detach())
        write("step_losses", torch.stack(losses))
        for name, p in tensors.items():
            write("after." + name, p.detach())


def mqar_batch(batch, length, vocabulary, pairs):
    """MQAR-like (learning/recall_tasks.hpp): pairs k_i v_i at [0, 2N), keys from [1, V/2), values
    from [V/2, V); every key queried once at a uniform even slot of [2N, L), whose target is its
    value; the other query-region tokens uniform on [0, V). N scored positions per sequence."""
    tokens = torch.randint(0, vocabulary, (batch, length))
    targets = torch.full((batch, length), -1, dtype=torch.long)
    n = pairs
    for b in range(batch):
        keys = torch.randperm(vocabulary // 2 - 1)[:n] + 1
        values = torch.randperm(vocabulary - vocabulary // 2)[:n] + vocabulary // 2
        tokens[b, 0:2 * n:2] = keys
        tokens[b, 1:2 * n:2] = values
        at = 2 * n + 2 * torch.randperm((length - 2 * n) // 2)[:n]
        tokens[b, at] = keys
        targets[b, at] = values
    return tokens, targets


def bench(args):
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    attention = "softmax" if args.attention == "softmax" else "linear"
    if attention == "linear" and args.attention != "kernel-favor":
        raise ValueError("--attention is softmax or kernel-favor")
    model = Decoder(args.vocabulary, args.length, args.d_model, args.heads, args.layers, args.d_ff,
                    args.features, attention, 1e-6, False, args.linear_form, args.chunk,
                    conv_kernel=args.conv_kernel, position_embedding=not args.no_position_embedding)
    with torch.no_grad():
        for name, p in model.params.items():
            if p.dim() == 2:
                p.normal_(0, 0.02)
            elif "ln" in name and name.endswith("weight"):
                p.fill_(1)
        for mixer in model.mixers.values():  # the Conv1d keeps PyTorch's default, as cpm's
            mixer.projection.weight.normal_(0, 0.02)
            mixer.projection.bias.zero_()
    # foreach: one multi-tensor update instead of a Python loop over the ~30 tensors.
    optimiser = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01, foreach=True)
    pairs = args.scored if args.scored > 0 else max(1, args.length // 16)
    tokens, targets = mqar_batch(args.batch, args.length, args.vocabulary, pairs)

    def step():
        optimiser.zero_grad(set_to_none=True)
        _, loss = model(tokens, targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimiser.step()

    for _ in range(args.warmup):
        step()
    start = time.perf_counter()
    for _ in range(args.steps):
        step()
    seconds = time.perf_counter() - start
    print(f"{args.batch * args.length * args.steps / seconds:.1f}\t{torch_blas.describe()}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", nargs="+", metavar="IN OUT")
    parser.add_argument("--bench", action="store_true")
    parser.add_argument("--length", type=int, default=128)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--d-model", dest="d_model", type=int, default=64)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--d-ff", dest="d_ff", type=int, default=128)
    parser.add_argument("--features", type=int, default=64)
    parser.add_argument("--vocabulary", type=int, default=8192)
    parser.add_argument("--scored", type=int, default=0, help="scored positions per sequence (0: L/16)")
    parser.add_argument("--attention", default="kernel-favor", help="softmax or kernel-favor")
    parser.add_argument("--linear-form", dest="linear_form", default="chunked", help="chunked or cumsum")
    parser.add_argument("--chunk", type=int, default=32, help="tokens per chunk of the chunked form")
    parser.add_argument("--conv-kernel", dest="conv_kernel", type=int, default=0,
                        help="k > 0: BaseConv with k taps in the even layers (0: attention only)")
    parser.add_argument("--no-position-embedding", dest="no_position_embedding", action="store_true")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=2)
    args = parser.parse_args()
    if args.check:
        if len(args.check) % 2:
            parser.error("--check takes pairs IN OUT")
        for i in range(0, len(args.check), 2):
            check(args.check[i], args.check[i + 1])
    elif args.bench:
        bench(args)
    else:
        parser.print_help()
        sys.exit(2)
