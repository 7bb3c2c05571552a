"""Feature maps on arrays against their formulas (physics/random_feature_maps.hpp,
transformer/attention_feature_maps.hpp), and the learned kernel as the mean of feature products."""
import numpy as np
import pytest

import cpm

rng = np.random.default_rng(5)
X = rng.normal(scale=0.5, size=(7, 3))
OMEGA = rng.normal(size=(11, 3))


def test_favor_softplus_and_pairs_are_their_formulas():
    z = X @ OMEGA.T
    half = 0.5 * (X * X).sum(1, keepdims=True)
    assert np.allclose(cpm.feature_map("favor", X, OMEGA), np.exp(z - half), rtol=1e-13)
    assert np.allclose(cpm.feature_map("porf-softplus", X, OMEGA), np.log1p(np.exp(z)))
    assert np.allclose(cpm.feature_map("rff-pairs", X, OMEGA), np.hstack([np.cos(z), np.sin(z)]))


def test_rff_uses_the_phases_of_its_seed():
    b = cpm.rff_phases(11, seed=4)
    assert b.shape == (11,) and (b >= 0).all() and (b < 2 * np.pi).all()
    assert np.allclose(cpm.feature_map("rff", X, OMEGA, seed=4),
                       np.sqrt(2) * np.cos(X @ OMEGA.T + b))


@pytest.mark.parametrize("name", ["rff", "rff-pairs", "favor", "porf-softplus", "softmaxfeat"])
def test_the_kernel_is_the_mean_of_feature_products(name):
    y = rng.normal(size=(4, 3))
    phi_x, phi_y = cpm.feature_map(name, X, OMEGA), cpm.feature_map(name, y, OMEGA)
    assert np.allclose(cpm.empirical_kernel(name, X, y, OMEGA), phi_x @ phi_y.T / len(OMEGA))


def test_attention_maps_have_their_sizes_and_signs():
    x = rng.normal(size=(5, 4))
    assert cpm.attention_features("elu", x).shape == (5, 4)
    dpfp = cpm.attention_features("dpfp", x, dpfp_nu=2)
    assert dpfp.shape == (5, 2 * 2 * 4) and (dpfp > 0).all()
    assert cpm.attention_features("hedgehog", x, rng.normal(size=(6, 4))).shape == (5, 12)
    taylor = cpm.attention_features("taylor", x, rng.normal(size=(3, 4)))
    assert taylor.shape == (5, 1 + 3 + 6) and np.all(taylor[:, 0] == 1.0)
    # rebased: P (3 rows), then gamma and beta in one row each; kernel eps + (y.y')^2
    block = np.vstack([rng.normal(size=(3, 4)), [1, 1, 1, 0], [0, 0, 0, 0]])
    rebased = cpm.attention_features("rebased", x, block)
    u = (4 ** -0.25) * x @ block[:3].T
    y = (u - u.mean(axis=1, keepdims=True)) / np.sqrt(u.var(axis=1, keepdims=True) + 1e-5)
    assert rebased.shape == (5, 1 + 6)
    assert np.allclose(rebased @ rebased.T, 1e-6 + (y @ y.T) ** 2)
    favor = cpm.attention_features("favor", x, rng.normal(size=(8, 4)))
    assert np.allclose(favor.max(axis=1), 1.0 + 1e-6)  # max-shifted per row, plus epsilon


def test_dpfp_is_the_product_of_rectified_rolls():
    x = rng.normal(size=(3, 4))
    s = 4 ** -0.25  # the head's input scale d_head^(-1/4)
    r = np.hstack([np.maximum(s * x, 0), np.maximum(-s * x, 0)])
    expected = r * np.roll(r, 1, axis=1) + 1e-6
    assert np.allclose(cpm.attention_features("dpfp", x), expected)
