#!/usr/bin/python3
"""PyTorch references of cpm's Transformer classifier and causal decoder, written independently
with torch operations (--model classifier|decoder).

Both: token + learned position embeddings, pre-LayerNorm blocks x <- x + Proj(Attn(LN1(x))) and,
if d_ff > 0, x <- x + FC2(GELU_tanh(FC1(LN2(x)))), a final LayerNorm. Attention is softmax, or
linear with a feature map (transformer/attention_feature_maps.hpp) on inputs scaled by
s = d_head^(-1/4); favor is phi(x) = exp(w^T x - |x|^2/2 - c) + eps with a per-query shift c and
one key shift shared by the whole sequence (both constants for the gradient), and
out_i = phi(q_i)^T S / (phi(q_i)^T z + delta), S = sum_j phi(k_j) v_j^T, z = sum_j phi(k_j).

classifier (transformer/transformer_classifier.hpp): attention over each sequence's length
(favor, porf-softplus or softmaxfeat feature maps), mean pooling over the non-padding tokens, a
linear classifier and the mean cross-entropy.

decoder (transformer/transformer_decoder.hpp): causal attention (favor only; S_i, z_i the prefix
sums over j <= i), position embedding optional, a linear head onto the vocabulary at the scored
positions only (target >= 0) and the mean cross-entropy over them. With a convolution kernel
k > 0 it is the hybrid of Zoology's MQAR anchor (zoology/mixers/hybrid.py, Arora et al. 2023): the
even layers mix the sequence with BaseConv (zoology/mixers/base_conv.py, copied below with its
torch.nn.Conv1d), x <- x + BaseConv(LN1(x)), the odd layers with attention.

  --check IN OUT [IN OUT ...]  read a model, its particles and a batch written by the C++ test
                   (tests/transformer/torch_reference_test.cpp, torch_decoder_reference_test.cpp),
                   write the logits, the loss and every parameter gradient (float64), then, if
                   the input asks for them (config steps), the losses of a few AdamW steps on the
                   same batch and the parameters after them
  --serve ...      time training steps on random data (forward + backward + AdamW step; the
                   classifier on full-length sequences, the decoder on MQAR-like batches) on
                   request: prints what torch runs on, then for every line "n" read from stdin
                   runs one untimed step and n timed ones and prints their tokens/s
                   (bench/torch_anchor.hpp alternates these blocks with cpm's steps); ends at end
                   of input
"""
import argparse
import math
import sys
import time

import torch
import torch.nn.functional as F

import torch_blas

DENOMINATOR_GUARD = 1e-12  # delta, kAttentionDenominatorGuard of transformer/linear_attention.hpp
LAYER_NORM_EPSILON = 1e-5


class Transformer(torch.nn.Module):
    """The parts both models share. Parameters are named as cpm's tensors() with "." -> "_" (a
    ParameterDict key may not hold dots), and registered in cpm's order."""

    head = ""  # the name of the output layer's tensors

    def __init__(self, vocabulary, max_length, d_model, heads, layers, d_ff, features, attention,
                 feature_map, epsilon, qk_tied, position_embedding, dtype):
        super().__init__()
        if attention not in ("softmax", "linear"):
            raise ValueError(f"attention must be softmax or linear, not {attention}")
        self.C, self.H, self.layers, self.d_ff, self.m = d_model, heads, layers, d_ff, features
        self.attention, self.map, self.eps, self.tied = attention, feature_map, epsilon, qk_tied
        self.position_embedding, self.dtype = position_embedding, dtype
        self.params = torch.nn.ParameterDict()
        self.add("embedding.token", vocabulary, d_model)
        if position_embedding:
            self.add("embedding.position", max_length, d_model)

    def add(self, name, *shape):
        self.params[name.replace(".", "_")] = torch.nn.Parameter(torch.zeros(*shape, dtype=self.dtype))

    def add_block(self, l, attention=True):
        """Layer l's LN1, its attention's tensors (unless it mixes otherwise), LN2 and MLP."""
        C, R = self.C, (2 if self.tied else 3) * self.C
        shapes = [("ln1.weight", (C,)), ("ln1.bias", (C,))]
        if attention:
            shapes += [("attention.qkv.weight", (R, C)), ("attention.qkv.bias", (R,)),
                       ("attention.proj.weight", (C, C)), ("attention.proj.bias", (C,))]
        if self.d_ff > 0:
            shapes += [("ln2.weight", (C,)), ("ln2.bias", (C,)),
                       ("mlp.fc.weight", (self.d_ff, C)), ("mlp.fc.bias", (self.d_ff,)),
                       ("mlp.proj.weight", (C, self.d_ff)), ("mlp.proj.bias", (C,))]
        for name, shape in shapes:
            self.add(f"layers.{l}." + name, *shape)

    def add_head(self, outputs):
        """The final LayerNorm, the head onto `outputs` and the particles (layers, H, m, hs)."""
        self.add("final_ln.weight", self.C)
        self.add("final_ln.bias", self.C)
        self.add(self.head + ".weight", outputs, self.C)
        self.add(self.head + ".bias", outputs)
        hs = self.C // self.H
        self.register_buffer("particles", torch.randn(self.layers, self.H, self.m, hs, dtype=self.dtype))

    def w(self, name):
        return self.params[name.replace(".", "_")]

    def named_tensors(self):
        """Every parameter under its cpm name ("." -> "_")."""
        return dict(self.params.items())

    def initialise(self):
        """The benchmark's start: weight matrices N(0, 0.02), LayerNorm gains 1, the rest 0."""
        with torch.no_grad():
            for name, p in self.params.items():
                if p.dim() == 2:
                    p.normal_(0, 0.02)
                elif "ln" in name and name.endswith("weight"):
                    p.fill_(1)

    def layer_norm(self, x, name):
        return F.layer_norm(x, (self.C,), self.w(name + ".weight"), self.w(name + ".bias"),
                            LAYER_NORM_EPSILON)

    def encode(self, tokens, mix):
        """(B, L, C) after the final LayerNorm; mix(h, l) is layer l's sequence mixer."""
        L = tokens.shape[1]
        x = F.embedding(tokens, self.w("embedding.token"))
        if self.position_embedding:
            x = x + self.w("embedding.position")[:L]
        for l in range(self.layers):
            q = f"layers.{l}."
            x = x + mix(self.layer_norm(x, q + "ln1"), l)
            if self.d_ff > 0:
                h = self.layer_norm(x, q + "ln2")
                h = F.gelu(F.linear(h, self.w(q + "mlp.fc.weight"), self.w(q + "mlp.fc.bias")),
                           approximate="tanh")
                x = x + F.linear(h, self.w(q + "mlp.proj.weight"), self.w(q + "mlp.proj.bias"))
        return self.layer_norm(x, "final_ln")

    @staticmethod
    def project(x, omega):
        """w^T x (B, H, L, m) for x (B, H, L, hs), omega (H, m, hs), as a matmul; the classifier
        takes an einsum. The two round differently in the last bit: each model keeps the form its
        C++ test was set against, so that the reference's outputs do not move."""
        return x @ omega.transpose(-1, -2)

    def features(self, x, omega, valid=None, keys=False):
        """phi (B, H, L, m) of x (B, H, L, hs), already scaled; omega (H, m, hs); valid
        (B, 1, L, 1) marks the keys that are not padding (None: all)."""
        u = self.project(x, omega)
        if self.map == "favor":
            u = u - 0.5 * (x * x).sum(-1, keepdim=True)
            if not keys:
                shift = u.amax(-1, keepdim=True)
            elif valid is None:
                shift = u.amax(dim=(-2, -1), keepdim=True)
            else:
                shift = u.masked_fill(~valid, -math.inf).amax(dim=(-2, -1), keepdim=True)
            phi = torch.exp(u - shift.detach()) + self.eps
        elif self.map == "porf-softplus":
            phi = F.softplus(u)
        else:
            phi = torch.softmax(u, -1) + self.eps
        return phi if valid is None else phi * valid

    def self_attention(self, h, l, excluded, valid=None):
        """Proj(Attn(h)) of layer l for h (B, L, C): softmax attention leaves out the scores where
        `excluded` (broadcast onto (B, H, L, L)), linear attention the keys outside `valid`
        (B, 1, L, 1) and mixes the values by the model's linear_mix."""
        B, L, C = h.shape
        q = f"layers.{l}."
        qkv = F.linear(h, self.w(q + "attention.qkv.weight"), self.w(q + "attention.qkv.bias"))
        hs = C // self.H
        heads = lambda t: t.reshape(B, L, self.H, hs).transpose(1, 2)
        queries = heads(qkv[..., :C])
        keys = queries if self.tied else heads(qkv[..., C:2 * C])
        values = heads(qkv[..., -C:])
        if self.attention == "softmax":
            s = (queries @ keys.transpose(-1, -2) / math.sqrt(hs)).masked_fill(excluded, -math.inf)
            out = torch.softmax(s, -1) @ values
        else:
            scale = hs ** -0.25
            omega = self.particles[l]
            out = self.linear_mix(self.features(queries * scale, omega),
                                  self.features(keys * scale, omega, valid, keys=True), values)
        out = out.transpose(1, 2).reshape(B, L, C)
        return F.linear(out, self.w(q + "attention.proj.weight"), self.w(q + "attention.proj.bias"))


class Classifier(Transformer):
    """Mean pooling over the non-padding tokens, a linear classifier, mean cross-entropy."""

    head = "classifier"
    default_vocabulary = 10000

    def __init__(self, vocabulary, max_length, d_model, heads, layers, d_ff, classes, features,
                 attention, feature_map, epsilon, qk_tied, dtype=torch.float32):
        super().__init__(vocabulary, max_length, d_model, heads, layers, d_ff, features, attention,
                         feature_map, epsilon, qk_tied, True, dtype)
        for l in range(layers):
            self.add_block(l)
        self.add_head(classes)

    @classmethod
    def from_config(cls, config):
        n = lambda key: int(config[key])
        return cls(n("vocabulary"), n("max_length"), n("d_model"), n("heads"), n("layers"), n("d_ff"),
                   n("classes"), n("features"), config["attention"], config["feature_map"],
                   float(config["epsilon"]), bool(n("qk_tied")), dtype=torch.float64)

    @classmethod
    def for_bench(cls, args, attention, feature_map):
        return cls(args.vocabulary, args.length, args.d_model, args.heads, args.layers, args.d_ff, 2,
                   args.features, attention, feature_map, 1e-6, False)

    @staticmethod
    def read_batch(config, blocks):
        B, L = int(config["batch"]), int(config["length"])
        return (torch.tensor([int(v) for v in blocks["tokens"]]).view(B, L),
                torch.tensor([int(v) for v in blocks["lengths"]]),
                torch.tensor([int(v) for v in blocks["labels"]]))

    @staticmethod
    def random_batch(args):
        """Full-length sequences of tokens from [3, V), two classes."""
        return (torch.randint(3, args.vocabulary, (args.batch, args.length)),
                torch.full((args.batch,), args.length),
                torch.randint(0, 2, (args.batch,)))

    @staticmethod
    def project(x, omega):
        return torch.einsum("bhld,hmd->bhlm", x, omega)

    def linear_mix(self, phi_q, phi_k, v):
        kv = phi_k.transpose(-1, -2) @ v  # (B, H, m, hs)
        z = phi_k.sum(-2)  # (B, H, m)
        return (phi_q @ kv) / ((phi_q * z[:, :, None, :]).sum(-1, keepdim=True) + DENOMINATOR_GUARD)

    def forward(self, tokens, lengths, labels):
        """Logits (B, classes) and the mean cross-entropy."""
        L = tokens.shape[1]
        valid = torch.arange(L)[None, :] < lengths[:, None]  # (B, L)
        x = self.encode(tokens, lambda h, l: self.self_attention(h, l, ~valid[:, None, None, :],
                                                                  valid[:, None, :, None]))
        weights = valid.to(x.dtype)
        pooled = (x * weights[..., None]).sum(1) / lengths[:, None].to(x.dtype)
        logits = F.linear(pooled, self.w("classifier.weight"), self.w("classifier.bias"))
        return logits, F.cross_entropy(logits, labels)


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


class Decoder(Transformer):
    """Causal attention (or BaseConv in the even layers), a vocabulary head at the scored
    positions, mean cross-entropy over them."""

    head = "head"
    default_vocabulary = 8192

    def __init__(self, vocabulary, max_length, d_model, heads, layers, d_ff, features, attention,
                 feature_map, epsilon, qk_tied, linear_form="chunked", chunk=32, dtype=torch.float32,
                 conv_kernel=0, position_embedding=True):
        super().__init__(vocabulary, max_length, d_model, heads, layers, d_ff, features, attention,
                         feature_map, epsilon, qk_tied, position_embedding, dtype)
        if attention == "linear" and feature_map != "favor":
            raise ValueError("the decoder reference implements the favor feature map only")
        if linear_form not in ("chunked", "cumsum"):
            raise ValueError(f"linear form must be chunked or cumsum, not {linear_form}")
        self.linear_form, self.chunk, self.conv_kernel = linear_form, chunk, conv_kernel
        self.mixers = torch.nn.ModuleDict()  # the BaseConv of each convolution layer, by str(l)
        for l in range(layers):
            if not self.attention_layer(l):
                self.mixers[str(l)] = BaseConv(d_model, conv_kernel, dtype)
            self.add_block(l, self.attention_layer(l))
        self.add_head(vocabulary)
        self.masks = {}

    @classmethod
    def from_config(cls, config):
        n = lambda key: int(config[key])
        return cls(n("vocabulary"), n("max_length"), n("d_model"), n("heads"), n("layers"), n("d_ff"),
                   n("features"), config["attention"], config["feature_map"], float(config["epsilon"]),
                   bool(n("qk_tied")), config["linear_form"], n("chunk"), dtype=torch.float64,
                   conv_kernel=int(config.get("conv_kernel", 0)),
                   position_embedding=bool(int(config.get("position_embedding", 1))))

    @classmethod
    def for_bench(cls, args, attention, feature_map):
        return cls(args.vocabulary, args.length, args.d_model, args.heads, args.layers, args.d_ff,
                   args.features, attention, feature_map, 1e-6, False, args.linear_form, args.chunk,
                   conv_kernel=args.conv_kernel, position_embedding=not args.no_position_embedding)

    @staticmethod
    def read_batch(config, blocks):
        B, L = int(config["batch"]), int(config["length"])
        return (torch.tensor([int(v) for v in blocks["tokens"]]).view(B, L),
                torch.tensor([int(v) for v in blocks["targets"]]).view(B, L))

    @staticmethod
    def random_batch(args):
        """MQAR-like (learning/recall_tasks.hpp): pairs k_i v_i at [0, 2N), keys from [1, V/2),
        values from [V/2, V); every key queried once at a uniform even slot of [2N, L), whose
        target is its value; the other query-region tokens uniform on [0, V). N scored positions
        per sequence (--scored, 0: L/16)."""
        batch, length, vocabulary = args.batch, args.length, args.vocabulary
        n = args.scored if args.scored > 0 else max(1, length // 16)
        tokens = torch.randint(0, vocabulary, (batch, length))
        targets = torch.full((batch, length), -1, dtype=torch.long)
        for b in range(batch):
            keys = torch.randperm(vocabulary // 2 - 1)[:n] + 1
            values = torch.randperm(vocabulary - vocabulary // 2)[:n] + vocabulary // 2
            tokens[b, 0:2 * n:2] = keys
            tokens[b, 1:2 * n:2] = values
            at = 2 * n + 2 * torch.randperm((length - 2 * n) // 2)[:n]
            tokens[b, at] = keys
            targets[b, at] = values
        return tokens, targets

    def attention_layer(self, l):
        """zoology/mixers/hybrid.py: layer l mixes with configs[l % 2], [BaseConv, attention]."""
        return self.conv_kernel == 0 or l % 2 == 1

    def named_tensors(self):
        """Every parameter under its cpm name ("." -> "_"); a Conv1d weight keeps its (C, 1, k)
        shape, which flattens as cpm's (C, k)."""
        tensors = super().named_tensors()
        for l, mixer in self.mixers.items():
            tensors[f"layers_{l}_conv_weight"] = mixer.conv.conv.weight
            tensors[f"layers_{l}_conv_bias"] = mixer.conv.conv.bias
            tensors[f"layers_{l}_conv_proj_weight"] = mixer.projection.weight
            tensors[f"layers_{l}_conv_proj_bias"] = mixer.projection.bias
        return tensors

    def initialise(self):
        super().initialise()
        with torch.no_grad():
            for mixer in self.mixers.values():  # the Conv1d keeps PyTorch's default, as cpm's
                mixer.projection.weight.normal_(0, 0.02)
                mixer.projection.bias.zero_()

    def upper(self, n, device):
        """(n, n) boolean mask of the entries j > i that causal attention excludes."""
        if n not in self.masks:
            self.masks[n] = torch.ones(n, n, dtype=torch.bool, device=device).triu(1)
        return self.masks[n]

    def linear_mix(self, phi_q, phi_k, v):
        """out_i = phi_q_i^T S_i / (phi_q_i^T z_i + delta) for phi (B, H, L, m), v (B, H, L, hs).

        v gets a column of ones, so that the same products accumulate z beside S.

        "chunked" (the default, used by --serve) is the chunkwise-parallel form of causal linear
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

    def forward(self, tokens, targets):
        """Scored logits (S, V) in (batch, position) order and the mean cross-entropy."""
        B, L = tokens.shape
        causal = self.upper(L, tokens.device)
        mix = lambda h, l: (self.self_attention(h, l, causal) if self.attention_layer(l)
                            else self.mixers[str(l)](h))
        x = self.encode(tokens, mix)
        flat = targets.reshape(-1)
        scored = (flat >= 0).nonzero().squeeze(1)
        logits = F.linear(x.reshape(B * L, self.C).index_select(0, scored), self.w("head.weight"),
                          self.w("head.bias"))
        return logits, F.cross_entropy(logits, flat.index_select(0, scored))


MODELS = {"classifier": Classifier, "decoder": Decoder}


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


def check(model_class, inp, out):
    config, blocks = read_blocks(inp)
    model = model_class.from_config(config)
    tensors = model.named_tensors()
    prefixes = ("embedding_", "layers_", "final_", model.head + "_")
    if set(tensors) != {name for name in blocks if name.startswith(prefixes)}:
        raise ValueError("the C++ model's tensors differ from the reference's")
    with torch.no_grad():
        for name, p in tensors.items():
            p.copy_(torch.tensor(blocks[name], dtype=torch.float64).view_as(p))
        if config["attention"] == "linear":
            model.particles.copy_(torch.tensor(blocks["particles"], dtype=torch.float64).view_as(model.particles))
    batch = model_class.read_batch(config, blocks)
    logits, loss = model(*batch)
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
            _, loss = model(*batch)
            loss.backward()
            optimiser.step()
            losses.append(loss.detach())
        write("step_losses", torch.stack(losses))
        for name, p in tensors.items():
            write("after." + name, p.detach())


def serve(model_class, args):
    """Prints `what torch ran on`, then answers each stdin line `n` with the tokens/s of n steps
    after one untimed step (the first step after a pause pays for the caches the other process
    took, bench/training_comparison.hpp)."""
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    attention, feature_map = "softmax", "favor"
    if args.attention != "softmax":
        kind, _, feature_map = args.attention.partition("-")
        if kind != "kernel":
            raise ValueError("--attention is softmax or kernel-<feature map>")
        attention = "linear"
    model = model_class.for_bench(args, attention, feature_map)
    model.initialise()
    # foreach: one multi-tensor update instead of a Python loop over the ~30 tensors.
    optimiser = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01, foreach=True)
    batch = model_class.random_batch(args)

    def step():
        optimiser.zero_grad(set_to_none=True)
        _, loss = model(*batch)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimiser.step()

    for _ in range(args.warmup):
        step()
    print(torch_blas.describe(), flush=True)
    for line in sys.stdin:
        steps = int(line)
        step()
        start = time.perf_counter()
        for _ in range(steps):
            step()
        seconds = time.perf_counter() - start
        print(f"{args.batch * args.length * steps / seconds:.1f}", flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", choices=MODELS, required=True)
    parser.add_argument("--check", nargs="+", metavar="IN OUT")
    parser.add_argument("--serve", action="store_true")
    parser.add_argument("--length", type=int, default=128)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--d-model", dest="d_model", type=int, default=64)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--d-ff", dest="d_ff", type=int, default=128)
    parser.add_argument("--features", type=int, default=64)
    parser.add_argument("--vocabulary", type=int, help="default 10000 (classifier), 8192 (decoder)")
    parser.add_argument("--attention", default="kernel-favor",
                        help="softmax or kernel-<map>, map favor (either model), porf-softplus or "
                             "softmaxfeat (classifier)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--warmup", type=int, default=2)
    decoder = parser.add_argument_group("decoder only")
    decoder.add_argument("--scored", type=int, default=0, help="scored positions per sequence (0: L/16)")
    decoder.add_argument("--linear-form", dest="linear_form", default="chunked", help="chunked or cumsum")
    decoder.add_argument("--chunk", type=int, default=32, help="tokens per chunk of the chunked form")
    decoder.add_argument("--conv-kernel", dest="conv_kernel", type=int, default=0,
                         help="k > 0: BaseConv with k taps in the even layers (0: attention only)")
    decoder.add_argument("--no-position-embedding", dest="no_position_embedding", action="store_true")
    args = parser.parse_args()
    model_class = MODELS[args.model]
    if args.vocabulary is None:
        args.vocabulary = model_class.default_vocabulary
    if args.check:
        if len(args.check) % 2:
            parser.error("--check takes pairs IN OUT")
        for i in range(0, len(args.check), 2):
            check(model_class, args.check[i], args.check[i + 1])
    elif args.serve:
        serve(model_class, args)
    else:
        parser.print_help()
        sys.exit(2)
