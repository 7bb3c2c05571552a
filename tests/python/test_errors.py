"""Bad input raises ValueError with one line, the command line's message where there is one, and
never takes the interpreter down."""
import numpy as np
import pytest

import cpm


def one_line(call, match=None):
    with pytest.raises(ValueError, match=match) as error:
        call()
    assert "\n" not in str(error.value).strip(), str(error.value)
    return str(error.value)


def test_wrong_shapes():
    one_line(lambda: cpm.kernel_errors(np.zeros(5), np.zeros((4, 2))), "2-D array")
    one_line(lambda: cpm.kernel_errors(np.zeros((5, 3)), np.zeros((4, 2))), "3 columns")
    one_line(lambda: cpm.feature_map("favor", np.zeros((5, 2, 1)), np.zeros((4, 2))), "2-D")
    one_line(lambda: cpm.learn_particles(np.zeros((5, 2)), np.zeros(4)), "5 labels")
    one_line(lambda: cpm.kernel_errors("text", np.zeros((4, 2))), "array of numbers")
    one_line(lambda: cpm.kernel_errors(np.zeros((0, 2)), np.zeros((4, 2))), "at least one point")


def test_nan_and_infinity():
    x = np.zeros((5, 2))
    x[3, 1] = np.nan
    assert "(3, 1)" in one_line(lambda: cpm.kernel_errors(x, np.ones((4, 2))), "NaN")
    x[3, 1] = np.inf
    one_line(lambda: cpm.feature_map("rff", x, np.ones((4, 2))), "infinite")
    one_line(lambda: cpm.learn_particles(np.ones((5, 2)), [0, 1, 0, 1, np.nan]), "y")


def test_unknown_names_and_impossible_requests():
    one_line(lambda: cpm.generate_features("magic", 8, 2), "unknown generator 'magic'")
    one_line(lambda: cpm.generate_features("iid", 8, 2, kernel="cauchy"), "unknown kernel")
    one_line(lambda: cpm.generate_features("iid", 0, 2), "N >= 1")
    one_line(lambda: cpm.generate_features("coulomb", 8, 2, s=3.0), "s < d")
    one_line(lambda: cpm.generate_features("coulomb", 8, 2, lambda_=-1.0), "lambda")
    one_line(lambda: cpm.generate_features("coulomb", 8, 2, beta=5.0, step=np.inf), "step")
    one_line(lambda: cpm.learn_particles(np.ones((5, 2)), [0, 1, 0, 1, 0], s=np.nan), "s")
    one_line(lambda: cpm.feature_map("nope", np.ones((3, 2)), np.ones((4, 2))), "nope")
    one_line(lambda: cpm.attention_features("dpfp", np.ones((3, 2)), dpfp_nu=9), "ν")
    one_line(lambda: cpm.project(np.asfortranarray(np.ones((3, 2))), "torus"), "torus")
    one_line(lambda: cpm.run_config({}, "frobnicate"), "unknown command")
    one_line(lambda: cpm.to_toml({"a": object()}), "a: cannot write")


def test_a_bad_configuration_gives_the_command_line_message(tmp_path, command_line):
    path = tmp_path / "bad.toml"
    path.write_text('[particles]\nn = 10\ncolour = "red"\n')
    message = one_line(lambda: cpm.run_config(path, "run", output=tmp_path / "out"))
    printed = command_line("run", path, "--output", tmp_path / "out", check=False)
    assert printed.returncode == 2
    assert printed.stderr.strip() == "cpm: " + message
    assert not (tmp_path / "out").exists()
