"""Every command that writes results, run from Python on a configuration (cpm.config), with its
output folder read back as arrays and pandas DataFrames (cpm.reader)."""
from __future__ import annotations

import glob
import os
from dataclasses import dataclass, field

from . import _cpm, reader
from .config import config_text

__all__ = ["Results", "approximation_points", "check_config", "run_config"]


@dataclass
class Results:
    """What a command wrote: its folder, its tables by name and, for `run`, the run file."""

    command: str
    directory: str
    tables: dict = field(default_factory=dict)  # name -> DataFrame
    run: reader.Run | None = None               # `run`: frames, observables, fields (run.h5)


def _read(command, directory):
    results = Results(command, directory)
    # HDF5 tables first (every bit of the doubles), then CSV tables of other names.
    for path in sorted(glob.glob(os.path.join(directory, "*.h5"))):
        if os.path.basename(path) == "run.h5":
            results.run = reader.load_run(path)
        else:
            results.tables.update(reader.load_tables(path))
    for path in sorted(glob.glob(os.path.join(directory, "*.csv"))):
        name = os.path.splitext(os.path.basename(path))[0]
        results.tables.setdefault(name, reader.load_table(path))
    return results


def check_config(config, command: str) -> str:
    """Reads a configuration as `cpm <command>` would, writing nothing: returns its output
    folder, or raises ValueError with the command line's one-line message."""
    text, source = config_text(config)
    return _cpm.check_config(command, text, source)


def run_config(config, command: str, output=None, overwrite=False, progress=False,
               restart=None) -> Results:
    """Runs `cpm <command>` (run, converge, ldp, concentration, kernel, features, train, recall)
    on a configuration (a dict, TOML text or a file's path) and returns what it wrote. output,
    overwrite, progress and restart are the command line's --output, --overwrite, not --quiet
    and --restart."""
    text, source = config_text(config)
    directory = _cpm.run_command(command, text, source, os.fspath(output or ""), overwrite,
                                 progress, os.fspath(restart or ""))
    return _read(command, directory)


def approximation_points(config, dim: int, selection=False):
    """The points on which `cpm features` with this configuration reports its errors in
    dimension dim (selection=True: the points that choose the coulomb setting)."""
    text, source = config_text(config)
    return _cpm.approximation_points(text, source, dim, selection)
