"""Configurations from dicts: TOML text that reads back as the same values, every bit of the
floats kept; and every configuration of the fuzz corpus and the examples, read as each command
would, either returns or raises ValueError."""
import glob
import math
import os
import tomllib

import pytest

import cpm
from conftest import SOURCE_DIR

COMMANDS = ["run", "converge", "ldp", "concentration", "kernel", "features", "train", "recall"]


def test_dicts_round_trip_through_toml():
    config = {"a": 1, "b": 0.1 + 0.2, "c": [1e-300, -2.5e16], "d": "quote \" and \\ é",
              "t": {"x": True, "inner": {"y": [1, 2]}}, "list": [{"k": 1}, {"k": 2}],
              "inf": math.inf}
    assert tomllib.loads(cpm.to_toml(config)) == config


CORPUS = sorted(glob.glob(os.path.join(SOURCE_DIR, "fuzz", "corpus", "fuzz_config", "*")) +
                glob.glob(os.path.join(SOURCE_DIR, "examples", "*.toml")))


@pytest.mark.parametrize("path", CORPUS, ids=os.path.basename)
def test_the_fuzzed_configurations_return_or_raise_value_error(path):
    assert CORPUS
    for command in COMMANDS:
        try:
            directory = cpm.check_config(path, command)
        except ValueError as error:
            assert "\n" not in str(error).strip()
        else:
            assert isinstance(directory, str)


def test_a_valid_configuration_names_its_output_folder():
    path = os.path.join(SOURCE_DIR, "examples", "features_gaussian.toml")
    assert cpm.check_config(path, "features") == "out/features"
