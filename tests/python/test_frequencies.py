"""Frequencies drawn by the module are those of `cpm features` for the same configuration and seed,
and their kernel errors on the command's points equal the command's, bit for bit."""
import numpy as np
import pytest

import cpm

STUDY = {
    "study": {"methods": ["iid", "orthogonal", "sobol", "halton", "coulomb"], "dims": [2, 3],
              "n": [16], "seeds": 2, "seed": 7, "sigma": 1.5, "bootstrap": 10},
    "points": {"count": 24, "selection_count": 24, "scale": 1.0},
    "coulomb": {"s": [-1.0, 0.5], "max_iterations": 20},
}
CODES = ["iid", "orthogonal", "sobol", "halton", "coulomb"]  # features.h5's study.method_codes


def test_every_generator_equals_the_command_line(tmp_path, command_line):
    config = tmp_path / "features.toml"
    config.write_text(cpm.to_toml(STUDY))
    command_line("features", config, "--output", tmp_path / "cli", "--quiet")
    table = cpm.reader.load_table(tmp_path / "cli" / "features.h5", "approximation")
    assert len(table) == 2 * 2 * 6
    for row in table.itertuples():
        method, dim = CODES[int(row.method)], int(row.dim)
        options = {"s": row.s} if method == "coulomb" else {}
        omega = cpm.generate_features(method, int(row.n), dim, sigma=1.5, seed=7,
                                      replica=int(row.seed), max_iterations=20, **options)
        points = cpm.approximation_points(config, dim)
        errors = cpm.kernel_errors(points, omega, sigma=1.5)
        assert errors["frobenius"] == row.frobenius, (method, dim, row.seed)
        assert errors["spectral"] == row.spectral and errors["max_entry"] == row.max_entry
        selection = cpm.approximation_points(config, dim, selection=True)
        assert cpm.kernel_errors(selection, omega, sigma=1.5)["frobenius"] == \
            row.selection_frobenius
        assert cpm.energy_distance_to_gaussian(omega, 1.5) == row.energy_distance


def test_the_study_from_python_writes_the_command_line_tables(tmp_path, command_line):
    config = tmp_path / "features.toml"
    config.write_text(cpm.to_toml(STUDY))
    command_line("features", config, "--output", tmp_path / "cli", "--quiet")
    results = cpm.run_config(STUDY, "features", output=tmp_path / "py")
    expected = cpm.reader.load_tables(tmp_path / "cli" / "features.h5")
    for name in ("approximation", "summary", "rates"):
        timed = [c for c in expected[name] if c.startswith("seconds")]
        assert results.tables[name].drop(columns=timed).equals(
            expected[name].drop(columns=timed)), name


@pytest.mark.parametrize("method", CODES)
@pytest.mark.parametrize("kernel", ["gaussian", "laplace"])
def test_generators_are_deterministic_and_shaped(method, kernel):
    a = cpm.generate_features(method, 12, 3, kernel=kernel, seed=3, s=0.5, max_iterations=5)
    b = cpm.generate_features(method, 12, 3, kernel=kernel, seed=3, s=0.5, max_iterations=5)
    c = cpm.generate_features(method, 12, 3, kernel=kernel, seed=4, s=0.5, max_iterations=5)
    assert a.shape == (12, 3) and np.array_equal(a, b) and not np.array_equal(a, c)


def test_the_coulomb_gas_beats_iid_draws_on_the_gaussian_kernel():
    x = np.random.default_rng(0).normal(scale=0.5, size=(64, 2))
    iid = np.mean([cpm.kernel_errors(x, cpm.generate_features("iid", 64, 2, seed=s))["frobenius"]
                   for s in range(1, 5)])
    omega, done = cpm.generate_features("coulomb", 64, 2, seed=1, diagnostics=True)
    assert cpm.kernel_errors(x, omega)["frobenius"] < iid
    assert done["iterations"] > 0


def test_finite_beta_runs_the_langevin_gas():
    omega, done = cpm.generate_features("coulomb", 16, 2, beta=10.0, steps=50, diagnostics=True)
    assert omega.shape == (16, 2) and np.isfinite(omega).all() and done["iterations"] >= 50
