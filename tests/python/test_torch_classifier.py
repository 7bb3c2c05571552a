"""cpm.torch.TransformerClassifier: the classifier a `cpm train` run saves, loaded into PyTorch,
gives the logits of the C++ model (cpm.classifier_logits) on the same padded batch."""
import numpy as np
import pytest

import cpm

torch = pytest.importorskip("torch")
pytest.importorskip("h5py")
import cpm.torch  # noqa: E402

MAX_LENGTH = 12


def train_config(data, output, attention, qk_tied, keys="none"):
    """A model that trains in a tenth of a second, at a rate that takes its weights far enough
    from their N(0, 0.02) start for GELU's tanh form and the q | k order to show in the logits."""
    return cpm.to_toml({
        "data": {"dataset": "sst2", "directory": str(data), "max_length": MAX_LENGTH},
        "model": {"d_model": 16, "heads": 2, "layers": 2, "d_ff": 32, "features": 8,
                  "attention": attention, "qk_tied": qk_tied, "normalise_keys": keys},
        "training": {"epochs": 2, "batch_size": 16, "warmup_steps": 2, "learning_rate": 0.03},
        "phase_a": {"sequences": 32, "dynamics": {"steps": 5}},
        "evaluation": {"robustness": False},
        "output": {"directory": str(output)},
    })


def padded_batch(vocabulary, rng, batch=6):
    """Random ids at the tokens, <pad> (0) after each sequence's length; one full row."""
    lengths = rng.integers(1, MAX_LENGTH + 1, size=batch)
    lengths[0] = MAX_LENGTH
    tokens = rng.integers(0, vocabulary, size=(batch, MAX_LENGTH))
    tokens[np.arange(MAX_LENGTH)[None, :] >= lengths[:, None]] = 0
    return tokens, lengths


@pytest.mark.parametrize("attention, qk_tied, keys", [
    ("kernel-favor", False, "none"), ("vanilla-porf-softplus", False, "none"),
    ("vanilla-softmaxfeat", True, "none"), ("softmax", False, "none"), ("uniform", True, "none"),
    ("vanilla-favor", False, "l2"), ("vanilla-porf-softplus", True, "l1"),
    ("kernel-favor", False, "l2")])
def test_the_torch_classifier_gives_the_logits_of_the_library(tmp_path, command_line, tiny_sst2,
                                                              attention, qk_tied, keys):
    config = tmp_path / "train.toml"
    config.write_text(train_config(tiny_sst2, tmp_path / "run", attention, qk_tied, keys))
    command_line("train", config, "--quiet")
    model_file = tmp_path / "run" / "model.h5"

    model = cpm.torch.TransformerClassifier.from_model_file(model_file)
    assert model.normalise_keys == (None if keys == "none" else keys)
    assert model.vocabulary[:3] == ["<pad>", "<unk>", "<sep>"] and "good" in model.vocabulary
    tokens, lengths = padded_batch(len(model.vocabulary), np.random.default_rng(3))
    expected = cpm.classifier_logits(str(model_file), tokens, lengths)
    with torch.no_grad():
        logits = model(torch.as_tensor(tokens), torch.as_tensor(lengths)).numpy()
    assert logits.dtype == expected.dtype == np.float32 and logits.shape == expected.shape
    # both float32, summed in other orders: measured up to 1.4e-6 of the largest logit (20 batches)
    assert np.max(np.abs(logits - expected)) <= 1e-5 * np.max(np.abs(expected))
    mask = torch.arange(MAX_LENGTH)[None, :] < torch.as_tensor(lengths)[:, None]
    with torch.no_grad():
        assert torch.equal(model(torch.as_tensor(tokens), mask=mask), torch.as_tensor(logits))


def test_a_file_that_is_no_model_is_refused_naming_it(tmp_path):
    bad = tmp_path / "not_a_model.h5"
    bad.write_text("plain text\n")
    tokens, lengths = np.zeros((1, 3), dtype=np.int64), np.array([3])
    with pytest.raises(ValueError, match="not_a_model.h5: not a readable cpm model checkpoint"):
        cpm.classifier_logits(str(bad), tokens, lengths)
    with pytest.raises(ValueError, match="not_a_model.h5: not a readable cpm model checkpoint"):
        cpm.torch.TransformerClassifier.from_model_file(bad)


def test_bad_batches_are_refused():
    with pytest.raises(ValueError, match="tokens: expected an integer array"):
        cpm.classifier_logits("unused.h5", np.zeros((1, 3)), np.array([3]))
    with pytest.raises(ValueError, match=r"lengths: entry 0 is 4, not in \[1, 3\]"):
        cpm.classifier_logits("unused.h5", np.zeros((1, 3), dtype=int), np.array([4]))


def test_a_map_without_one_particle_per_feature_is_refused():
    with pytest.raises(ValueError, match="no 'elu'"):
        cpm.torch.TransformerClassifier(16, 2, feature_map="elu")


def test_normalised_keys_refuse_phase_a_normalised_and_an_unknown_name(tmp_path, command_line,
                                                                       tiny_sst2):
    config = tmp_path / "train.toml"
    config.write_text(train_config(tiny_sst2, tmp_path / "run", "kernel-favor", False, "l2")
                      .replace("[phase_a]\n", "[phase_a]\nnormalised = true\n"))
    result = command_line("train", config, check=False)
    assert result.returncode == 2
    assert "phase_a.normalised" in result.stderr and "normalise_keys" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    config.write_text(train_config(tiny_sst2, tmp_path / "run", "vanilla-favor", False, "l3"))
    result = command_line("train", config, check=False)
    assert result.returncode == 2 and "normalise_keys" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
