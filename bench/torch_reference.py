#!/usr/bin/python3
"""PyTorch reference of cpm's Transformer classifier (transformer/transformer_classifier.hpp).

The same architecture, written with torch operations: token + learned position embeddings,
pre-LayerNorm blocks (softmax or linear kernel attention, GELU tanh feed-forward), final
LayerNorm, mean pooling over non-padding tokens, linear classifier, mean cross-entropy.

  --check IN OUT [IN OUT ...]  read a model, its particles and a batch written by the C++
                   test, write the logits, the loss and every parameter gradient (float64)
  --bench ...      training tokens/s on random data (forward + backward + AdamW step)
"""
import argparse
import math
import sys
import time

import torch
import torch.nn.functional as F

import torch_blas


class Classifier(torch.nn.Module):
    def __init__(self, vocabulary, max_length, d_model, heads, layers, d_ff, classes, features,
                 attention, feature_map, epsilon, qk_tied, dtype=torch.float32):
        super().__init__()
        self.C, self.H, self.m = d_model, heads, features
        self.attention, self.map, self.eps, self.tied = attention, feature_map, epsilon, qk_tied
        R = (2 if qk_tied else 3) * d_model
        p = lambda *shape: torch.nn.Parameter(torch.zeros(*shape, dtype=dtype))
        self.params = torch.nn.ParameterDict()
        self.params["embedding_token"] = p(vocabulary, d_model)
        self.params["embedding_position"] = p(max_length, d_model)
        for l in range(layers):
            q = f"layers.{l}."
            for name, shape in [("ln1.weight", (d_model,)), ("ln1.bias", (d_model,)),
                                ("attention.qkv.weight", (R, d_model)), ("attention.qkv.bias", (R,)),
                                ("attention.proj.weight", (d_model, d_model)), ("attention.proj.bias", (d_model,)),
                                ("ln2.weight", (d_model,)), ("ln2.bias", (d_model,)),
                                ("mlp.fc.weight", (d_ff, d_model)), ("mlp.fc.bias", (d_ff,)),
                                ("mlp.proj.weight", (d_model, d_ff)), ("mlp.proj.bias", (d_model,))]:
                self.params[(q + name).replace(".", "_")] = p(*shape)
        self.params["final_ln_weight"] = p(d_model)
        self.params["final_ln_bias"] = p(d_model)
        self.params["classifier_weight"] = p(classes, d_model)
        self.params["classifier_bias"] = p(classes)
        self.layers = layers
        hs = d_model // heads
        self.register_buffer("particles", torch.randn(layers, heads, features, hs, dtype=dtype))

    def w(self, name):
        return self.params[name.replace(".", "_")]

    def features(self, x, omega, mask):
        # x (B, H, L, hs) already scaled; omega (H, m, hs); mask (B, 1, L, 1) for keys, None for queries.
        u = torch.einsum("bhld,hmd->bhlm", x, omega)
        if self.map == "favor":
            u = u - 0.5 * (x * x).sum(-1, keepdim=True)
            if mask is None:
                shift = u.amax(-1, keepdim=True).detach()
            else:
                shift = u.masked_fill(~mask, -math.inf).amax(dim=(-1, -2), keepdim=True).detach()
            phi = torch.exp(u - shift) + self.eps
        elif self.map == "porf-softplus":
            phi = F.softplus(u)
        else:
            phi = torch.softmax(u, -1) + self.eps
        return phi if mask is None else phi * mask

    def attend(self, qkv, lengths, layer):
        B, L, _ = qkv.shape
        C, H = self.C, self.H
        hs = C // H
        heads = lambda t: t.view(B, L, H, hs).transpose(1, 2)
        q = heads(qkv[..., :C])
        k = q if self.tied else heads(qkv[..., C:2 * C])
        v = heads(qkv[..., -C:])
        valid = torch.arange(L)[None, :] < lengths[:, None]  # (B, L)
        if self.attention == "softmax":
            s = q @ k.transpose(-1, -2) / math.sqrt(hs)
            s = s.masked_fill(~valid[:, None, None, :], -math.inf)
            out = torch.softmax(s, -1) @ v
        else:
            scale = hs ** -0.25
            omega = self.particles[layer]
            phi_q = self.features(q * scale, omega, None)
            phi_k = self.features(k * scale, omega, valid[:, None, :, None])
            kv = phi_k.transpose(-1, -2) @ v             # (B, H, m, hs)
            z = phi_k.sum(-2)                             # (B, H, m)
            out = (phi_q @ kv) / ((phi_q * z[:, :, None, :]).sum(-1, keepdim=True) + 1e-12)
        return out.transpose(1, 2).reshape(B, L, C)

    def forward(self, tokens, lengths):
        B, L = tokens.shape
        x = self.w("embedding.token")[tokens] + self.w("embedding.position")[:L][None]
        for l in range(self.layers):
            q = f"layers.{l}."
            h = F.layer_norm(x, (self.C,), self.w(q + "ln1.weight"), self.w(q + "ln1.bias"), 1e-5)
            qkv = F.linear(h, self.w(q + "attention.qkv.weight"), self.w(q + "attention.qkv.bias"))
            a = self.attend(qkv, lengths, l)
            x = x + F.linear(a, self.w(q + "attention.proj.weight"), self.w(q + "attention.proj.bias"))
            h = F.layer_norm(x, (self.C,), self.w(q + "ln2.weight"), self.w(q + "ln2.bias"), 1e-5)
            h = F.gelu(F.linear(h, self.w(q + "mlp.fc.weight"), self.w(q + "mlp.fc.bias")), approximate="tanh")
            x = x + F.linear(h, self.w(q + "mlp.proj.weight"), self.w(q + "mlp.proj.bias"))
        x = F.layer_norm(x, (self.C,), self.w("final_ln.weight"), self.w("final_ln.bias"), 1e-5)
        valid = (torch.arange(L)[None, :] < lengths[:, None]).to(x.dtype)
        pooled = (x * valid[..., None]).sum(1) / lengths[:, None].to(x.dtype)
        return F.linear(pooled, self.w("classifier.weight"), self.w("classifier.bias"))


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
    ints = {k: int(v) for k, v in config.items() if k not in ("attention", "feature_map", "epsilon")}
    model = Classifier(ints["vocabulary"], ints["max_length"], ints["d_model"], ints["heads"], ints["layers"],
                       ints["d_ff"], ints["classes"], ints["features"], config["attention"], config["feature_map"],
                       float(config["epsilon"]), bool(ints["qk_tied"]), dtype=torch.float64)
    with torch.no_grad():
        for name, p in model.params.items():
            p.copy_(torch.tensor(blocks[name], dtype=torch.float64).view_as(p))
        if len(blocks.get("particles", [])) == model.particles.numel():
            model.particles.copy_(torch.tensor(blocks["particles"], dtype=torch.float64).view_as(model.particles))
    B, L = ints["batch"], ints["length"]
    tokens = torch.tensor([int(v) for v in blocks["tokens"]]).view(B, L)
    lengths = torch.tensor([int(v) for v in blocks["lengths"]])
    labels = torch.tensor([int(v) for v in blocks["labels"]])
    logits = model(tokens, lengths)
    loss = F.cross_entropy(logits, labels)
    loss.backward()
    with open(out, "w") as f:
        write = lambda name, t: f.write(name + " " + str(t.numel()) + " " +
                                        " ".join(repr(float(v)) for v in t.reshape(-1)) + "\n")
        write("logits", logits.detach())
        write("loss", loss.detach().reshape(1))
        for name, p in model.params.items():
            write("grad." + name, p.grad)


def bench(args):
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    model = Classifier(args.vocabulary, args.length, args.d_model, args.heads, args.layers, args.d_ff, 2,
                       args.features, "softmax" if args.attention == "softmax" else "linear",
                       args.attention.split("-", 1)[-1], 1e-6, False)
    with torch.no_grad():
        for name, p in model.params.items():
            if p.dim() == 2:
                p.normal_(0, 0.02)
            elif "ln" in name and name.endswith("weight"):
                p.fill_(1)
    # foreach: one multi-tensor update instead of a Python loop over the tensors.
    optimiser = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01, foreach=True)
    tokens = torch.randint(3, args.vocabulary, (args.batch, args.length))
    lengths = torch.full((args.batch,), args.length)
    labels = torch.randint(0, 2, (args.batch,))

    def step():
        optimiser.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(tokens, lengths), labels)
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
    parser.add_argument("--vocabulary", type=int, default=10000)
    parser.add_argument("--attention", default="kernel-favor")
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
