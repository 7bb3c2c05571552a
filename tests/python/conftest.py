"""What the tests of the Python module share: the `cpm` command of the same build (CPM_BINARY),
the source tree (CPM_SOURCE_DIR), and running the command on a configuration file."""
import os
import subprocess

import pytest

SOURCE_DIR = os.environ.get("CPM_SOURCE_DIR",
                            os.path.dirname(os.path.dirname(os.path.dirname(__file__))))


@pytest.fixture
def command_line():
    """cpm_command(*arguments) -> CompletedProcess of the `cpm` binary (text output)."""
    binary = os.environ.get("CPM_BINARY")
    if not binary or not os.path.exists(binary):
        pytest.skip("CPM_BINARY does not name the cpm command")

    def run(*arguments, check=True):
        result = subprocess.run([binary, *map(str, arguments)], capture_output=True, text=True)
        if check and result.returncode != 0:
            raise AssertionError(f"cpm {' '.join(map(str, arguments))}: {result.stderr}")
        return result

    return run
