"""A command run from Python writes what the command line writes for the same configuration,
bit for bit, and comes back as arrays and DataFrames."""
import numpy as np
import pytest

import cpm

RUN = {
    "particles": {"n": 120, "seed": 4},
    "domain": {"kind": "ball", "centre": [0.0, 0.0], "radius": 3.0},
    "potential": {"kind": "quadratic", "strength": 1.0},
    "interaction": {"kernel": "log", "lambda": 1.0},
    "initial": {"law": "gaussian", "centre": [0.0, 0.0], "std": 0.5},
    "dynamics": {"beta": 20.0, "integrator": "langevin", "step": 1e-3, "t_end": 0.02,
                 "outputs": 4},
}


def test_a_run_equals_the_command_line_bit_for_bit(tmp_path, command_line):
    config = tmp_path / "run.toml"
    config.write_text(cpm.to_toml(RUN))
    command_line("run", config, "--output", tmp_path / "cli", "--quiet")
    expected = cpm.reader.load_run(tmp_path / "cli")
    for source in (RUN, config):  # a dict, and the file the command read
        results = cpm.run_config(source, "run", output=tmp_path / "py", overwrite=True)
        assert results.directory == str(tmp_path / "py")
        run = results.run
        assert run.frames.shape == (5, 120, 2)
        assert np.array_equal(run.frames, expected.frames)
        assert np.array_equal(run.times, expected.times)
        assert run.observables.equals(expected.observables)
        assert np.allclose(results.tables["observables"]["time"], run.times)  # the CSV twin


def test_an_existing_folder_is_kept_unless_overwrite(tmp_path):
    cpm.run_config(RUN, "run", output=tmp_path / "out")
    with pytest.raises(ValueError, match="overwrite"):
        cpm.run_config(RUN, "run", output=tmp_path / "out")


def test_a_side_by_side_run_has_its_grid_fields_and_tables(tmp_path):
    config = dict(RUN, grid={"cells": [24, 24]}, dynamics=dict(RUN["dynamics"], t_end=0.01))
    results = cpm.run_config(config, "run", output=tmp_path / "side")
    assert results.run.fields["density"].shape[1:] == (24, 24)
    assert "side_by_side" in results.tables and len(results.tables["side_by_side"]) > 0


def test_toml_text_is_accepted_as_a_configuration(tmp_path):
    text = cpm.to_toml(RUN)
    assert cpm.check_config(text, "run") == "out"
    assert cpm.run_config(text, "run", output=tmp_path / "t").run.n == 120
