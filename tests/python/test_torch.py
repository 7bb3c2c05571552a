"""cpm.torch.FeatureMap: the maps of cpm.feature_map in PyTorch, with cpm's frequencies."""
import numpy as np
import pytest

import cpm

torch = pytest.importorskip("torch")
import cpm.torch  # noqa: E402

X = np.random.default_rng(2).normal(scale=0.5, size=(9, 4))


@pytest.mark.parametrize("name", ["favor", "porf-softplus", "rff-pairs", "rff"])
def test_the_torch_map_equals_the_library_map(name):
    phi = cpm.torch.FeatureMap.from_generator("orthogonal", 8, 4, map=name, seed=3)
    omega = cpm.generate_features("orthogonal", 8, 4, seed=3)
    assert torch.equal(phi.omega, torch.as_tensor(omega))
    assert np.allclose(phi(torch.as_tensor(X)).numpy(), cpm.feature_map(name, X, omega),
                       rtol=1e-12, atol=1e-14)
    assert np.allclose(phi.kernel(torch.as_tensor(X), torch.as_tensor(X)).numpy(),
                       cpm.empirical_kernel(name, X, X, omega))


def test_learned_particles_train_inside_a_model():
    x = np.random.default_rng(0).normal(size=(100, 4))
    y = (x[:, 0] * x[:, 1] > 0).astype(int)
    phi = cpm.torch.FeatureMap.from_particles(x, y, 16, map="favor", steps=5, step=0.01)
    assert phi.features == 16 and not phi.omega.requires_grad
    trainable = cpm.torch.FeatureMap(phi.omega.numpy(), map="favor", trainable=True,
                                     stabilise=True)
    loss = trainable(torch.as_tensor(X, dtype=torch.float32)).sum()
    loss.backward()
    assert trainable.omega.grad.shape == (16, 4)


def test_bad_maps_are_refused():
    with pytest.raises(ValueError, match="unknown feature map"):
        cpm.torch.FeatureMap(np.zeros((4, 2)), map="dpfp")
    with pytest.raises(ValueError, match="2-D"):
        cpm.torch.FeatureMap(np.zeros(4))
