#!/usr/bin/python3
"""Associative retrieval with a PyTorch linear-attention layer whose feature map comes from cpm:
each sequence holds S (key, value) pairs and a query key, and the model must answer the query's
value. The attention reads the pairs through phi(q) . phi(k) with favor features of m
frequencies, fixed, drawn i.i.d. or by one of cpm's quadratures (orthogonal, coulomb); every other
weight is trained, from the same initialisation and on the same batches for each arm. Prints the
test accuracy of each arm. About 40 s on two shared cores.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/retrieval_torch.py [--steps 300]
"""
import argparse
import time

import torch

import cpm.torch

parser = argparse.ArgumentParser(description="linear attention with cpm's frequencies")
parser.add_argument("--steps", type=int, default=300)
parser.add_argument("--features", type=int, default=16, help="m, frequencies per arm")
parser.add_argument("--pairs", type=int, default=8, help="S, (key, value) pairs per sequence")
parser.add_argument("--arms", default="iid,orthogonal,coulomb")
args = parser.parse_args()
torch.set_num_threads(2)
KEYS, VALUES, WIDTH, HEAD = 64, 16, 32, 16


def batch(size, generator):
    """Pairs (size, S) of distinct keys with random values, a query among them, its value."""
    keys = torch.argsort(torch.rand(size, KEYS, generator=generator), dim=1)[:, :args.pairs]
    values = torch.randint(VALUES, (size, args.pairs), generator=generator)
    pick = torch.randint(args.pairs, (size,), generator=generator)
    rows = torch.arange(size)
    return keys, values, keys[rows, pick], values[rows, pick]


class Retrieval(torch.nn.Module):
    """One linear-attention read: out = sum_i phi(q).phi(k_i) v_i / sum_i phi(q).phi(k_i)."""

    def __init__(self, phi):
        super().__init__()
        self.key_embedding = torch.nn.Embedding(KEYS, WIDTH)
        self.value_embedding = torch.nn.Embedding(VALUES, WIDTH)
        self.q, self.k, self.v = (torch.nn.Linear(WIDTH, HEAD, bias=False) for _ in range(3))
        self.out = torch.nn.Linear(HEAD, VALUES)
        self.phi = phi

    def forward(self, keys, values, query):
        pairs = self.key_embedding(keys) + self.value_embedding(values)      # (B, S, WIDTH)
        # phi reads s x, s = HEAD^(-1/4): phi(q).phi(k) estimates exp(q.k / sqrt(HEAD))
        fq = self.phi.forward_queries(self.q(self.key_embedding(query)))    # (B, m)
        fk = self.phi.forward_keys(self.k(pairs))                            # (B, S, m)
        weights = torch.einsum("bm,bsm->bs", fq, fk)
        read = torch.einsum("bs,bsh->bh", weights, self.v(pairs))
        return self.out(read / weights.sum(1, keepdim=True))


def train(method):
    phi = cpm.torch.ParticleFeatureMap(HEAD, args.features, map="favor", generator=method)
    torch.manual_seed(0)  # the same initialisation and batches for every arm
    model = Retrieval(phi).float()
    optimiser = torch.optim.Adam(model.parameters(), lr=3e-3)
    data = torch.Generator().manual_seed(1)
    for _ in range(args.steps):
        keys, values, query, target = batch(128, data)
        loss = torch.nn.functional.cross_entropy(model(keys, values, query), target)
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
    with torch.no_grad():
        keys, values, query, target = batch(2000, torch.Generator().manual_seed(2))
        return (model(keys, values, query).argmax(1) == target).float().mean().item()


print(f"S = {args.pairs} pairs, m = {args.features} favor features, {args.steps} steps")
for method in args.arms.split(","):
    start = time.perf_counter()
    accuracy = train(method)
    print(f"{method:>10}: test accuracy {accuracy:.3f}   ({time.perf_counter() - start:.1f} s)")
