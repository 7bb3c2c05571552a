"""Multi-head linear (kernel) attention in PyTorch on cpm's feature maps, the read-out of the C++
attention (transformer/linear_attention.hpp, transformer/causal_linear_attention.hpp):

    out_i = phi(q_i)^T sum_j phi(k_j) v_j^T / (phi(q_i)^T sum_j phi(k_j) + delta),  delta = 1e-12

over the real keys j of the sequence, or j <= i when causal. Nothing of size T x T is formed: the
causal sums run over chunks of 64 tokens, the masked (64 x 64) product inside a chunk and the
running state sum_j phi(k_j) v_j^T of the chunks before it.

    import cpm.torch
    phi = cpm.torch.ParticleFeatureMap(head_dim=16, features=64, heads=4)
    attention = cpm.torch.KernelAttention(64, 4, phi, causal=True)
    y = attention(x)                                  # x (B, T, 64) -> (B, T, 64)
"""
from __future__ import annotations

import torch

from .feature_maps import ParticleFeatureMap

__all__ = ["KernelAttention", "attention_weights", "causal_linear_attention", "linear_attention"]

DENOMINATOR_GUARD = 1e-12  # delta, kAttentionDenominatorGuard
CAUSAL_CHUNK = 64  # tokens per chunk, kCausalChunk


def linear_attention(phi_q, phi_k, v):
    """out [B, T, H, D] of phi_q, phi_k [B, T, H, M] and v [B, T, H, D], every key for every
    query (padding keys have phi_k = 0)."""
    kv = torch.einsum("bthm,bthd->bhmd", phi_k, v)  # sum_j phi(k_j) v_j^T
    z = phi_k.sum(1)  # sum_j phi(k_j)  (B, H, M)
    numerator = torch.einsum("bthm,bhmd->bthd", phi_q, kv)
    denominator = torch.einsum("bthm,bhm->bth", phi_q, z) + DENOMINATOR_GUARD
    return numerator / denominator[..., None]


def _chunks(x, chunk):
    """[B, T, H, X] -> [B * H * n, chunk, X], T padded with zeros to n * chunk tokens."""
    b, t, h, width = x.shape
    n = -(-t // chunk)
    x = torch.nn.functional.pad(x.transpose(1, 2), (0, 0, 0, n * chunk - t))
    return x.reshape(b * h * n, chunk, width)


def causal_linear_attention(phi_q, phi_k, v, chunk=CAUSAL_CHUNK):
    """out [B, T, H, D] with key j read by the queries i >= j: per chunk,
    n_i = S^T phi(q_i) + sum_(j<=i in chunk) A_ij v_j and den_i = phi(q_i)^T z + sum_j A_ij + delta,
    A_ij = phi(q_i)^T phi(k_j), S and z the sums over the earlier chunks. A column of ones appended
    to v carries the denominator through the same products as the numerator ([S z] and [v 1])."""
    b, t, h, d = v.shape
    chunk = max(1, min(chunk, t))  # a short sequence is one chunk
    n = -(-t // chunk)
    q, k = _chunks(phi_q, chunk), _chunks(phi_k, chunk)  # [B H n, c, M]
    values = _chunks(torch.nn.functional.pad(v, (0, 1), value=1.0), chunk)  # [B H n, c, D + 1]
    per_chunk = torch.bmm(k.transpose(1, 2), values).unflatten(0, (b * h, n))  # (M, D + 1) each
    state = torch.cat([torch.zeros_like(per_chunk[:, :1]), per_chunk[:, :-1].cumsum(1)], 1)
    causal = torch.ones(chunk, chunk, dtype=torch.bool, device=q.device).tril()
    scores = torch.bmm(q, k.transpose(1, 2)).masked_fill(~causal, 0.0)
    both = torch.baddbmm(torch.bmm(scores, values), q, state.flatten(0, 1))  # [n_i, den_i]
    out = both[..., :d] / (both[..., d:] + DENOMINATOR_GUARD)
    return out.reshape(b, h, n * chunk, d)[:, :, :t].transpose(1, 2)


def attention_weights(phi_q, phi_k, causal=False):
    """The explicit weights [B, H, T, T], w_ij = A_ij / (sum_j A_ij + delta), for small T."""
    scores = torch.einsum("bihm,bjhm->bhij", phi_q, phi_k)
    if causal:
        t = scores.shape[-1]
        scores = scores.masked_fill(
            ~torch.ones(t, t, dtype=torch.bool, device=scores.device).tril(), 0.0)
    return scores / (scores.sum(-1, keepdim=True) + DENOMINATOR_GUARD)


class KernelAttention(torch.nn.Module):
    """Multi-head linear attention on x (B, T, d_model): q, k, v = q_proj(x), k_proj(x), v_proj(x)
    split into heads of head_dim = d_model / heads, the read-out above on feature_map's phi, and
    out_proj, then dropout (as the C++ block drops the projected attention).

    feature_map: a ParticleFeatureMap with `heads` heads of head_dim, or a factory f(head_dim,
    heads=...) such as ParticleFeatureMap.factory(features, map=...). qk_tied: k_proj is q_proj
    (the C++ model's tied W_Q = W_K). Before each pass the map's new_feature_map is called
    (it redraws only when asked)."""

    def __init__(self, d_model, heads, feature_map, causal=False, dropout=0.0, qk_tied=False,
                 bias=True, chunk=CAUSAL_CHUNK):
        super().__init__()
        if not isinstance(heads, int) or heads < 1 or d_model % heads != 0:
            raise ValueError(f"heads: must divide d_model = {d_model}, not {heads!r}")
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"dropout: must be in [0, 1), not {dropout}")
        if not isinstance(chunk, int) or chunk < 1:
            raise ValueError(f"chunk: must be an integer >= 1, not {chunk!r}")
        self.d_model, self.heads, self.head_dim = d_model, heads, d_model // heads
        self.causal, self.qk_tied, self.chunk = causal, qk_tied, chunk
        if not isinstance(feature_map, torch.nn.Module) and callable(feature_map):
            feature_map = feature_map(self.head_dim, heads=heads)
        if not isinstance(feature_map, ParticleFeatureMap) or (
                feature_map.heads, feature_map.head_dim) != (heads, self.head_dim):
            raise ValueError(f"feature_map: expected a ParticleFeatureMap of {heads} heads of "
                             f"head_dim {self.head_dim}, or a factory of one")
        self.feature_map = feature_map
        self.q_proj = torch.nn.Linear(d_model, d_model, bias=bias)
        self.k_proj = self.q_proj if qk_tied else torch.nn.Linear(d_model, d_model, bias=bias)
        self.v_proj = torch.nn.Linear(d_model, d_model, bias=bias)
        self.out_proj = torch.nn.Linear(d_model, d_model, bias=bias)
        self.dropout = torch.nn.Dropout(dropout)

    def forward(self, x, mask=None, return_weights=False):
        """(B, T, d_model); with return_weights also the weights (B, H, T, T). mask (B, T): True
        for the real tokens (the padding keys are left out of both sums)."""
        if not torch.is_tensor(x) or x.ndim != 3 or x.shape[-1] != self.d_model:
            raise ValueError(f"x: expected (B, T, {self.d_model}), got "
                             f"{tuple(x.shape) if torch.is_tensor(x) else type(x).__name__}")
        b, t, _ = x.shape
        split = (b, t, self.heads, self.head_dim)
        q = self.q_proj(x).reshape(split)
        k = q if self.qk_tied else self.k_proj(x).reshape(split)
        v = self.v_proj(x).reshape(split)
        result = self.attend(q, k, v, mask, return_weights)
        out = result[0] if return_weights else result
        out = self.dropout(self.out_proj(out.reshape(b, t, self.d_model)))
        return (out, result[1]) if return_weights else out

    def attend(self, q, k, v, mask=None, return_weights=False):
        """The attention of every head on projected q, k, v [B, T, H, head_dim]: [B, T, H,
        head_dim] (and the weights [B, H, T, T])."""
        self.feature_map.new_feature_map(q.device)
        phi_q = self.feature_map.forward_queries(q)
        phi_k = self.feature_map.forward_keys(k, mask)
        if self.causal:
            out = causal_linear_attention(phi_q, phi_k, v, self.chunk)
        else:
            out = linear_attention(phi_q, phi_k, v)
        if return_weights:
            return out, attention_weights(phi_q, phi_k, self.causal)
        return out
