"""A PyTorch feature map whose frequencies come from cpm, for a user's linear-attention layer:

    import cpm.torch
    phi = cpm.torch.FeatureMap.from_generator("coulomb", n=64, dim=16, map="favor")
    out = linear_attention(phi(q), phi(k), v)        # phi(q) @ (phi(k).T @ v), normalised

The frequencies omega (N, d) are fixed (a buffer; trainable=True makes them a parameter): drawn
by any of cpm's generators (from_generator), learned from data by the alignment dynamics
(from_particles), or given (an array). The maps are those of cpm.feature_map, value for value:
    'favor'          exp(omega.x - |x|^2/2)                 positive, E phi(x) phi(y) = exp(x.y)
    'porf-softplus'  softplus(omega.x)                      positive
    'rff-pairs'      [cos(omega.x), sin(omega.x)]           2N features, the Gaussian kernel
    'rff'            sqrt(2) cos(omega.x + b)               phases b given, or cpm's of seed 1
and the kernel is K(x, y) = phi(x) . phi(y) / N (cpm.empirical_kernel).
"""
from __future__ import annotations

import numpy as np
import torch

from .. import _cpm

__all__ = ["FeatureMap"]

_MAPS = ("favor", "porf-softplus", "rff-pairs", "rff")


class FeatureMap(torch.nn.Module):
    """phi(x) for x (..., d): (..., N), or (..., 2N) for 'rff-pairs'."""

    def __init__(self, omega, map="favor", phases=None, trainable=False, stabilise=False):
        super().__init__()
        if map not in _MAPS:
            raise ValueError(f"map: unknown feature map '{map}' ({', '.join(_MAPS)})")
        omega = torch.as_tensor(np.asarray(omega, dtype=np.float64))
        if omega.ndim != 2:
            raise ValueError(f"omega: expected a 2-D array (N, d), got shape {tuple(omega.shape)}")
        self.map = map
        # favor only: divide each row of phi by its largest entry, a per-row factor that linear
        # attention's normalisation cancels (for large |x|, where exp overflows otherwise)
        self.stabilise = stabilise
        if trainable:
            self.omega = torch.nn.Parameter(omega)
        else:
            self.register_buffer("omega", omega)
        if map == "rff":
            if phases is None:  # those of cpm.feature_map("rff", ..., seed=1)
                phases = _cpm.rff_phases(omega.shape[0])
            self.register_buffer("phases", torch.as_tensor(np.asarray(phases, dtype=np.float64)))

    @classmethod
    def from_generator(cls, method, n, dim, map="favor", kernel="gaussian", sigma=1.0, seed=1,
                       replica=0, **options):
        """Frequencies of a cpm generator: 'iid', 'orthogonal', 'sobol', 'halton' or 'coulomb'
        (options: s, beta, lambda_, ... of cpm.generate_features)."""
        omega = _cpm.generate_features(method, n, dim, kernel=kernel, sigma=sigma, seed=seed,
                                       replica=replica, **options)
        return cls(omega, map=map)

    @classmethod
    def from_particles(cls, x, y, n, map="favor", **options):
        """Particles learned from data x (rows, d) and labels y by cpm.learn_particles (options:
        its keyword arguments), for the same map."""
        if map == "rff":
            raise ValueError("map 'rff': learn with 'rff-pairs' (the phases are cpm's own)")
        omega, _, _ = _cpm.learn_particles(x, y, n=n, map=map, **options)
        return cls(omega, map=map)

    @property
    def features(self):
        """The number of feature columns of phi."""
        return self.omega.shape[0] * (2 if self.map == "rff-pairs" else 1)

    def forward(self, x):
        omega = self.omega.to(x.dtype)
        z = x @ omega.T  # (..., N)
        if self.map == "favor":
            z = z - 0.5 * (x * x).sum(-1, keepdim=True)
            if self.stabilise:
                z = z - z.amax(-1, keepdim=True).detach()
            return torch.exp(z)
        if self.map == "porf-softplus":
            return torch.nn.functional.softplus(z)
        if self.map == "rff-pairs":
            return torch.cat([torch.cos(z), torch.sin(z)], dim=-1)
        return np.sqrt(2.0) * torch.cos(z + self.phases.to(x.dtype))

    def kernel(self, x, y):
        """K(x, y) = phi(x) . phi(y) / N: (..., n_x, n_y)."""
        return self(x) @ self(y).transpose(-1, -2) / self.omega.shape[0]
