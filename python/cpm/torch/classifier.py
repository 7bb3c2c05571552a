"""The classifier `cpm train` saves (model.h5) as a PyTorch module, layer for layer the C++
TransformerClassifier (transformer/transformer_classifier.hpp):

    import cpm.torch
    model = cpm.torch.TransformerClassifier.from_model_file("out/train_sst2/model.h5")
    logits = model(tokens, lengths)          # (B, classes), cpm.classifier_logits's values
    model.vocabulary[:3]                     # ['<pad>', '<unk>', '<sep>']: a word's id is its index

    x = wte[token] + wpe[t]                                  token + learned position embeddings
    x = x + Dropout(Proj(Attention(LN1(x))))                 per block (pre-LayerNorm)
    x = x + Dropout(FC2(GELU(FC1(LN2(x)))))                  GELU of tanh (transformer/gelu.hpp)
    logits = W · mean_{t < len}(LN_f(x)_t) + b               mean over the non-padding tokens

Attention runs over each sequence's tokens, keys at padding left out: kernel attention with the
model's particles (cpm.torch.KernelAttention over a cpm.torch.ParticleFeatureMap: favor,
porf-softplus or softmaxfeat), exact softmax attention, or the uniform control (every token gets
the mean of the values). Dropout (embedding, both residual branches) acts in training mode only;
from_model_file returns the module in evaluation mode.
"""
from __future__ import annotations

import math

import h5py
import numpy as np
import torch
from torch import nn

from .feature_maps import ParticleFeatureMap
from .kernel_attention import KernelAttention

__all__ = ["TransformerClassifier"]

# The maps a classifier's linear attention uses: one particle per feature (the C++ classifier
# refuses the others).
_PARTICLE_MAPS = ("favor", "porf-softplus", "softmaxfeat")
_ATTENTIONS = ("linear", "softmax", "uniform")
_LAYER_NORM_EPSILON = 1e-5  # kLayerNormEpsilon of transformer/layer_norm.hpp, PyTorch's default


class _SequenceAttention(nn.Module):
    """The attention of the controls, over the keys j < len (mask True):
        softmax  out_i = sum_j softmax_j(q_i . k_j / sqrt(d_head)) v_j   (softmax_attention.hpp)
        uniform  out_i = (1/len) sum_j v_j                                (uniform_attention.hpp)
    with the projections of KernelAttention (q_proj is k_proj when qk_tied)."""

    def __init__(self, d_model, heads, kind, qk_tied=False):
        super().__init__()
        self.heads, self.kind = heads, kind
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = self.q_proj if qk_tied else nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)

    def forward(self, x, mask):
        batch, length, channels = x.shape

        def split(y):  # (B, T, C) -> (B, H, T, d_head)
            return y.view(batch, length, self.heads, -1).transpose(1, 2)

        v = split(self.v_proj(x))
        keys = mask[:, None, None, :]  # (B, 1, 1, T)
        if self.kind == "softmax":
            q, k = split(self.q_proj(x)), split(self.k_proj(x))
            scores = (q @ k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
            out = torch.softmax(scores.masked_fill(~keys, -math.inf), dim=-1) @ v
        else:
            weights = keys.to(v.dtype) / mask.sum(-1).to(v.dtype)[:, None, None, None]
            out = (weights @ v).expand(-1, -1, length, -1)
        return self.out_proj(out.transpose(1, 2).reshape(batch, length, channels))


class _Block(nn.Module):
    """One pre-LayerNorm block (transformer/transformer_block.hpp)."""

    def __init__(self, d_model, d_ff, attention, dropout):
        super().__init__()
        self.ln1 = nn.LayerNorm(d_model, eps=_LAYER_NORM_EPSILON)
        self.attention = attention
        self.ln2 = nn.LayerNorm(d_model, eps=_LAYER_NORM_EPSILON)
        self.fc = nn.Linear(d_model, d_ff)
        self.gelu = nn.GELU(approximate="tanh")
        self.proj = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, mask):
        x = x + self.dropout(self.attention(self.ln1(x), mask=mask))
        return x + self.dropout(self.proj(self.gelu(self.fc(self.ln2(x)))))


class TransformerClassifier(nn.Module):
    """forward(tokens (B, T) right-padded ids, lengths (B,) or mask (B, T) True at tokens)
    -> logits (B, classes). The sizes are those of the model.h5 description; `vocabulary` is the
    word list (index = id) when the model reads text, else None."""

    def __init__(self, vocabulary_size, classes, max_length=128, d_model=64, heads=4, layers=2,
                 d_ff=128, attention="linear", feature_map="favor", features=64,
                 feature_epsilon=1e-6, qk_tied=False, dropout=0.1, vocabulary=None,
                 normalise_keys=None):
        super().__init__()
        if attention not in _ATTENTIONS:
            raise ValueError(f"attention: unknown kind '{attention}' ({', '.join(_ATTENTIONS)})")
        if attention == "linear" and feature_map not in _PARTICLE_MAPS:
            raise ValueError(f"feature_map: the classifier's linear attention has no "
                             f"'{feature_map}' ({', '.join(_PARTICLE_MAPS)})")
        if d_model % heads != 0:
            raise ValueError(f"d_model = {d_model} is not divisible by heads = {heads}")
        self.attention_kind, self.feature_map, self.qk_tied = attention, feature_map, qk_tied
        self.features, self.feature_epsilon = features, feature_epsilon
        self.normalise_keys = normalise_keys
        self.heads = heads
        self.vocabulary = vocabulary
        self.token_embedding = nn.Embedding(vocabulary_size, d_model)
        self.position_embedding = nn.Embedding(max_length, d_model)
        self.dropout = nn.Dropout(dropout)
        self.blocks = nn.ModuleList(
            _Block(d_model, d_ff, self._attention(d_model), dropout) for _ in range(layers))
        self.final_ln = nn.LayerNorm(d_model, eps=_LAYER_NORM_EPSILON)
        self.classifier = nn.Linear(d_model, classes)

    def _attention(self, d_model):
        if self.attention_kind != "linear":
            return _SequenceAttention(d_model, self.heads, self.attention_kind, self.qk_tied)
        phi = ParticleFeatureMap(d_model // self.heads, self.features, heads=self.heads,
                                 map=self.feature_map, epsilon=self.feature_epsilon,
                                 normalise_keys=self.normalise_keys)
        return KernelAttention(d_model, self.heads, phi, qk_tied=self.qk_tied)

    @classmethod
    def from_model_file(cls, path, device=None):
        """The model a `cpm train` run saved, in evaluation mode; ValueError naming `path` for a
        file that is no such model."""
        try:
            with h5py.File(path, "r") as file:
                group = file["model"]
                shape = {key: _attribute(group, key) for key in _SHAPE_KEYS}
                keys = (_attribute(group, "normalise_keys") if "normalise_keys" in group.attrs
                        else "none")  # absent in models of earlier builds
                parameters = np.asarray(group["parameters"], dtype=np.float32)
                particles = np.asarray(group["particles"], dtype=np.float32)
                words = bytes(np.asarray(group["vocabulary"], dtype=np.uint8)).decode()
        except (OSError, KeyError) as error:
            raise ValueError(f"{path}: not a readable cpm model checkpoint ({error})") from None
        try:
            model = cls(shape.pop("vocabulary"), shape.pop("classes"),
                        qk_tied=bool(shape.pop("qk_tied")),
                        normalise_keys=None if keys == "none" else keys,
                        vocabulary=words.split("\n")[:-1] or None, **shape)
        except ValueError as error:
            raise ValueError(f"{path}: {error}") from None
        try:
            model.load_checkpoint(parameters, particles)
        except ValueError as error:
            raise ValueError(f"{path}: {error} (damaged checkpoint)") from None
        return model.to(device).eval()

    def load_checkpoint(self, parameters, particles):
        """Copies the flat parameter vector of the C++ model (its tensors in the order of
        checkpoint_tensors) and the particles (layers, heads, features, d_head)."""
        parameters = torch.as_tensor(np.asarray(parameters, dtype=np.float32))
        particles = torch.as_tensor(np.asarray(particles, dtype=np.float32))
        tensors = list(self.checkpoint_tensors())
        expected = sum(t.numel() for _, parts in tensors for t in parts)
        if parameters.numel() != expected:
            raise ValueError(f"{parameters.numel()} parameters, the model has {expected}")
        offset = 0
        with torch.no_grad():
            for _, parts in tensors:
                for t in parts:
                    t.copy_(parameters[offset:offset + t.numel()].view_as(t))
                    offset += t.numel()
            self._load_particles(particles)

    def _load_particles(self, particles):
        maps = [block.attention.feature_map for block in self.blocks
                if self.attention_kind == "linear"]
        expected = sum(phi.omega.numel() for phi in maps)
        if particles.numel() != expected:
            raise ValueError(f"{particles.numel()} particle coordinates, the model has {expected}")
        for phi, block in zip(maps, particles.split([phi.omega.numel() for phi in maps])):
            phi.set_particles(block.view_as(phi.omega))

    def checkpoint_tensors(self):
        """(name, parameters) for each tensor of the C++ model's flat vector, in its order
        (TransformerStack::add_body, TransformerBlock::add_parameters, the classifier head).
        Every matrix is (rows, cols) row-major as nn.Linear's weight; the fused q | k | v rows
        (q | v with qk_tied: transformer/attention_layout.hpp) are the projections one after
        another, and so are their biases."""
        yield "embedding.token", [self.token_embedding.weight]
        yield "embedding.position", [self.position_embedding.weight]
        for index, block in enumerate(self.blocks):
            prefix = f"layers.{index}."
            attention = block.attention
            projections = [attention.q_proj, attention.v_proj] if self.qk_tied else \
                [attention.q_proj, attention.k_proj, attention.v_proj]
            yield prefix + "ln1.weight", [block.ln1.weight]
            yield prefix + "ln1.bias", [block.ln1.bias]
            yield prefix + "attention.qkv.weight", [p.weight for p in projections]
            yield prefix + "attention.qkv.bias", [p.bias for p in projections]
            yield prefix + "attention.proj.weight", [attention.out_proj.weight]
            yield prefix + "attention.proj.bias", [attention.out_proj.bias]
            yield prefix + "ln2.weight", [block.ln2.weight]
            yield prefix + "ln2.bias", [block.ln2.bias]
            yield prefix + "mlp.fc.weight", [block.fc.weight]
            yield prefix + "mlp.fc.bias", [block.fc.bias]
            yield prefix + "mlp.proj.weight", [block.proj.weight]
            yield prefix + "mlp.proj.bias", [block.proj.bias]
        yield "final_ln.weight", [self.final_ln.weight]
        yield "final_ln.bias", [self.final_ln.bias]
        yield "classifier.weight", [self.classifier.weight]
        yield "classifier.bias", [self.classifier.bias]

    def forward(self, tokens, lengths=None, mask=None):
        if (lengths is None) == (mask is None):
            raise ValueError("give one of lengths and mask")
        length = tokens.shape[1]
        positions = torch.arange(length, device=tokens.device)
        if mask is None:
            mask = positions[None, :] < torch.as_tensor(lengths, device=tokens.device)[:, None]
        x = self.dropout(self.token_embedding(tokens) + self.position_embedding(positions))
        for block in self.blocks:
            x = block(x, mask)
        x = self.final_ln(x)
        weights = mask.to(x.dtype)
        pooled = (weights[..., None] * x).sum(1) / weights.sum(1, keepdim=True)  # (B, C)
        return self.classifier(pooled)


# The description attributes of model.h5 the constructor takes
# (transformer/classifier_checkpoint.hpp).
_SHAPE_KEYS = ("vocabulary", "max_length", "d_model", "heads", "layers", "d_ff", "classes",
               "features", "attention", "feature_map", "feature_epsilon", "qk_tied", "dropout")


def _attribute(group, key):
    value = group.attrs[key]
    if isinstance(value, bytes):
        return value.decode()
    return value.item() if isinstance(value, np.generic) else value
