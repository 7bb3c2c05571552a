"""cpm.torch.KernelAttention against the C++ linear attention (cpm.linear_attention: the forward
and backward passes of transformer/linear_attention.hpp and causal_linear_attention.hpp), against
its own explicit (T x T) weights, and by finite differences."""
import numpy as np
import pytest

import cpm

torch = pytest.importorskip("torch")
import cpm.torch  # noqa: E402
from cpm.torch import KernelAttention, ParticleFeatureMap  # noqa: E402
from cpm.torch.kernel_attention import attention_weights  # noqa: E402

rng = np.random.default_rng(7)
B, HEADS, HEAD = 2, 2, 4
MAPS = [("favor", {}), ("porf-softplus", {}), ("softmaxfeat", {}), ("hedgehog", {}),
        ("elu", {}), ("dpfp", {"dpfp_nu": 2}), ("dpfp", {"dpfp_nu": 1, "projected": True}),
        ("taylor", {})]


def attention(map="favor", causal=False, features=6, chunk=64, **options):
    phi = ParticleFeatureMap(HEAD, features, heads=HEADS, map=map, seed=2, **options)
    return KernelAttention(HEADS * HEAD, HEADS, phi, causal=causal, chunk=chunk).double()


def tensors(*shape, scale=1.0):
    return [torch.tensor(scale * rng.normal(size=shape), requires_grad=True) for _ in range(3)]


@pytest.mark.parametrize("map, options", MAPS)
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("keys", [None, "l2", "l1"])
def test_the_attention_and_its_gradients_are_the_library_ones(map, causal, options, keys):
    layer = attention(map, causal, trainable=True, bandwidth=1.2, normalise_keys=keys, **options)
    phi = layer.feature_map
    length = 70  # causal: two chunks of the C++ (64) and of the module
    q, k, v = tensors(B, length, HEADS, HEAD)
    lengths = None if causal else np.array([length, 41])
    mask = None if causal else torch.arange(length)[None] < torch.as_tensor(lengths)[:, None]
    out = layer.attend(q, k, v, mask)
    grad = rng.normal(size=out.shape)
    (out * torch.as_tensor(grad)).sum().backward()
    omega = phi.omega.detach().numpy() if phi.rows else None
    expected, grads = cpm.linear_attention(
        q.detach().numpy(), k.detach().numpy(), v.detach().numpy(), omega, map=map,
        causal=causal, bandwidth=1.2, dpfp_nu=phi.dpfp_nu, projected=phi.projected,
        lengths=lengths, grad_output=grad, normalise_keys=keys)
    close = dict(rtol=1e-10, atol=1e-12)
    assert np.allclose(out.detach().numpy(), expected, **close)
    for name, tensor in (("q", q), ("k", k), ("v", v)):
        assert np.allclose(tensor.grad.numpy(), grads[name], **close), name
    if phi.rows:
        assert np.allclose(phi.omega.grad.numpy(), grads["omega"], **close)
    else:
        assert grads["omega"] is None


def test_the_library_attention_without_gradients_is_its_output():
    q, k, v = (x.detach().numpy() for x in tensors(1, 5, 1, HEAD))
    out = cpm.linear_attention(q, k, v, map="elu")
    assert out.shape == (1, 5, 1, HEAD)
    assert np.allclose(out, cpm.linear_attention(q, k, v, map="elu", grad_output=q)[0])


@pytest.mark.parametrize("causal", [False, True])
def test_the_weights_sum_to_one_and_reproduce_the_output(causal):
    layer = attention("softmaxfeat", causal, chunk=4)
    q, k, v = tensors(B, 10, HEADS, HEAD)  # 10 tokens: chunks of 4, 4 and 2
    mask = torch.tensor([[True] * 10, [True] * 7 + [False] * 3])
    out, weights = layer.attend(q, k, v, mask, return_weights=True)
    assert weights.shape == (B, HEADS, 10, 10)
    assert torch.allclose(weights.sum(-1), torch.ones(B, HEADS, 10, dtype=torch.float64))
    assert torch.allclose(torch.einsum("bhij,bjhd->bihd", weights, v), out, rtol=1e-12)
    assert torch.all(weights[1, :, :, 7:] == 0)
    if causal:
        assert torch.all(weights.triu(1) == 0)


def test_causal_chunks_equal_the_masked_product_for_any_length():
    layer = attention("favor", True, chunk=16)
    q, k, v = tensors(1, 37, HEADS, HEAD)
    phi_q = layer.feature_map.forward_queries(q)
    phi_k = layer.feature_map.forward_keys(k)
    explicit = torch.einsum("bhij,bjhd->bihd", attention_weights(phi_q, phi_k, causal=True), v)
    assert torch.allclose(layer.attend(q, k, v), explicit, rtol=1e-12)


@pytest.mark.parametrize("map, causal", [("favor", False), ("favor", True), ("hedgehog", True)])
def test_gradients_match_finite_differences(map, causal):
    # favor with eps = 0: its detached shift is then exactly cancelled by the normalisation
    phi = ParticleFeatureMap(HEAD, 3, heads=HEADS, map=map, epsilon=0.0).double()
    layer = KernelAttention(HEADS * HEAD, HEADS, phi, causal=causal, chunk=2).double()
    x = torch.tensor(rng.normal(size=(1, 5, HEADS * HEAD)), requires_grad=True)
    mask = None if causal else torch.tensor([[True] * 4 + [False]])
    omega = phi.omega.clone().requires_grad_()

    def output(x, omega):
        phi.omega = omega  # a buffer: the particles as an input of the check
        return layer(x, mask)

    assert torch.autograd.gradcheck(output, (x, omega))


def test_favor_is_stable_at_large_norms():
    layer = attention("favor", False)
    q, k, v = (x.detach() for x in tensors(B, 9, HEADS, HEAD))
    q, k = (30 * x / x.norm(dim=-1, keepdim=True) for x in (q, k))
    out64 = layer.attend(q, k, v)
    library = cpm.linear_attention(q.numpy(), k.numpy(), v.numpy(), layer.feature_map.omega)
    assert np.allclose(out64.numpy(), library, rtol=1e-10)
    out32 = layer.float().attend(q.float(), k.float(), v.float())
    assert torch.isfinite(out32).all()
    assert torch.allclose(out32.double(), out64, rtol=1e-4, atol=1e-5)


def test_the_forward_pass_projects_attends_and_projects_back():
    layer = attention("taylor", True)
    x = torch.as_tensor(rng.normal(size=(B, 6, HEADS * HEAD)))
    out, weights = layer(x, return_weights=True)
    v = layer.v_proj(x).reshape(B, 6, HEADS, HEAD)
    heads = torch.einsum("bhij,bjhd->bihd", weights, v).reshape(B, 6, HEADS * HEAD)
    assert torch.allclose(out, layer.out_proj(heads), rtol=1e-10)


def test_tied_projections_read_the_keys_from_the_queries():
    phi = ParticleFeatureMap(HEAD, 6, heads=HEADS)
    layer = KernelAttention(HEADS * HEAD, HEADS, phi, qk_tied=True, bias=False).double()
    assert layer.k_proj is layer.q_proj and layer.q_proj.bias is None
    x = torch.as_tensor(rng.normal(size=(1, 5, HEADS * HEAD)))
    q = layer.q_proj(x).reshape(1, 5, HEADS, HEAD)
    v = layer.v_proj(x).reshape(1, 5, HEADS, HEAD)
    assert torch.allclose(layer(x), layer.out_proj(layer.attend(q, q, v).reshape(1, 5, -1)))


def test_a_factory_builds_the_map_of_the_heads_and_redraws_are_asked_before_each_pass():
    layer = KernelAttention(8, 2, ParticleFeatureMap.factory(5, map="softmaxfeat", redraw=True))
    phi = layer.feature_map
    assert (phi.heads, phi.head_dim, phi.rows) == (2, 4, 5)
    x = torch.zeros(1, 3, 8)
    before = phi.omega.clone()
    layer(x)
    assert phi.draws == 1 and not torch.equal(phi.omega, before)
    phi.freeze()
    layer(x)
    assert phi.draws == 1


def test_state_dict_and_dtype_round_trip():
    layer = attention("favor", False)
    other = KernelAttention(HEADS * HEAD, HEADS, ParticleFeatureMap(HEAD, 6, heads=HEADS, seed=9))
    other.load_state_dict(layer.float().state_dict())
    x = torch.as_tensor(rng.normal(size=(1, 4, HEADS * HEAD)), dtype=torch.float32)
    assert torch.equal(other(x), layer(x))
    assert other.double()(x.double()).dtype == torch.float64


def test_bad_arguments_are_refused_by_name():
    phi = ParticleFeatureMap(HEAD, 6, heads=HEADS)
    with pytest.raises(ValueError, match="^heads:"):
        KernelAttention(9, 2, phi)
    with pytest.raises(ValueError, match="^feature_map:"):
        KernelAttention(HEADS * HEAD * 2, HEADS, phi)
    with pytest.raises(ValueError, match="^dropout:"):
        KernelAttention(HEADS * HEAD, HEADS, phi, dropout=1.0)
    with pytest.raises(ValueError, match="^x:"):
        KernelAttention(HEADS * HEAD, HEADS, phi)(torch.zeros(1, 3, 5))


def test_the_library_attention_refuses_bad_arrays_by_name():
    q = rng.normal(size=(1, 3, 2, HEAD))
    omega = rng.normal(size=(2, 5, HEAD))
    cases = [
        ({"q": q[0]}, "q"), ({"k": q[:, :2]}, "k"), ({"omega": None}, "omega"),
        ({"omega": omega[:1]}, "omega"), ({"map": "rff"}, "map"), ({"map": "grid"}, "map"),
        ({"causal": True, "lengths": [3]}, "lengths"), ({"lengths": [4]}, "lengths"),
        ({"grad_output": q[:, :2]}, "grad_output"), ({"bandwidth": 0.0}, "bandwidth"),
        ({"normalise_keys": "l3"}, "normalise_keys")]
    for change, name in cases:
        arguments = {"q": q, "k": q, "v": q, "omega": omega, **change}
        with pytest.raises(ValueError, match=f"^{name}"):
            cpm.linear_attention(**arguments)
