"""Particles learned from a user's (X, y) by the alignment dynamics with repulsion."""
import numpy as np

import cpm


def data(n=200, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 2))
    y = (np.abs(x[:, 0]) > 0.8).astype(int)  # a task along one axis
    return x, y


def test_alignment_grows_and_the_history_is_recorded():
    x, y = data()
    particles, history, report = cpm.learn_particles(x, y, n=16, map="rff-pairs", steps=40,
                                                     record_every=10, seed=3)
    assert particles.shape == (16, 2)
    assert list(history["step"]) == [0, 10, 20, 30, 40]
    assert history["alignment"][-1] > history["alignment"][0]
    assert (history["min_distance"] > 0).all()
    assert report["gamma"] > 0 and report["lambda"] == 1.0


def test_the_same_seed_gives_the_same_particles_and_labels_may_be_signs():
    x, y = data()
    a = cpm.learn_particles(x, y, n=8, steps=10, beta=50.0, seed=2)[0]
    b = cpm.learn_particles(x, 2 * y - 1, n=8, steps=10, beta=50.0, seed=2)[0]
    assert np.array_equal(a, b)


def test_a_given_start_and_drift_fraction():
    x, y = data()
    start = cpm.generate_features("halton", 12, 2, seed=1)
    particles, history, report = cpm.learn_particles(x, y, initial=start, steps=5,
                                                     drift_fraction=0.1)
    assert particles.shape == (12, 2) and abs(report["repulsion_ratio_initial"] - 0.1) < 1e-9
