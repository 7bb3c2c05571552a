"""The feature maps of cpm's linear attention in PyTorch, per head, with cpm's particles:

    import cpm.torch
    phi = cpm.torch.ParticleFeatureMap(head_dim=16, features=64, heads=4, map="favor")
    phi_q = phi.forward_queries(q)                  # q [B, T, H, D] -> [B, T, H, D_phi]
    phi_k = phi.forward_keys(k)

The maps are those of transformer/attention_feature_maps.hpp, value for value
(cpm.attention_features); each reads s x with s = bandwidth * head_dim^(-1/4):
    favor         exp(w_k.sx - |sx|^2/2 - c) + eps              D_phi = r
    porf-softplus softplus(w_k.sx)                               D_phi = r
    softmaxfeat   softmax(W sx) + eps                            D_phi = r
    hedgehog      [softmax(W sx); softmax(-W sx)] + eps          D_phi = 2r
    elu           elu(sx) + 1                                    D_phi = head_dim
    dpfp          r_a r_(a-i) + eps, r = [relu(y), relu(-y)], i = 1..nu, y = sx (native) or
                  y = P sx (projected)                           D_phi = 2 nu head_dim or 2 nu d'
    taylor        [1; u; (c_ij u_i u_j)_(i<=j)], u = P sx        D_phi = 1 + d' + d'(d'+1)/2
The particles W (r rows) or the projection P (d' rows) of each head are one block of omega
(heads, rows, head_dim): a buffer, or a parameter with trainable=True. favor's shift c (detached;
the attention's normalisation cancels it) is per token for queries and one per (sequence, head)
for keys, as the C++ linear attention shifts them (transformer/linear_attention.hpp).
"""
from __future__ import annotations

import math

import numpy as np
import torch

from .. import _cpm

__all__ = ["ParticleFeatureMap"]

MAPS = ("favor", "porf-softplus", "softmaxfeat", "hedgehog", "elu", "dpfp", "taylor")
GENERATORS = ("iid", "gaussian", "orthogonal", "sobol", "halton", "coulomb")
KEY_NORMS = {None: None, "l2": 2, "l1": 1}
MAX_DPFP_PROJECTION = 256  # kMaxDpfpProjection
# A redraw k ≥ 1 reads the streams replica = k · 1024 + block, as the recall study's redraw arms
# do (experiments/recall/recall_arms.cpp); the first draw is block = layer · heads + h, the replica
# with which `cpm train` draws the particles of head h in layer `layer`.
REDRAW_STRIDE = 1024


def taylor_projection_size(feature_dim):
    """The largest d' with 1 + d' + d'(d'+1)/2 <= feature_dim (taylor_projection_size)."""
    d = 0
    while 1 + (d + 1) + (d + 1) * (d + 2) // 2 <= feature_dim:
        d += 1
    return d


def _particle_rows(map, features, head_dim, dpfp_nu, projected):
    """Rows of each head's particle block: r for the particle maps, d' for the projected ones
    (taylor: the largest d' within the D_phi budget `features`; projected dpfp: features // 2 nu,
    as recall_feature_dim chooses them), 0 for elu and the native dpfp."""
    if map in ("elu", "dpfp") and not projected:
        return 0
    if features is None or features < 1:
        raise ValueError(f"features: the map '{map}' needs features >= 1, not {features}")
    if map == "taylor":
        rows = taylor_projection_size(features)
        if rows < 1:
            raise ValueError(f"features: taylor needs a D_phi budget >= 3, not {features}")
        return rows
    if map == "dpfp":
        return features // (2 * dpfp_nu)
    return features


def _check_dpfp(map, rows, head_dim, dpfp_nu, projected):
    """dpfp's nu: 1 <= nu < 2d with d = head_dim, or d = d' <= 256 when projected."""
    if map != "dpfp":
        return
    d = rows if projected else head_dim
    if projected and not 1 <= rows <= MAX_DPFP_PROJECTION:
        raise ValueError(f"features: the projected dpfp needs 1 <= d' = features // (2 nu) <= "
                         f"{MAX_DPFP_PROJECTION}, not d' = {rows}")
    if not 1 <= dpfp_nu < 2 * d:
        raise ValueError(f"dpfp_nu: dpfp needs 1 <= nu < 2d = {2 * d}, not {dpfp_nu}")


def _feature_dim(map, rows, head_dim, dpfp_nu, projected):
    """D_phi, the rows of phi (feature_dimension)."""
    if map == "hedgehog":
        return 2 * rows
    if map == "elu":
        return head_dim
    if map == "dpfp":
        return 2 * dpfp_nu * (rows if projected else head_dim)
    if map == "taylor":
        return 1 + rows + rows * (rows + 1) // 2
    return rows


# The maps after the projection u = s W x (or on y = s x for elu and the native dpfp), each a
# formula of transformer/attention_feature_maps.hpp; favor, whose shift depends on the role, is
# ParticleFeatureMap._favor.
def _softplus(u, eps, nu):
    return torch.relu(u) + torch.log1p(torch.exp(-u.abs()))  # stable for large |u|


def _softmaxfeat(u, eps, nu):
    return torch.softmax(u, -1) + eps


def _hedgehog(u, eps, nu):
    return torch.cat([torch.softmax(u, -1), torch.softmax(-u, -1)], -1) + eps


def _elu(y, eps, nu):
    return torch.where(y > 0, y + 1, torch.exp(y.clamp(max=0)))  # elu(y) + 1, no exp overflow


def _dpfp(y, eps, nu):
    r = torch.cat([torch.relu(y), torch.relu(-y)], -1)  # phi_(2d(i-1)+a) = r_a r_(a-i) + eps
    return torch.cat([r * torch.roll(r, i, -1) for i in range(1, nu + 1)], -1) + eps


def _taylor(u, eps, nu):
    d = u.shape[-1]
    i, j = torch.triu_indices(d, d, device=u.device)  # (i, j), i <= j, i outer
    c = torch.ones(len(i), dtype=u.dtype, device=u.device)
    c[i == j] = 1 / math.sqrt(2)  # c_ii = 1/sqrt(2), c_ij = 1 (i < j)
    return torch.cat([torch.ones_like(u[..., :1]), u, u[..., i] * u[..., j] * c], -1)


_MAP_FORMULAS = {"porf-softplus": _softplus, "softmaxfeat": _softmaxfeat, "hedgehog": _hedgehog,
                 "elu": _elu, "dpfp": _dpfp, "taylor": _taylor}


class ParticleFeatureMap(torch.nn.Module):
    """phi of linear attention, one particle block per head: [B, T, H, head_dim] ->
    [B, T, H, feature_dim]; with heads = 1 also [head_dim], [T, head_dim] or [B, T, head_dim].

    features: the particle rows r (favor, porf-softplus, softmaxfeat, hedgehog: D_phi = 2r), the
    D_phi budget of taylor and the projected dpfp (their d' as recall_feature_dim chooses it), and
    unused (may be None) for elu and the native dpfp. The particles are drawn by cpm's `generator`
    (cpm.generate_features; 'gaussian' is 'iid', as `cpm train` names it), head h of layer `layer`
    from replica layer * heads + h as `cpm train` draws them; a projection's rows are scaled to
    unit length, as the recall study starts them. `omega` (heads, rows, head_dim) gives them
    instead. generator_options go to cpm.generate_features.

    Protocol (fast-transformers): ParticleFeatureMap.factory(...), new_feature_map(device),
    forward_queries(x), forward_keys(x, mask=None); forward(x) is forward_queries(x). The particles
    are redrawn by new_feature_map only when asked: at every call with redraw=True, or once after
    request_redraw(); never after freeze(). `recorder`, when set, is called as recorder("query", x)
    or recorder("key", x) with the input before each map.
    """

    def __init__(self, head_dim, features=None, heads=1, map="favor", generator="orthogonal",
                 seed=1, bandwidth=1.0, normalise_keys=None, trainable=False, epsilon=1e-6,
                 dpfp_nu=1, projected=False, layer=0, redraw=False, omega=None,
                 **generator_options):
        super().__init__()
        self._check_arguments(head_dim, features, heads, map, generator, bandwidth, epsilon,
                              normalise_keys, projected, trainable, redraw)
        self.head_dim, self.heads, self.map = head_dim, heads, map
        self.bandwidth, self.epsilon, self.dpfp_nu, self.projected = (
            float(bandwidth), float(epsilon), int(dpfp_nu), bool(projected))
        self.normalise_keys = normalise_keys
        self.generator, self.seed, self.layer = generator, seed, layer
        self.generator_options = generator_options
        self.redraw, self.draws, self._redraw_requested, self._frozen = redraw, 0, False, False
        self.recorder = None
        if omega is None:
            self.rows = _particle_rows(map, features, head_dim, self.dpfp_nu, self.projected)
            _check_dpfp(map, self.rows, head_dim, self.dpfp_nu, self.projected)
            omega = self._draw(0)
        else:
            omega = self._given_particles(omega, features)
        if trainable:
            self.omega = torch.nn.Parameter(omega)
        else:
            self.register_buffer("omega", omega)

    @staticmethod
    def _check_arguments(head_dim, features, heads, map, generator, bandwidth, epsilon,
                         normalise_keys, projected, trainable, redraw):
        if map not in MAPS:
            raise ValueError(f"map: unknown feature map '{map}' ({', '.join(MAPS)})")
        if generator not in GENERATORS:
            raise ValueError(f"generator: unknown generator '{generator}' "
                             f"({', '.join(GENERATORS)})")
        for name, value in (("head_dim", head_dim), ("heads", heads)):
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"{name}: must be an integer >= 1, not {value!r}")
        if features is not None and (not isinstance(features, int) or features < 1):
            raise ValueError(f"features: must be an integer >= 1, not {features!r}")
        if not (bandwidth > 0 and math.isfinite(bandwidth)):
            raise ValueError(f"bandwidth: must be positive and finite, not {bandwidth}")
        if not (epsilon >= 0 and math.isfinite(epsilon)):
            raise ValueError(f"epsilon: must be >= 0 and finite, not {epsilon}")
        if normalise_keys not in KEY_NORMS:
            raise ValueError(f"normalise_keys: must be None, 'l2' or 'l1', not {normalise_keys!r}")
        if projected and map != "dpfp":
            raise ValueError(f"projected: only dpfp has a projected form (taylor always is), "
                             f"not '{map}'")
        if trainable and redraw:
            raise ValueError("redraw: trainable particles are not redrawn")

    def _given_particles(self, omega, features):
        """omega (heads, rows, head_dim), or (rows, head_dim) for one head, as float64."""
        omega = torch.as_tensor(omega).detach().to(torch.float64)
        if omega.ndim == 2 and self.heads == 1:
            omega = omega[None]
        expected = f"({self.heads}, rows, {self.head_dim})"
        if omega.ndim != 3 or omega.shape[0] != self.heads or omega.shape[2] != self.head_dim:
            raise ValueError(f"omega: expected shape {expected}, got {tuple(omega.shape)}")
        self.rows = omega.shape[1]
        if features is not None and self.rows != _particle_rows(
                self.map, features, self.head_dim, self.dpfp_nu, self.projected):
            raise ValueError(f"omega: {self.rows} rows do not fit features = {features}")
        if (self.rows == 0) != (self.map in ("elu", "dpfp") and not self.projected):
            raise ValueError(f"omega: {self.rows} rows for the map '{self.map}'")
        _check_dpfp(self.map, self.rows, self.head_dim, self.dpfp_nu, self.projected)
        return omega.clone()

    @classmethod
    def from_particles_array(cls, omega, map="favor", **options):
        """A map on given particles omega (heads, rows, head_dim), or (rows, head_dim)."""
        shape = np.shape(omega)
        if len(shape) not in (2, 3):
            raise ValueError(f"omega: expected (heads, rows, head_dim) or (rows, head_dim), got "
                             f"shape {shape}")
        heads = shape[0] if len(shape) == 3 else 1
        return cls(shape[-1], heads=heads, map=map, omega=omega, **options)

    @classmethod
    def from_particles(cls, x, y, features, map="favor", **options):
        """One head's particles learned from data x (n, head_dim) and labels y by
        cpm.learn_particles (options: its keyword arguments) for favor, porf-softplus or
        softmaxfeat; x as the map reads it (s q: learn_particles does not scale)."""
        omega, _, _ = _cpm.learn_particles(x, y, n=features, map=map, **options)
        return cls.from_particles_array(omega, map=map)

    @classmethod
    def factory(cls, *args, **kwargs):
        """f(query_dimensions, **overrides) -> ParticleFeatureMap(query_dimensions, *args,
        **kwargs, **overrides): fast-transformers' feature_map_factory, called when the layer
        knows its head size (KernelAttention passes heads= as an override)."""
        def make(query_dimensions, **overrides):
            return cls(query_dimensions, *args, **{**kwargs, **overrides})
        return make

    @property
    def frozen(self):
        """True after freeze(): a buffer, never redrawn."""
        return self._frozen

    def freeze(self):
        """Makes the particles fixed: a buffer without gradient, never redrawn."""
        if isinstance(self.omega, torch.nn.Parameter):
            omega = self.omega.detach()
            del self.omega
            self.register_buffer("omega", omega)
        self._frozen = True

    def set_particles(self, omega):
        """Copies omega (heads, rows, head_dim) into the particles, on their device and dtype."""
        omega = torch.as_tensor(omega)
        if tuple(omega.shape) != tuple(self.omega.shape):
            raise ValueError(f"omega: expected shape {tuple(self.omega.shape)}, got "
                             f"{tuple(omega.shape)}")
        with torch.no_grad():
            self.omega.copy_(omega)

    def request_redraw(self):
        """Asks the next new_feature_map call for new particles (ignored once frozen)."""
        self._redraw_requested = True

    def new_feature_map(self, device=None):
        """fast-transformers' hook, called by the attention before each pass: draws the next
        particles (draw k from replicas k * 1024 + block) when redraw=True or after
        request_redraw(), never when frozen. The particles stay where .to() put them (`device`
        is the protocol's argument)."""
        if self._frozen or self.rows == 0 or not (self.redraw or self._redraw_requested):
            return
        self._redraw_requested = False
        self.draws += 1
        self.set_particles(self._draw(self.draws))

    def _draw(self, draw):
        """(heads, rows, head_dim) float64 from cpm's generator, draw `draw` (0: the first)."""
        blocks = np.zeros((self.heads, self.rows, self.head_dim))
        method = "iid" if self.generator == "gaussian" else self.generator
        for h in range(self.heads if self.rows > 0 else 0):
            replica = draw * REDRAW_STRIDE + self.layer * self.heads + h
            w = _cpm.generate_features(method, self.rows, self.head_dim, seed=self.seed,
                                       replica=replica, **self.generator_options)
            if self.map == "taylor" or self.projected:
                w = w / np.linalg.norm(w, axis=1, keepdims=True)
            blocks[h] = w
        return torch.from_numpy(blocks)

    @property
    def feature_dim(self):
        """D_phi, the features of each head (feature_dimension)."""
        return _feature_dim(self.map, self.rows, self.head_dim, self.dpfp_nu, self.projected)

    @property
    def scale(self):
        """s = bandwidth * head_dim^(-1/4) (feature_input_scale)."""
        return self.bandwidth / math.sqrt(math.sqrt(self.head_dim))

    def forward(self, x):
        """The queries' features, forward_queries(x)."""
        return self.forward_queries(x)

    def forward_queries(self, x):
        """phi(q), favor shifted per token."""
        if self.recorder is not None:
            self.recorder("query", x)
        q = self._heads_layout(x)
        return self._features(q, self._query_shift).reshape(*x.shape[:-1], self.feature_dim)

    def forward_keys(self, x, mask=None):
        """phi(k), favor shifted once per (sequence, head) over the real tokens; with mask
        (B, T), True for real tokens, the padding keys' features are zero. normalise_keys divides
        each key's features by their l2 or l1 norm."""
        if self.recorder is not None:
            self.recorder("key", x)
        k = self._heads_layout(x)
        real = self._mask_layout(mask, x, k)
        phi = self._features(k, lambda u: self._key_shift(u, real))
        if self.normalise_keys is not None:
            phi = phi / torch.linalg.vector_norm(phi, ord=KEY_NORMS[self.normalise_keys], dim=-1,
                                                 keepdim=True)
        if real is not None:
            phi = phi.masked_fill(~real[:, :, None, None], 0.0)
        return phi.reshape(*x.shape[:-1], self.feature_dim)

    def _heads_layout(self, x):
        """x as [B, T, H, D]: [B, T, H, D] itself, or for one head [D], [T, D], [B, T, D]."""
        if not torch.is_tensor(x) or not x.is_floating_point():
            raise ValueError("x: expected a floating-point torch.Tensor")
        if x.ndim == 0 or x.shape[-1] != self.head_dim:
            raise ValueError(f"x: the last dimension must be head_dim = {self.head_dim}, got "
                             f"shape {tuple(x.shape)}")
        if x.ndim == 4 and x.shape[2] == self.heads:
            return x
        if self.heads == 1 and x.ndim <= 3:
            return x.reshape((1,) * (3 - x.ndim) + tuple(x.shape[:-1]) + (1, self.head_dim))
        raise ValueError(f"x: expected [B, T, {self.heads}, {self.head_dim}]"
                         f"{' (or [..., T, D] for one head)' if self.heads == 1 else ''}, got "
                         f"shape {tuple(x.shape)}")

    @staticmethod
    def _mask_layout(mask, x, k):
        """mask (B, T) of k's [B, T, H, D] layout, given as x's shape without its head axes."""
        if mask is None:
            return None
        mask = torch.as_tensor(mask, device=k.device)
        expected = tuple(x.shape[:2]) if x.ndim == 4 else tuple(x.shape[:-1])
        if tuple(mask.shape) != expected:
            raise ValueError(f"mask: expected shape {expected}, got {tuple(mask.shape)}")
        return mask.to(torch.bool).reshape(k.shape[:2])

    def _features(self, x, favor_shift):
        """phi [B, T, H, D_phi] of x [B, T, H, D]."""
        omega = self.omega.to(dtype=x.dtype, device=x.device)
        if self.map == "favor":
            return self._favor(x, omega, favor_shift)
        if self.rows == 0:  # elu, native dpfp: on y = s x
            return _MAP_FORMULAS[self.map](self.scale * x, self.epsilon, self.dpfp_nu)
        u = self.scale * torch.einsum("bthd,hrd->bthr", x, omega)  # u = s W x
        return _MAP_FORMULAS[self.map](u, self.epsilon, self.dpfp_nu)

    def _favor(self, x, omega, shift):
        """exp(u - c) + eps, u = s w.x - s^2 |x|^2 / 2, c = shift(u) held constant."""
        s = self.scale
        u = s * torch.einsum("bthd,hrd->bthr", x, omega) - 0.5 * s * s * (x * x).sum(
            -1, keepdim=True)
        return torch.exp(u - shift(u).detach()) + self.epsilon

    @staticmethod
    def _query_shift(u):
        """c per token: max_k u_k."""
        return u.amax(-1, keepdim=True)

    @staticmethod
    def _key_shift(u, real):
        """One c per (sequence, head): the max over its real tokens and every row."""
        if real is not None:
            u = u.masked_fill(~real[:, :, None, None], -math.inf)
        c = u.amax(dim=(1, 3), keepdim=True)
        return torch.where(torch.isfinite(c), c, torch.zeros_like(c))  # a sequence of padding

    def extra_repr(self):
        return (f"head_dim={self.head_dim}, heads={self.heads}, map='{self.map}', "
                f"rows={self.rows}, feature_dim={self.feature_dim}, frozen={self._frozen}")
