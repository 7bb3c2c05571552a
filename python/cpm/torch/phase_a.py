"""Phase A on a PyTorch model: every ParticleFeatureMap of the model, layer by layer from the
bottom, aligned by cpm's dynamics on the model's own queries and keys, then frozen.

    table = cpm.torch.phase_a(model, batches, target="softmax")   # a pandas DataFrame, a row a head

Each layer's queries and keys are collected with the maps' recorders on the given batches (any
device; moved to the CPU in float64), each head runs cpm.attention_phase_a (the C++ library,
cpm train's and cpm recall's dynamics and defaults), and the particles are written back on the
model's device and frozen. A layer's keys are those the already-updated layers below produce, as
`cpm train` does. The softmax target is the head's own softmax attention softmax(q.k / sqrt(d))
of the same q and k (the model before it is linearised).
"""
from __future__ import annotations

import sys
import time

import numpy as np
import torch

from .. import _cpm
from .feature_maps import ParticleFeatureMap

__all__ = ["phase_a"]


class _Collected(Exception):
    """Raised by a recorder once its layer's queries and keys are in, to skip the layers above."""


def _call(model, batch):
    if isinstance(batch, dict):
        return model(**batch)
    if isinstance(batch, (tuple, list)):
        return model(*batch)
    return model(batch)


def _owners(model):
    """{map: the module that holds it as an attribute}, for the attention's causal flag."""
    owners = {}
    for module in model.modules():
        for child in module.children():
            if isinstance(child, ParticleFeatureMap):
                owners.setdefault(child, module)
    return owners


def _maps_in_call_order(model, batch):
    """The model's ParticleFeatureMaps in the order a forward pass first calls them."""
    maps = [m for m in model.modules() if isinstance(m, ParticleFeatureMap)]
    order = []
    for m in maps:
        m.recorder = lambda role, x, m=m: order.append(m) if m not in order else None
    try:
        with torch.no_grad():
            _call(model, batch)
    finally:
        for m in maps:
            m.recorder = None
    return order + [m for m in maps if m not in order]  # maps the forward pass did not call last


def _record(model, fmap, batches):
    """The queries and keys [B, T, H, D] fmap sees on each batch: its first two calls of each
    forward pass, the one forward_keys made being the keys (else the second call)."""
    calls = []

    def recorder(role, x):
        calls.append((role, x.detach().to("cpu", torch.float64)))
        if len(calls) == 2:
            raise _Collected

    queries, keys = [], []
    fmap.recorder = recorder
    try:
        with torch.no_grad():
            for batch in batches:
                calls.clear()
                try:
                    _call(model, batch)
                except _Collected:
                    pass
                if len(calls) != 2:
                    raise ValueError("batches: a forward pass did not call the feature map on "
                                     "queries and keys (forward_queries and forward_keys, or "
                                     "the map on q then on k)")
                key_first = calls[0][0] == "key" and calls[1][0] != "key"
                queries.append(calls[1 if key_first else 0][1])
                keys.append(calls[0 if key_first else 1][1])
    finally:
        fmap.recorder = None
    return queries, keys


def _first_sequences(tensors, count):
    """The batches' tensors [B, T, H, D] cut after the first `count` sequences."""
    out = []
    for x in tensors:
        if count <= 0:
            break
        out.append(x[:count])
        count -= x.shape[0]
    return out


def _head_rows(tensors, masks, head):
    """One head's rows (n, D) of every sequence, padding left out, and each row's sequence."""
    rows, sequence, first = [], [], 0
    for b, x in enumerate(tensors):  # x: [B, T, H, D]
        for i in range(x.shape[0]):
            keep = x[i, :, head] if masks is None else x[i, :, head][masks[b][i].to("cpu")]
            if keep.shape[0] == 0:
                continue
            rows.append(keep)
            sequence.append(np.full(keep.shape[0], first))
            first += 1
    return torch.cat(rows).numpy(), np.concatenate(sequence)


def _sequence_labels(labels, masks, tensors):
    """The label of every non-empty sequence, in the order of _head_rows."""
    out = []
    for b, (y, x) in enumerate(zip(labels, tensors)):
        y = torch.as_tensor(y).reshape(-1).to("cpu")
        if y.shape[0] != x.shape[0]:
            raise ValueError(f"labels: batch {b} has {x.shape[0]} sequences and "
                             f"{y.shape[0]} labels")
        for i in range(x.shape[0]):
            if masks is None or bool(masks[b][i].any()):
                out.append(int(y[i]))
    return np.asarray(out, dtype=np.int64)


def phase_a(model, batches, target="softmax", labels=None, masks=None, causal=False, seed=1,
            sequences=None, progress=True, **options):
    """Runs Phase A on every ParticleFeatureMap of `model` and freezes the particles.

    batches: model inputs (a tensor, a tuple of positional arguments or a dict of keyword
    arguments each), iterated once per layer; masks: one (B, T) bool tensor per batch, True for
    real tokens (None: every position is one); labels: one (B,) tensor of class labels per batch
    (target "labels"); causal: for maps whose module has no `causal` attribute (KernelAttention's
    is used); sequences: align on the first this many sequences of the batches (None: all). The
    softmax and capacity targets cost about sum_s L_s^2 * m * d per iteration (every query with
    every key of its sequence): a few dozen sequences of a few hundred tokens, as cpm recall
    aligns 8 sequences. target and **options: those of cpm.attention_phase_a (gamma, steps, temperature,
    ...). Head h of the l-th layer runs with noise replica l * heads + h of `seed`.
    Returns a pandas DataFrame: module, layer, head and cpm.attention_phase_a's report."""
    import pandas

    batches = list(batches)
    if not batches:
        raise ValueError("batches: no batch given")
    if sequences is not None and (not isinstance(sequences, int) or sequences < 1):
        raise ValueError(f"sequences: expected a positive integer, got {sequences!r}")
    masks = None if masks is None else [torch.as_tensor(m, dtype=torch.bool) for m in masks]
    labels = None if labels is None else list(labels)
    if masks is not None and len(masks) != len(batches):
        raise ValueError(f"masks: {len(masks)} masks for {len(batches)} batches")
    if labels is not None and len(labels) != len(batches):
        raise ValueError(f"labels: {len(labels)} label tensors for {len(batches)} batches")
    if target == "labels" and labels is None:
        raise ValueError("labels: target 'labels' needs one label tensor per batch")
    names = {m: name for name, m in model.named_modules()}
    owners = _owners(model)
    was_training = model.training
    model.eval()
    rows = []
    try:
        maps = _maps_in_call_order(model, batches[0])
        if not maps:
            raise ValueError("model: holds no cpm.torch.ParticleFeatureMap")
        for layer, fmap in enumerate(maps):
            queries, keys = _record(model, fmap, batches)
            sequence_labels = None if labels is None else _sequence_labels(labels, masks, keys)
            if sequences is not None:
                queries = _first_sequences(queries, sequences)
                keys = _first_sequences(keys, sequences)
            is_causal = bool(getattr(owners.get(fmap), "causal", causal))
            if fmap.normalise_keys is not None:  # the weights of the attention's own keys
                options.setdefault("normalise_keys", fmap.normalise_keys)
            particles = fmap.omega.detach().to("cpu", torch.float64)
            heads = particles.shape[0]
            aligned = []
            for h in range(heads):
                q, sequence = _head_rows(queries, masks, h)
                k, _ = _head_rows(keys, masks, h)
                kept = None if sequence_labels is None else sequence_labels[:sequence[-1] + 1]
                started = time.perf_counter()
                new, report = _cpm.attention_phase_a(
                    q, k, particles[h].numpy(), sequence=sequence, causal=is_causal,
                    target=target, labels=kept, map=fmap.map,
                    bandwidth=fmap.bandwidth, seed=seed, replica=layer * heads + h, **options)
                report["seconds_with_transfer"] = time.perf_counter() - started  # arrays in and out
                aligned.append(torch.as_tensor(np.ascontiguousarray(new)))
                rows.append({"module": names.get(fmap, ""), "layer": layer, "head": h, **report})
                if progress:
                    print(f"phase A: layer {layer} head {h}: alignment "
                          f"{report['alignment_before']:.4g} -> {report['alignment_after']:.4g} "
                          f"in {report['steps']} steps, {report['seconds']:.2f} s",
                          file=sys.stderr)
            fmap.set_particles(torch.stack(aligned))
            fmap.freeze()
    finally:
        model.train(was_training)
    return pandas.DataFrame(rows)
