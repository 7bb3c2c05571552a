"""Checks python/cpm_reader.py against the files of a run and a convergence study written by
tests/python/run_reader_test.sh: shapes, values against the CSV twins, the grid, the provenance.

usage: check_reader.py PYTHON_DIR SCRATCH_DIR
"""
import os
import sys

import numpy as np
import pandas as pd

sys.path.insert(0, sys.argv[1])
import cpm_reader  # noqa: E402

scratch = sys.argv[2]


def check(condition, what):
    if not condition:
        sys.exit(f"check_reader.py: {what}")


# A side-by-side run: 200 particles in 1D, 120 cells, outputs at t = 0, 0.01, ..., 0.05.
run = cpm_reader.load_run(os.path.join(scratch, "run"))
check(run.frames.shape == (6, 200, 1), f"frames shape {run.frames.shape}")
check(run.n == 200 and run.dim == 1, "n and dim")
check(np.allclose(run.times, np.linspace(0, 0.05, 6)), f"times {run.times}")
check(np.all(np.diff(run.steps) > 0), "steps increase")
check(run.fields["density"].shape == (6, 120), f"density shape {run.fields['density'].shape}")
check(run.grid["cells"] == [120] and len(run.grid["centres"][0]) == 120, "grid cells")
mass = run.fields["density"].sum(axis=1) * run.grid["spacing"][0]
check(np.allclose(mass, 1.0, atol=1e-9), f"density mass {mass}")
check(run.parameters["particles.n"] == 200 and run.parameters["interaction.kernel"]
      .startswith("log"), f"parameters {run.parameters}")
check(run.creator["name"] == "cpm" and "git_describe" in run.creator
      and "Eigen" in run.creator["libraries"], f"creator {run.creator}")
check(run.checkpoint is not None and run.checkpoint["time"] == run.times[-1], "checkpoint")
check(run.config is not None and "[particles]" in run.config, "config.toml beside run.h5")

# The observables are the columns of side_by_side.csv, at the same times and to the bit.
csv = cpm_reader.load_table(os.path.join(scratch, "run", "side_by_side.csv"))
check(isinstance(csv, pd.DataFrame) and len(csv) == 6, "side_by_side.csv rows")
obs = run.observables
check(len(obs) == 6 and np.array_equal(obs["time"].to_numpy(), run.times), "observable times")
for column in ["w1", "w2", "l1_histogram", "particle_energy_total", "grid_free_energy"]:
    check(np.allclose(obs[column].to_numpy(), csv[column].to_numpy(), rtol=1e-12, atol=0),
          f"observable {column} differs from the CSV")
# The particles' mean at the last frame, from the positions and from the table.
check(np.isclose(run.frames[-1, :, 0].mean(), obs["particle_mean_0"].iloc[-1], rtol=1e-12,
                 atol=1e-15), "particle mean")

# The study's table: convergence.h5 (compound) read as a DataFrame equals convergence.csv.
h5 = cpm_reader.load_table(os.path.join(scratch, "converge", "convergence.h5"))
table = cpm_reader.load_table(os.path.join(scratch, "converge", "convergence.csv"))
check(list(h5.columns) == list(table.columns), f"columns {list(h5.columns)}")
check(len(h5) == 2 * 6, f"rows {len(h5)}")
check(sorted(h5["n"].unique()) == [50.0, 100.0], "n column")
check(np.allclose(h5.to_numpy(), table.to_numpy(), rtol=1e-9, equal_nan=True),
      "convergence.h5 differs from convergence.csv")
# pandas reads the compound dataset directly, without the module.
import h5py  # noqa: E402
with h5py.File(os.path.join(scratch, "converge", "convergence.h5"), "r") as f:
    direct = pd.DataFrame(f["convergence/table"][()])
check(list(direct.columns) == list(h5.columns), "pandas on the compound dataset")
tables = cpm_reader.load_tables(os.path.join(scratch, "converge", "convergence.h5"))
check(list(tables) == ["convergence"], f"tables {list(tables)}")
print("check_reader.py: ok")
