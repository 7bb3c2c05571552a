"""Read cpm's output files into numpy arrays and pandas DataFrames.

Needs h5py, numpy and pandas (Debian: python3-h5py python3-numpy python3-pandas).

    import sys; sys.path.insert(0, "python")        # the repository's python/ folder, or
                                                    # share/cpm/python of an installed cpm
    import cpm_reader

    run = cpm_reader.load_run("out")                # a run's folder, or its run.h5
    run.frames.shape            # (F, N, d): particle positions at the output times run.times
    run.observables             # DataFrame: one row per output time (time, step, energies, ...)
    run.fields["density"]       # (F, nx[, ny[, nz]]): the grid density ρ_t (side-by-side runs)
    run.grid["centres"]         # the cell centres along each axis
    run.parameters["interaction.kernel"]

    table = cpm_reader.load_table("out/convergence.h5")      # DataFrame (also .csv files)
    tables = cpm_reader.load_tables("out/ldp.h5")             # {"tails": ..., "statistics": ...}

The layout of run.h5 (H5MD 1.1 with cpm's fields and checkpoint groups) is described in
docs/guide/output.md; study tables are compound datasets <name>/table, one field per column
(files of cpm 0.1 hold a 2D array with the column names in the attribute `columns`; both are
read).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

import h5py
import numpy as np
import pandas as pd

__all__ = ["Run", "load_run", "load_table", "load_tables"]


def _text(value):
    """An HDF5 string attribute (bytes for fixed-length strings) as str; lists elementwise."""
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, np.ndarray) and value.dtype.kind in "SO":
        return [_text(v) for v in value.tolist()]
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    return value


def _attributes(node):
    return {name: _text(value) for name, value in node.attrs.items()}


@dataclass
class Run:
    """One `cpm run`: everything in its run.h5 (and config.toml when it lies beside it)."""

    path: str
    times: np.ndarray                      # (F,) output times of the particle frames
    steps: np.ndarray                      # (F,) integrator steps at those times
    frames: np.ndarray                     # (F, N, d) positions
    observables: pd.DataFrame              # time, step and one column per observable
    fields: dict = field(default_factory=dict)        # name -> (F, nx[, ny[, nz]])
    field_times: dict = field(default_factory=dict)   # name -> (F,)
    grid: dict | None = None               # cells, origin, spacing, mask, centres
    parameters: dict = field(default_factory=dict)    # "interaction.s" -> value
    creator: dict = field(default_factory=dict)       # name, version, git_describe, libraries, ...
    checkpoint: dict | None = None         # step, time, seed, ... of the restart point
    config: str | None = None              # the resolved configuration (config.toml)

    @property
    def n(self):
        return self.frames.shape[1]

    @property
    def dim(self):
        return self.frames.shape[2]


def _run_file(path):
    if os.path.isdir(path):
        path = os.path.join(path, "run.h5")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{path}: no such run file")
    return path


def _parameters(group, prefix=""):
    out = {}
    for name, value in group.attrs.items():
        out[prefix + name] = _text(value)
    for name, child in group.items():
        if isinstance(child, h5py.Group):
            out.update(_parameters(child, prefix + name + "."))
    return out


def _observables(group):
    """One DataFrame over the union of the observables' output times."""
    table = None
    for name, element in group.items():
        part = pd.DataFrame({"time": element["time"][()], "step": element["step"][()],
                             name: element["value"][()]})
        table = part if table is None else table.merge(part, on=["time", "step"], how="outer")
    if table is None:
        return pd.DataFrame(columns=["time", "step"])
    return table.sort_values("time", kind="stable").reset_index(drop=True)


def load_run(path) -> Run:
    """Reads a run's folder (or its run.h5 file)."""
    path = _run_file(os.fspath(path))
    with h5py.File(path, "r") as f:
        creator = _attributes(f["h5md/creator"])
        positions = f["particles/trajectory/position"]
        run = Run(path=path,
                  times=positions["time"][()],
                  steps=positions["step"][()],
                  frames=positions["value"][()],
                  observables=_observables(f["observables"]) if "observables" in f
                  else pd.DataFrame(),
                  parameters=_parameters(f["parameters"]) if "parameters" in f else {},
                  creator=creator)
        if "fields" in f:
            fields = f["fields"]
            grid = _attributes(fields)
            cells = [int(c) for c in np.atleast_1d(grid["cells"])]
            origin = np.atleast_1d(np.asarray(grid["origin"], dtype=float))
            spacing = np.atleast_1d(np.asarray(grid["spacing"], dtype=float))
            grid = {"cells": cells, "origin": origin, "spacing": spacing,
                    "mask": fields["mask"][()].astype(bool) if "mask" in fields else None,
                    "centres": [origin[a] + spacing[a] * (np.arange(cells[a]) + 0.5)
                                for a in range(len(cells))]}
            run.grid = grid
            for name, element in fields.items():
                if isinstance(element, h5py.Group) and "value" in element:
                    run.fields[name] = element["value"][()]
                    run.field_times[name] = element["time"][()]
        if "checkpoint" in f:
            run.checkpoint = _attributes(f["checkpoint"])
    config = os.path.join(os.path.dirname(path), "config.toml")
    if os.path.isfile(config):
        with open(config, encoding="utf-8") as text:
            run.config = text.read()
    return run


def _table_frame(group, where):
    dataset = group["table"]
    if dataset.dtype.names:                      # compound: one field per column
        frame = pd.DataFrame(dataset[()])
        if "columns" in group.attrs:
            frame = frame[_text(group.attrs["columns"])]
        return frame
    if "columns" not in group.attrs:              # cpm 0.1: values[rows][columns] + `columns`
        raise ValueError(f"{where}: table has neither named fields nor a columns attribute")
    values = dataset[()]
    return pd.DataFrame(values.reshape(-1, len(group.attrs["columns"])),
                        columns=_text(group.attrs["columns"]))


def load_tables(path) -> dict:
    """Every table of a study's HDF5 file (convergence.h5, ldp.h5) by name."""
    path = os.fspath(path)
    with h5py.File(path, "r") as f:
        return {name: _table_frame(group, f"{path}: {name}") for name, group in f.items()
                if isinstance(group, h5py.Group) and "table" in group}


def load_table(path, name=None) -> pd.DataFrame:
    """One table as a DataFrame: a CSV file cpm wrote, or a table of a study's HDF5 file (the
    only one, or `name`)."""
    path = os.fspath(path)
    if path.endswith(".csv"):
        return pd.read_csv(path)
    tables = load_tables(path)
    if name is None:
        if len(tables) != 1:
            raise ValueError(f"{path}: holds the tables {sorted(tables)}; name one")
        return next(iter(tables.values()))
    if name not in tables:
        raise KeyError(f"{path}: no table {name!r} (tables: {sorted(tables)})")
    return tables[name]
