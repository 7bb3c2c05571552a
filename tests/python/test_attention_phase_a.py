"""cpm.attention_phase_a: one head's Phase A on arrays, the same dynamics as cpm train's Phase A
(target "labels", checked against the particles cpm train wrote) and cpm recall's (targets
"softmax", "capacity"); its bad input and Ctrl-C."""
import os
import signal
import threading

import numpy as np
import pytest

import cpm

h5py = pytest.importorskip("h5py")


def _train_config(folder, data, attention, steps=6, tied=False, keys="none"):
    return (f'[data]\ndataset = "sst2"\ndirectory = "{data}"\nmax_length = 16\nmin_count = 1\n'
            f'[model]\nd_model = 16\nheads = 2\nlayers = 2\nd_ff = 16\nfeatures = 8\n'
            f'dropout = 0.0\nattention = "{attention}"\nqk_tied = {str(tied).lower()}\n'
            f'normalise_keys = "{keys}"\n'
            f'[training]\nepochs = 1\nbatch_size = 16\nwarmup_steps = 1\nseed = 3\n'
            f'[phase_a]\nwarmup_epochs = 1\nsequences = 40\nwrite_tokens = true\n'
            f'[phase_a.dynamics]\nsteps = {steps}\nstep = 0.05\n'
            f'[evaluation]\nrobustness = false\n'
            f'[output]\ndirectory = "{folder}"\n')


def _sequence_numbers(lengths):
    return np.repeat(np.arange(len(lengths)), lengths)


@pytest.mark.parametrize("map_name, keys", [("favor", "none"), ("porf-softplus", "none"),
                                            ("favor", "l2"), ("porf-softplus", "l1")])
def test_labels_target_gives_the_particles_cpm_train_wrote(map_name, keys, tiny_sst2, tmp_path,
                                                           command_line):
    """With normalised keys both align the keys' features divided by their length."""
    config = tmp_path / "train.toml"
    out = tmp_path / "out"
    config.write_text(_train_config(out, tiny_sst2, f"kernel-{map_name}", keys=keys))
    command_line("train", config, "--quiet")
    with h5py.File(out / "phase_a_tokens.h5", "r") as f:
        sequence = _sequence_numbers(f["sequence_lengths"][:])
        labels = f["labels"][:]
        for layer in range(2):
            for head in range(2):
                g = f[f"layer_{layer}/head_{head}"]
                particles, report = cpm.attention_phase_a(
                    g["queries"][:], g["keys"][:], g["initial_particles"][:], sequence=sequence,
                    target="labels", labels=labels, map=map_name, seed=3,
                    replica=layer * 2 + head, steps=6, normalise_keys=keys)
                expected = g["final_particles"][:]
                assert np.abs(particles - expected).max() <= 1e-10 * np.abs(expected).max()
                assert report["steps"] == 6
                assert report["displacement"] > 0.0
                assert report["alignment_after"] > report["alignment_before"]


def _heads(rng, sequences=3, length=6, d=4, scale=1.0):
    q = rng.normal(scale=scale, size=(sequences * length, d))
    k = rng.normal(scale=scale, size=(sequences * length, d))
    return q, k, np.repeat(np.arange(sequences), length)


def _mean_kl(q, k, omega, sequence, causal=False):
    """Mean KL(p ‖ â) of the queries: p = softmax(q.k / sqrt(d)) and â favor's linear-attention
    weights (phi reads d^(-1/4) x) over the keys of each query's sequence (up to its own row when
    causal), recomputed in numpy."""
    d = q.shape[1]
    x, y = d ** -0.25 * q, d ** -0.25 * k
    phi = lambda z: np.exp(z @ omega.T - 0.5 * (z * z).sum(1, keepdims=True))
    total = 0.0
    for a in range(len(q)):
        rows = np.flatnonzero(sequence == sequence[a])
        if causal:
            rows = rows[rows <= a]
        logits = q[a] @ k[rows].T / np.sqrt(d)
        p = np.exp(logits - logits.max())
        p /= p.sum()
        w = phi(y[rows]) @ phi(x[a:a + 1]).T
        total += (p * np.log(p / (w[:, 0] / w.sum()))).sum()
    return total / len(q)


def _in_ball(omega):
    radius = 2.0 * np.sqrt(omega.shape[1])  # the default ball, onto which the start is projected
    return omega * np.minimum(1.0, radius / np.linalg.norm(omega, axis=1, keepdims=True))


def test_softmax_target_moves_linear_weights_towards_the_softmax():
    rng = np.random.default_rng(4)
    q, k, sequence = _heads(rng)
    omega = cpm.generate_features("orthogonal", 16, 4, seed=2)
    new, report = cpm.attention_phase_a(q, k, omega, sequence=sequence, target="softmax")
    assert new.shape == omega.shape
    assert report["alignment_after"] < report["alignment_before"]
    assert _mean_kl(q, k, _in_ball(omega), sequence) == pytest.approx(
        report["alignment_before"], rel=1e-9)
    assert _mean_kl(q, k, new, sequence) == pytest.approx(report["alignment_after"], rel=1e-9)


def test_causal_softmax_target_sees_only_earlier_keys():
    rng = np.random.default_rng(5)
    q, k, sequence = _heads(rng, sequences=2, length=5)
    omega = _in_ball(cpm.generate_features("orthogonal", 8, 4, seed=1))
    _, causal = cpm.attention_phase_a(q, k, omega, sequence=sequence, causal=True,
                                      max_iterations=0)
    _, full = cpm.attention_phase_a(q, k, omega, sequence=sequence, max_iterations=0)
    assert causal["alignment_before"] == pytest.approx(
        _mean_kl(q, k, omega, sequence, causal=True), rel=1e-9)
    assert full["alignment_before"] == pytest.approx(_mean_kl(q, k, omega, sequence), rel=1e-9)
    assert causal["alignment_before"] != pytest.approx(full["alignment_before"], rel=1e-3)


def test_capacity_target_separates_keys():
    rng = np.random.default_rng(6)
    _, k, sequence = _heads(rng, sequences=2, length=8)
    omega = cpm.generate_features("orthogonal", 16, 4, seed=3)
    new, report = cpm.attention_phase_a(k, k, omega, sequence=sequence, target="capacity")
    assert report["alignment_after"] < report["alignment_before"]
    assert np.all(np.isfinite(new))


def test_bandwidth_and_temperature_enter_as_stated():
    """softmax(q.k / (T sqrt d)) with phi reading tau d^(-1/4) x: scaling q and k by c equals
    bandwidth c and temperature 1/c^2 on the original vectors."""
    rng = np.random.default_rng(7)
    q, k, sequence = _heads(rng)
    omega = cpm.generate_features("orthogonal", 8, 4, seed=5)
    a, ra = cpm.attention_phase_a(2.0 * q, 2.0 * k, omega, sequence=sequence, max_iterations=5)
    b, rb = cpm.attention_phase_a(q, k, omega, sequence=sequence, bandwidth=2.0,
                                  temperature=0.25, max_iterations=5)
    assert ra["alignment_before"] == pytest.approx(rb["alignment_before"], rel=1e-12)
    assert np.allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("call, message", [
    (dict(target="nearest"), "target: 'softmax', 'labels' or 'capacity'"),
    (dict(map="elu"), "map: target 'softmax' aligns favor"),
    (dict(map="nonsense"), "nonsense"),
    (dict(target="labels"), "labels: target 'labels' needs"),
    (dict(target="labels", labels=[0, 1], map="dpfp"), "map: target 'labels'"),
    (dict(sequence=[0, 0, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3]), "sequence: row 2"),
    (dict(sequence=[0, 1]), "sequence: expected one sequence number per row"),
    (dict(gamma="big"), "gamma: expected a number"),
    (dict(steps=1.5), "steps: expected an integer"),
    (dict(bandwidth=-1.0), "bandwidth: must be a positive number"),
    (dict(wobble=1), "wobble: not an option of attention_phase_a with target 'softmax'"),
    (dict(centred=False), "centred: not an option"),
    (dict(beta=2.0), "beta: the minimiser needs beta = inf"),
    (dict(target="labels", labels=[0, 1, 1], temperature=2.0), "temperature: not an option"),
    (dict(target="labels", labels=[0, 1, 1], normalised=True, normalise_keys="l2"),
     "normalised: the keys' own normalisation"),
])
def test_bad_input_raises_value_error_naming_it(call, message):
    rng = np.random.default_rng(8)
    q, k, sequence = _heads(rng)
    omega = cpm.generate_features("orthogonal", 8, 4, seed=1)
    arguments = dict(sequence=sequence)
    arguments.update(call)
    with pytest.raises(ValueError, match=message):
        cpm.attention_phase_a(q, k, omega, **arguments)


def test_nan_and_shape_mismatches_are_refused():
    rng = np.random.default_rng(9)
    q, k, _ = _heads(rng)
    omega = cpm.generate_features("orthogonal", 8, 4, seed=1)
    bad = k.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match=r"keys: entry \(3, 1\) is NaN"):
        cpm.attention_phase_a(q, bad, omega)
    with pytest.raises(ValueError, match="queries: expected one row per key row"):
        cpm.attention_phase_a(q[:-1], k, omega)
    with pytest.raises(ValueError, match="particles: expected 4 columns"):
        cpm.attention_phase_a(q, k, omega[:, :3])


def test_ctrl_c_raises_keyboard_interrupt():
    rng = np.random.default_rng(10)
    q, k, sequence = _heads(rng, sequences=8, length=64, d=8)
    omega = cpm.generate_features("orthogonal", 64, 8, seed=1)
    timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            cpm.attention_phase_a(q, k, omega, sequence=sequence, integrator="langevin",
                                  steps=1_000_000)
    finally:
        timer.cancel()


def test_normalised_keys_align_the_weights_of_features_of_one_length():
    """â_ai ∝ φ(x_a)ᵀφ(y_i)/‖φ(y_i)‖: the alignment before the dynamics, recomputed in numpy."""
    rng = np.random.default_rng(11)
    q, k, sequence = _heads(rng)
    omega = _in_ball(cpm.generate_features("orthogonal", 8, 4, seed=4))
    x, y = 4 ** -0.25 * q, 4 ** -0.25 * k
    phi = lambda z: np.exp(z @ omega.T - 0.5 * (z * z).sum(1, keepdims=True))
    for keys, norm in (("l2", lambda f: np.linalg.norm(f, axis=1)), ("l1", lambda f: f.sum(1))):
        total = 0.0
        for a in range(len(q)):
            rows = np.flatnonzero(sequence == sequence[a])
            logits = q[a] @ k[rows].T / 2.0
            p = np.exp(logits - logits.max())
            p /= p.sum()
            fk = phi(y[rows])
            w = fk @ phi(x[a:a + 1])[0] / norm(fk)
            total += (p * np.log(p / (w / w.sum()))).sum()
        _, report = cpm.attention_phase_a(q, k, omega, sequence=sequence, normalise_keys=keys,
                                          max_iterations=0)
        assert report["alignment_before"] == pytest.approx(total / len(q), rel=1e-9)
    with pytest.raises(ValueError, match="normalise_keys: unknown key normalisation 'l3'"):
        cpm.attention_phase_a(q, k, omega, sequence=sequence, normalise_keys="l3")
