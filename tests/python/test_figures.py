"""scripts/figures.py remakes every figure of docs/findings.md from the tables in bench/data/:
each figure is a non-empty PNG of a readable size, every table names the results section it was
transcribed from, and docs/findings.md shows every figure the script draws."""
import importlib.util
import os

import pytest

from conftest import SOURCE_DIR

matplotlib = pytest.importorskip("matplotlib")
pytest.importorskip("pandas")
import matplotlib.image  # noqa: E402

DATA_DIR = os.path.join(SOURCE_DIR, "bench", "data")


def _figures_module():
    spec = importlib.util.spec_from_file_location("figures", os.path.join(SOURCE_DIR, "scripts", "figures.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


figures = _figures_module()


@pytest.fixture(scope="module")
def drawn(tmp_path_factory):
    """Every figure drawn once from the recorded tables, at a low resolution to keep it quick."""
    output = tmp_path_factory.mktemp("figures")
    written = figures.main(["--output", str(output), "--data", DATA_DIR, "--dpi", "50"])
    return output, written


@pytest.mark.parametrize("name", sorted(figures.FIGURES))
def test_each_figure_is_a_png_of_a_readable_size(drawn, name):
    output, written = drawn
    path = os.path.join(output, name + ".png")
    assert path in written
    assert os.path.getsize(path) > 1000
    image = matplotlib.image.imread(path)
    height, width = image.shape[:2]
    assert width >= 300 and height >= 150, (width, height)
    assert width <= 2000 and height <= 1500, (width, height)


def test_every_table_names_its_results_section_and_is_small():
    names = [name for name in os.listdir(DATA_DIR) if name.endswith(".csv")]
    assert names
    total = 0
    for name in names:
        path = os.path.join(DATA_DIR, name)
        total += os.path.getsize(path)
        with open(path, encoding="utf-8") as table:
            first = table.readline()
        assert first.startswith("# bench/RESULTS.md") or first.startswith("# bench/results/"), name
    assert total < 2_000_000


def test_findings_show_every_figure_the_script_draws():
    with open(os.path.join(SOURCE_DIR, "docs", "findings.md"), encoding="utf-8") as page:
        text = page.read()
    for name in figures.FIGURES:
        assert f"figures/{name}.png" in text, name
        assert os.path.exists(os.path.join(SOURCE_DIR, "docs", "figures", name + ".png")), name
