"""cpm.torch.phase_a: Phase A on a PyTorch model's own heads, head by head the arrays' Phase A
(cpm.attention_phase_a) on the queries and keys the model gives, layer by layer from the bottom,
the particles written back and frozen."""
import numpy as np
import pytest

import cpm

torch = pytest.importorskip("torch")
import cpm.torch  # noqa: E402

D_MODEL, HEADS, HEAD_DIM, FEATURES = 8, 2, 4, 6


class Stack(torch.nn.Module):
    """Residual KernelAttention layers, the input (B, T, d_model) and an optional mask."""

    def __init__(self, layers=1, causal=False):
        super().__init__()
        self.blocks = torch.nn.ModuleList(
            cpm.torch.KernelAttention(
                D_MODEL, HEADS, cpm.torch.ParticleFeatureMap(HEAD_DIM, FEATURES, heads=HEADS,
                                                             seed=layer + 1), causal=causal)
            for layer in range(layers))

    def forward(self, x, mask=None):
        for block in self.blocks:
            x = x + block(x, mask=mask)
        return x


def _model(layers=1, causal=False):
    torch.manual_seed(0)
    return Stack(layers, causal).double()


def _batches(count=2, batch=3, length=5):
    g = torch.Generator().manual_seed(1)
    return [torch.randn(batch, length, D_MODEL, generator=g, dtype=torch.float64)
            for _ in range(count)]


def _heads_of(block, inputs, masks=None):
    """Each head's (rows, head_dim) queries and keys over the batches, and the sequence numbers."""
    qs, ks, sequence, first = [], [], [], 0
    for i, x in enumerate(inputs):
        b, t, _ = x.shape
        q = block.q_proj(x).reshape(b, t, HEADS, HEAD_DIM)
        k = block.k_proj(x).reshape(b, t, HEADS, HEAD_DIM)
        for s in range(b):
            keep = slice(None) if masks is None else masks[i][s]
            qs.append(q[s][keep])
            ks.append(k[s][keep])
            sequence += [first] * qs[-1].shape[0]
            first += 1
    q, k = torch.cat(qs).detach(), torch.cat(ks).detach()
    return [(q[:, h].numpy(), k[:, h].numpy()) for h in range(HEADS)], np.array(sequence)


def _expected_layer(block, inputs, layer, masks=None, **options):
    heads, sequence = _heads_of(block, inputs, masks)
    omega = block.feature_map.omega.detach()
    return np.stack([
        cpm.attention_phase_a(q, k, omega[h].numpy(), sequence=sequence, causal=block.causal,
                              replica=layer * HEADS + h, **options)[0]
        for h, (q, k) in enumerate(heads)])


def test_each_head_gets_the_particles_of_the_arrays_phase_a():
    model, batches = _model(), _batches()
    expected = _expected_layer(model.blocks[0], batches, 0, max_iterations=20)
    table = cpm.torch.phase_a(model, batches, max_iterations=20, progress=False)
    assert np.array_equal(model.blocks[0].feature_map.omega.numpy(), expected)
    assert list(table["head"]) == [0, 1] and list(table["layer"]) == [0, 0]
    assert list(table["module"]) == ["blocks.0.feature_map"] * 2
    assert (table["alignment_after"] < table["alignment_before"]).all()


def test_layers_are_aligned_from_the_bottom_with_the_updated_layers_below():
    model, batches = _model(layers=2), _batches()
    reference = _model(layers=2)
    first = _expected_layer(reference.blocks[0], batches, 0, max_iterations=10)
    reference.blocks[0].feature_map.set_particles(torch.as_tensor(first))
    with torch.no_grad():  # the second layer sees the first layer's output with its new particles
        inputs = [x + reference.blocks[0](x) for x in batches]
    second = _expected_layer(reference.blocks[1], inputs, 1, max_iterations=10)
    cpm.torch.phase_a(model, batches, max_iterations=10, progress=False)
    assert np.array_equal(model.blocks[0].feature_map.omega.numpy(), first)
    assert np.array_equal(model.blocks[1].feature_map.omega.numpy(), second)


def test_the_particles_are_frozen_and_the_model_keeps_its_mode():
    model, batches = _model(), _batches()
    model.train()
    fmap = model.blocks[0].feature_map
    cpm.torch.phase_a(model, batches, max_iterations=3, progress=False)
    assert fmap.frozen and model.training and fmap.recorder is None
    omega = fmap.omega.clone()
    fmap.request_redraw()
    fmap.new_feature_map(omega.device)
    assert torch.equal(fmap.omega, omega)
    out = model(batches[0])  # the linearised model still runs and back-propagates
    out.sum().backward()


def test_padding_is_left_out_and_causal_comes_from_the_attention():
    model, batches = _model(causal=True), _batches()
    masks = [torch.arange(5)[None, :] < torch.tensor([[5], [3], [1]]) for _ in batches]
    expected = _expected_layer(model.blocks[0], batches, 0, masks=masks, max_iterations=5)
    changed = [x.clone() for x in batches]
    for x, m in zip(changed, masks):
        x[~m] = 100.0  # padding values must not matter
    cpm.torch.phase_a(model, [(x, m) for x, m in zip(changed, masks)], masks=masks,
                      max_iterations=5, progress=False)
    assert np.array_equal(model.blocks[0].feature_map.omega.numpy(), expected)


def test_labels_target_reads_one_label_per_sequence():
    model, batches = _model(), _batches()
    labels = [torch.tensor([0, 1, 0]), torch.tensor([1, 1, 0])]
    heads, sequence = _heads_of(model.blocks[0], batches)
    omega = model.blocks[0].feature_map.omega
    expected = cpm.attention_phase_a(*heads[1], omega[1].numpy(), sequence=sequence,
                                     target="labels", labels=[0, 1, 0, 1, 1, 0], replica=1,
                                     steps=4)[0]
    table = cpm.torch.phase_a(model, batches, target="labels", labels=labels, steps=4,
                              progress=False)
    assert np.array_equal(model.blocks[0].feature_map.omega[1].numpy(), expected)
    assert (table["steps"] == 4).all()


def test_bad_calls_raise_value_error():
    with pytest.raises(ValueError, match="model: holds no cpm.torch.ParticleFeatureMap"):
        cpm.torch.phase_a(torch.nn.Linear(8, 8).double(), _batches(), progress=False)
    with pytest.raises(ValueError, match="labels: target 'labels' needs"):
        cpm.torch.phase_a(_model(), _batches(), target="labels", progress=False)
    with pytest.raises(ValueError, match="masks: 1 masks for 2 batches"):
        cpm.torch.phase_a(_model(), _batches(), masks=[torch.ones(3, 5, dtype=torch.bool)],
                          progress=False)
    with pytest.raises(ValueError, match="batches: no batch"):
        cpm.torch.phase_a(_model(), [], progress=False)
    with pytest.raises(ValueError, match="wobble: not an option"):
        cpm.torch.phase_a(_model(), _batches(), wobble=1, progress=False)


def test_a_model_on_the_gpu_gets_its_particles_on_the_gpu(cuda_device):
    model, batches = _model(), _batches()
    expected = _expected_layer(model.blocks[0], batches, 0, max_iterations=5)
    model.to(cuda_device)
    cpm.torch.phase_a(model, [x.to(cuda_device) for x in batches], max_iterations=5,
                      progress=False)
    omega = model.blocks[0].feature_map.omega
    assert omega.is_cuda
    assert np.allclose(omega.cpu().numpy(), expected, rtol=1e-9, atol=1e-12)


h5py = pytest.importorskip("h5py")


@pytest.mark.parametrize("map_name", ["favor", "porf-softplus"])
def test_the_pytorch_copy_of_a_cpm_train_model_gets_its_particles_to_float32_keys(
        map_name, tiny_sst2, tmp_path, command_line):
    """cpm train runs Phase A alone (one warm-up epoch, no epoch after) and writes its tokens;
    the PyTorch copy of model.h5, started from the same particles on the same sequences, gives
    Phase A's particles to the difference its float32 keys make: PyTorch sums the projections in
    another order than the C++ (about 1e-7 of each key), and the C++ model rounds a layer's new
    particles to float before the next layer's keys (measured: 1e-9 of the particles in the first
    layer, 2e-8 in the second, 3e-7 of Phase A's displacement)."""
    out = tmp_path / "out"
    config = tmp_path / "train.toml"
    config.write_text(
        f'[data]\ndataset = "sst2"\ndirectory = "{tiny_sst2}"\nmax_length = 16\nmin_count = 1\n'
        f'[model]\nd_model = 16\nheads = 2\nlayers = 2\nd_ff = 16\nfeatures = 8\ndropout = 0.0\n'
        f'attention = "kernel-{map_name}"\n[training]\nepochs = 0\nbatch_size = 16\n'
        f'learning_rate = 0.03\nwarmup_steps = 1\nseed = 3\n[phase_a]\nwarmup_epochs = 2\n'
        f'sequences = 40\nwrite_tokens = true\n[phase_a.dynamics]\nsteps = 6\n'
        f'[evaluation]\nrobustness = false\n[output]\ndirectory = "{out}"\n')
    command_line("train", config, "--quiet")
    model = cpm.torch.TransformerClassifier.from_model_file(out / "model.h5")
    with h5py.File(out / "phase_a_tokens.h5", "r") as f:
        tokens = torch.as_tensor(f["tokens"][:]).long()
        lengths = torch.as_tensor(f["sequence_lengths"][:])
        labels = torch.as_tensor(f["labels"][:])
        initial, final = ([np.stack([f[f"layer_{layer}/head_{h}/{name}_particles"][:]
                                     for h in range(2)]) for layer in range(2)]
                          for name in ("initial", "final"))
    maps = [block.attention.feature_map for block in model.blocks]
    for fmap, start in zip(maps, initial):
        fmap.set_particles(torch.as_tensor(start))
    mask = torch.arange(tokens.shape[1]) < lengths[:, None]
    batches = [(tokens[i:i + 16], lengths[i:i + 16]) for i in range(0, len(tokens), 16)]
    cpm.torch.phase_a(model, batches, target="labels", masks=mask.split(16),
                      labels=labels.split(16), seed=3, steps=6, progress=False)
    for fmap, start, end in zip(maps, initial, final):
        difference = np.abs(fmap.omega.double().numpy() - end).max()
        print(f"{map_name}: |torch - cpm train| {difference:.2e}, Phase A moved the particles "
              f"by {np.abs(end - start).max():.2e}")
        assert difference <= 1e-5 * np.abs(end - start).max()


def test_sequences_keeps_the_first_sequences_of_the_batches():
    model, batches = _model(), _batches()
    labels = [torch.tensor([0, 1, 0]), torch.tensor([1, 1, 0])]
    heads, sequence = _heads_of(model.blocks[0], [batches[0], batches[1][:1]])
    omega = model.blocks[0].feature_map.omega
    expected = [cpm.attention_phase_a(*heads[h], omega[h].numpy(), sequence=sequence,
                                      target="labels", labels=[0, 1, 0, 1], replica=h,
                                      steps=3)[0] for h in range(HEADS)]
    cpm.torch.phase_a(model, batches, target="labels", labels=labels, sequences=4, steps=3,
                      progress=False)
    assert np.array_equal(model.blocks[0].feature_map.omega.numpy(), np.stack(expected))
    with pytest.raises(ValueError, match="sequences: expected a positive integer"):
        cpm.torch.phase_a(_model(), batches, sequences=0, progress=False)
