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


# Two classes of short sentences: words of the first list mark class 1, of the second class 0.
_POSITIVE = ["good", "great", "fine", "warm", "bright", "lovely", "clever", "gripping"]
_NEGATIVE = ["bad", "dull", "weak", "cold", "grey", "boring", "clumsy", "tedious"]
_FILLER = ["a", "film", "the", "story", "is", "and", "very", "plot", "acting", "with"]


def _sentences(count, seed):
    import numpy as np
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(count):
        label = i % 2
        words = list(rng.choice(_FILLER, size=rng.integers(3, 9)))
        cues = _POSITIVE if label else _NEGATIVE
        for _ in range(rng.integers(1, 3)):
            words.insert(int(rng.integers(0, len(words) + 1)), str(rng.choice(cues)))
        rows.append((" ".join(words), label))
    return rows


@pytest.fixture(scope="session")
def tiny_sst2(tmp_path_factory):
    """A data folder in SST-2's layout (train.tsv, dev.tsv: sentence<TAB>label), 96 training and
    32 evaluation sentences of two classes, for `cpm train` runs of a few seconds."""
    folder = tmp_path_factory.mktemp("tiny_sst2")
    for name, count, seed in (("train.tsv", 96, 1), ("dev.tsv", 32, 2)):
        with open(folder / name, "w") as out:
            out.write("sentence\tlabel\n")
            for sentence, label in _sentences(count, seed):
                out.write(f"{sentence} \t{label}\n")
    return folder


@pytest.fixture
def cuda_device():
    """The CUDA device for the GPU tests; without one they are skipped with this one reason,
    which pytest's summary then gives once for all of them."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device: the GPU tests run where one is present")
    return torch.device("cuda")


def pytest_terminal_summary(terminalreporter):
    """The GPU tests' skip, said once at the end of the run."""
    skipped = [r for r in terminalreporter.stats.get("skipped", [])
               if "no CUDA device" in str(r.longrepr)]
    if skipped:
        terminalreporter.write_line(f"{len(skipped)} GPU tests skipped: no CUDA device here")
