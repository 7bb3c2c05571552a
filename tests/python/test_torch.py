"""cpm.torch.ParticleFeatureMap: the maps of cpm.attention_features in PyTorch, per head, with
cpm's particles, and the protocol of fast-transformers' feature maps."""
import math

import numpy as np
import pytest

import cpm

torch = pytest.importorskip("torch")
import cpm.torch  # noqa: E402

ParticleFeatureMap = cpm.torch.ParticleFeatureMap
rng = np.random.default_rng(2)
HEAD, HEADS = 4, 3

# Every map of linear attention, with features = 12: r = 12 particles (hedgehog: D_phi = 24),
# taylor d' = 3 (D_phi = 10), the projected dpfp d' = 12 // 4 = 3.
MAPS = [("favor", {}), ("porf-softplus", {}), ("softmaxfeat", {}), ("hedgehog", {}),
        ("elu", {}), ("dpfp", {"dpfp_nu": 2}), ("dpfp", {"dpfp_nu": 3, "projected": True}),
        ("taylor", {})]


def library_features(phi, x, h):
    """cpm.attention_features of head h for x [..., D]: [..., D_phi]."""
    omega = phi.omega[h].numpy() if phi.rows else None
    flat = cpm.attention_features(phi.map, x.reshape(-1, phi.head_dim), omega,
                                  dpfp_nu=phi.dpfp_nu, projected=phi.projected,
                                  epsilon=phi.epsilon, bandwidth=phi.bandwidth)
    return flat.reshape(*x.shape[:-1], -1)


@pytest.mark.parametrize("map, options", MAPS)
@pytest.mark.parametrize("bandwidth", [1.0, 1.7])
def test_queries_are_the_library_features_of_each_head(map, options, bandwidth):
    phi = ParticleFeatureMap(HEAD, 12, heads=HEADS, map=map, bandwidth=bandwidth, seed=3,
                             **options)
    x = rng.normal(size=(2, 5, HEADS, HEAD))
    got = phi(torch.as_tensor(x)).numpy()
    assert got.shape == (2, 5, HEADS, phi.feature_dim)
    for h in range(HEADS):
        assert np.allclose(got[:, :, h], library_features(phi, x[:, :, h], h), rtol=1e-12,
                           atol=1e-15)


@pytest.mark.parametrize("map, options", MAPS[1:])
def test_keys_of_the_unshifted_maps_are_the_library_features(map, options):
    phi = ParticleFeatureMap(HEAD, 12, heads=HEADS, map=map, seed=3, **options)
    x = rng.normal(size=(2, 5, HEADS, HEAD))
    got = phi.forward_keys(torch.as_tensor(x)).numpy()
    for h in range(HEADS):
        assert np.allclose(got[:, :, h], library_features(phi, x[:, :, h], h), rtol=1e-12,
                           atol=1e-15)


def favor_keys(x, omega, s, real, eps=1e-6):
    """exp(u - c) + eps, u = s w.x - s^2 |x|^2 / 2, c the max over each (sequence, head)'s real
    tokens; padding zero."""
    u = s * np.einsum("bthd,hrd->bthr", x, omega) - 0.5 * s * s * (x * x).sum(-1)[..., None]
    c = np.where(real[:, :, None, None], u, -np.inf).max(axis=(1, 3), keepdims=True)
    return np.where(real[:, :, None, None], np.exp(u - c) + eps, 0.0)


def test_favor_keys_share_one_shift_per_sequence_and_head_over_the_real_tokens():
    phi = ParticleFeatureMap(HEAD, 12, heads=HEADS, bandwidth=1.3)
    x = rng.normal(size=(2, 5, HEADS, HEAD))
    real = np.array([[True] * 5, [True] * 3 + [False] * 2])
    got = phi.forward_keys(torch.as_tensor(x), torch.as_tensor(real)).numpy()
    assert np.allclose(got, favor_keys(x, phi.omega.numpy(), phi.scale, real), rtol=1e-12)
    assert math.isclose(phi.scale, 1.3 * HEAD ** -0.25, rel_tol=1e-15)


def test_one_head_takes_any_leading_shape():
    phi = ParticleFeatureMap(HEAD, 7, map="hedgehog")
    x = torch.as_tensor(rng.normal(size=(2, 5, HEAD)))
    full = phi(x[:, :, None])
    assert full.shape == (2, 5, 1, 14)
    assert torch.equal(phi(x), full[:, :, 0])
    assert torch.equal(phi(x[0]), full[0, :, 0])
    assert torch.equal(phi(x[0, 0]), full[0, 0, 0])
    assert torch.equal(phi.forward_keys(x[1]), phi.forward_keys(x)[1])


def test_the_particles_are_those_cpm_train_draws_for_each_head():
    phi = ParticleFeatureMap(HEAD, 6, heads=2, generator="orthogonal", seed=5, layer=1)
    for h in range(2):  # replica layer * heads + h
        expected = cpm.generate_features("orthogonal", 6, HEAD, seed=5, replica=2 + h)
        assert torch.equal(phi.omega[h], torch.as_tensor(expected))
    gaussian = ParticleFeatureMap(HEAD, 6, generator="gaussian")
    assert torch.equal(gaussian.omega[0], torch.as_tensor(cpm.generate_features("iid", 6, HEAD)))
    taylor = ParticleFeatureMap(HEAD, 10, map="taylor")  # a projection of unit rows
    assert taylor.rows == 3 and taylor.feature_dim == 10
    assert torch.allclose(taylor.omega.norm(dim=-1), torch.ones(1, 3, dtype=torch.float64))
    assert ParticleFeatureMap(HEAD, None, map="elu").omega.shape == (1, 0, HEAD)


def test_given_particles_are_used_as_they_are():
    omega = rng.normal(size=(5, HEAD))
    phi = ParticleFeatureMap.from_particles_array(omega, map="softmaxfeat")
    assert (phi.heads, phi.rows, phi.feature_dim) == (1, 5, 5)
    assert torch.equal(phi.omega[0], torch.as_tensor(omega))
    heads = ParticleFeatureMap.from_particles_array(rng.normal(size=(2, 3, HEAD)), map="taylor")
    assert (heads.heads, heads.rows, heads.feature_dim) == (2, 3, 10)


def test_learned_particles_train_inside_a_model():
    x = rng.normal(size=(100, HEAD))
    y = (x[:, 0] * x[:, 1] > 0).astype(int)
    phi = ParticleFeatureMap.from_particles(x, y, 16, steps=5, step=0.01, radius=4.0)
    assert phi.feature_dim == 16 and not phi.omega.requires_grad
    trainable = ParticleFeatureMap.from_particles_array(phi.omega, trainable=True)
    trainable(torch.as_tensor(x, dtype=torch.float32)).sum().backward()
    assert trainable.omega.grad.shape == (1, 16, HEAD)


def test_the_factory_builds_the_map_when_the_head_size_is_known():
    make = ParticleFeatureMap.factory(8, map="softmaxfeat", seed=4)
    phi = make(HEAD)
    assert (phi.head_dim, phi.heads, phi.rows, phi.map, phi.seed) == (HEAD, 1, 8, "softmaxfeat", 4)
    assert make(6, heads=2).heads == 2


def test_new_feature_map_redraws_only_when_asked_and_never_when_frozen():
    fixed = ParticleFeatureMap(HEAD, 6, seed=2)
    first = fixed.omega.clone()
    fixed.new_feature_map("cpu")
    assert torch.equal(fixed.omega, first)
    fixed.request_redraw()
    fixed.new_feature_map("cpu")  # draw 1: replica 1024 + h
    redrawn = cpm.generate_features("orthogonal", 6, HEAD, seed=2, replica=1024)
    assert torch.equal(fixed.omega[0], torch.as_tensor(redrawn))
    fixed.new_feature_map("cpu")  # asked once
    assert torch.equal(fixed.omega[0], torch.as_tensor(redrawn))

    always = ParticleFeatureMap(HEAD, 6, redraw=True)
    before = always.omega.clone()
    always.new_feature_map("cpu")
    assert not torch.equal(always.omega, before)
    always.freeze()
    frozen = always.omega.clone()
    always.request_redraw()
    always.new_feature_map("cpu")
    assert always.frozen and torch.equal(always.omega, frozen)


def test_freeze_makes_trainable_particles_a_buffer_and_set_particles_copies_in():
    phi = ParticleFeatureMap(HEAD, 6, heads=2, trainable=True).float()
    assert isinstance(phi.omega, torch.nn.Parameter) and not phi.frozen
    phi.freeze()
    assert not isinstance(phi.omega, torch.nn.Parameter) and not phi.omega.requires_grad
    assert "omega" in dict(phi.named_buffers()) and phi.frozen
    new = rng.normal(size=(2, 6, HEAD))
    phi.set_particles(torch.as_tensor(new))
    assert phi.omega.dtype == torch.float32
    assert torch.equal(phi.omega, torch.as_tensor(new, dtype=torch.float32))


def test_the_recorder_sees_each_input_with_its_role_before_the_map():
    phi = ParticleFeatureMap(HEAD, 6, heads=2)
    seen = []
    phi.recorder = lambda role, x: seen.append((role, x))
    x = torch.as_tensor(rng.normal(size=(1, 3, 2, HEAD)))
    phi(x)
    phi.forward_queries(x)
    phi.forward_keys(x)
    assert [role for role, _ in seen] == ["query", "query", "key"]
    assert all(given is x for _, given in seen)


@pytest.mark.parametrize("norm, order", [("l2", 2), ("l1", 1)])
def test_normalised_keys_have_unit_norm_and_the_queries_are_untouched(norm, order):
    phi = ParticleFeatureMap(HEAD, 6, heads=2, map="taylor", normalise_keys=norm)
    x = torch.as_tensor(rng.normal(size=(2, 3, 2, HEAD)))
    keys = phi.forward_keys(x)
    assert torch.allclose(torch.linalg.vector_norm(keys, ord=order, dim=-1),
                          torch.ones(2, 3, 2, dtype=torch.float64))
    plain = ParticleFeatureMap(HEAD, 6, heads=2, map="taylor")
    assert torch.equal(phi.forward_queries(x), plain.forward_queries(x))
    assert torch.allclose(keys, plain.forward_keys(x) / plain.forward_keys(x).norm(
        p=order, dim=-1, keepdim=True))


@pytest.mark.parametrize("arguments, name", [
    ({"map": "rff"}, "map"), ({"generator": "grid"}, "generator"), ({"features": 0}, "features"),
    ({"features": None}, "features"), ({"normalise_keys": "l3"}, "normalise_keys"),
    ({"map": "dpfp", "dpfp_nu": 8}, "dpfp_nu"), ({"projected": True}, "projected"),
    ({"map": "taylor", "features": 2}, "features"), ({"heads": 0}, "heads"),
    ({"bandwidth": -1.0}, "bandwidth"), ({"epsilon": float("nan")}, "epsilon"), ({"omega": np.zeros((2, 3, HEAD))}, "omega"),
    ({"trainable": True, "redraw": True}, "redraw")])
def test_bad_arguments_are_refused_by_name(arguments, name):
    with pytest.raises(ValueError, match=f"^{name}:"):
        ParticleFeatureMap(**{"head_dim": HEAD, "features": 6, **arguments})


def test_bad_inputs_are_refused_by_name():
    phi = ParticleFeatureMap(HEAD, 6, heads=2)
    for x in (torch.zeros(1, 3, 2, HEAD + 1), torch.zeros(1, 3, HEAD),
              torch.zeros(1, 1, 3, 2, HEAD), torch.zeros(1, 3, 2, HEAD, dtype=torch.int64),
              np.zeros((1, 3, 2, HEAD))):
        with pytest.raises(ValueError, match="^x:"):
            phi(x)
    with pytest.raises(ValueError, match="^mask:"):
        phi.forward_keys(torch.zeros(1, 3, 2, HEAD), torch.ones(1, 4, dtype=torch.bool))
    with pytest.raises(ValueError, match="^omega:"):
        phi.set_particles(torch.zeros(2, 5, HEAD))


def test_dtype_device_and_state_dict_follow_the_module():
    phi = ParticleFeatureMap(HEAD, 6, heads=2, seed=1).float()
    x = torch.as_tensor(rng.normal(size=(1, 3, 2, HEAD)))
    assert phi(x.float()).dtype == torch.float32 and phi(x).dtype == torch.float64
    other = ParticleFeatureMap(HEAD, 6, heads=2, seed=9).float()
    other.load_state_dict(phi.state_dict())
    assert torch.equal(other.omega, phi.omega)
    assert other.double().omega.dtype == torch.float64


def test_a_cuda_device_gives_the_values_of_the_cpu(cuda_device):
    phi = ParticleFeatureMap(HEAD, 6, heads=2, map="hedgehog")
    x = torch.as_tensor(rng.normal(size=(2, 3, 2, HEAD)))
    on_device = phi.to(cuda_device).forward_keys(x.to(cuda_device))
    assert on_device.device.type == "cuda"
    assert torch.allclose(on_device.cpu(), phi.to("cpu").forward_keys(x), rtol=1e-10)


def test_favor_keys_stay_finite_at_large_norms():
    phi = ParticleFeatureMap(HEAD, 6, heads=1).float()
    x = torch.as_tensor(rng.normal(size=(2, 5, 1, HEAD)))
    x = 30 * x / x.norm(dim=-1, keepdim=True)
    for features in (phi.forward_queries(x.float()), phi.forward_keys(x.float())):
        assert torch.isfinite(features).all() and math.isclose(features.max().item(), 1 + 1e-6,
                                                                rel_tol=1e-6)
