"""cpm.load_classification: cpm train's data sets read by its own reader, in the data folder
found at run time (CPM_DATA_DIR in the environment, else the build's default)."""
import numpy as np
import pytest

import cpm


def test_a_data_set_reads_as_padded_token_arrays(tiny_sst2):
    data = cpm.load_classification("sst2", directory=str(tiny_sst2), max_length=12, min_count=1)
    train = data["train"]
    assert train["tokens"].shape[0] == 96 and train["tokens"].shape[1] <= 12
    assert train["tokens"].dtype == np.int32 and train["lengths"].max() == train["tokens"].shape[1]
    assert data["evaluation"]["labels"].shape == (32,) and data["classes"] == 2
    assert set(train["labels"]) == {0, 1}
    for row, length in zip(train["tokens"], train["lengths"]):
        assert 1 <= length <= 12 and np.all(row[length:] == 0) and np.all(row[:length] != 0)
    assert len(data["vocabulary"]) == data["vocabulary_size"]
    words = {w for line in open(tiny_sst2 / "train.tsv").read().split("\n")[1:] for w in
             line.split("\t")[0].split()}
    assert words <= set(data["vocabulary"])


def test_the_environment_names_the_data_folder(tiny_sst2, tmp_path, monkeypatch, command_line):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "sst2").symlink_to(tiny_sst2)
    monkeypatch.setenv("CPM_DATA_DIR", str(tmp_path / "data"))
    assert cpm.data_folder() == str(tmp_path / "data")
    assert cpm.load_classification("sst2", min_count=1)["train"]["labels"].shape == (96,)
    # the command line finds the same folder (a configuration without [data] directory)
    config = tmp_path / "bad.toml"
    config.write_text('[data]\ndataset = "rotten_tomatoes"\n[output]\ndirectory = "'
                      f'{tmp_path / "out"}"\n')
    result = command_line("train", config, check=False)
    assert result.returncode == 2
    assert f"{tmp_path / 'data'}/rotten_tomatoes: data folder not found" in result.stderr
    assert "CPM_DATA_DIR in the environment" in result.stderr


def test_bad_data_arguments_are_refused(tmp_path):
    with pytest.raises(ValueError, match="dataset: unknown data set 'imdb'"):
        cpm.load_classification("imdb")
    with pytest.raises(ValueError, match="data folder not found"):
        cpm.load_classification("sst2", directory=str(tmp_path / "nowhere"))
    with pytest.raises(ValueError, match="max_length: must be >= 1"):
        cpm.load_classification("sst2", max_length=0)
