"""Reads a cpm H5MD file with h5py and, for d = 3, MDAnalysis; exits non-zero on any mismatch.

usage: read_h5md.py FILE N FRAMES DIM GRID_CELLS(comma-separated) [--mdanalysis] [--units]

Positions were written as value[f][k][a] = f + k/64 + a/8, observables as energy = f/4, the
density field as f + (flat x-fastest cell index)/1024; every value is compared exactly.
"""
import sys
import warnings

import h5py
import numpy as np

warnings.simplefilter("ignore")


def check(condition, what):
    if not condition:
        sys.exit(f"read_h5md.py: {what}")


def expected_positions(frames, n, d):
    f, k, a = np.meshgrid(np.arange(frames), np.arange(n), np.arange(d), indexing="ij")
    return f + k / 64 + a / 8


def check_with_h5py(path, n, frames, d, cells):
    with h5py.File(path, "r") as f:
        h5md = f["h5md"]
        check(list(h5md.attrs["version"]) == [1, 1], "h5md version is not [1, 1]")
        check(h5md["author"].attrs["name"], "h5md/author has no name")
        check(h5md["creator"].attrs["name"] == b"cpm", "h5md/creator name is not cpm")
        check("version" in h5md["creator"].attrs, "h5md/creator has no version")

        group = f["particles/trajectory"]
        check(group["box"].attrs["dimension"] == d, "box dimension")
        check([b.decode() for b in group["box"].attrs["boundary"]] == ["none"] * d, "box boundary")
        position = group["position"]
        value = position["value"]
        check(value.shape == (frames, n, d), f"position/value shape {value.shape}")
        check(value.maxshape == (None, n, d), "position/value is not extendible in time")
        check(value.chunks is not None, "position/value is not chunked")
        check(np.array_equal(value[()], expected_positions(frames, n, d)), "position values")
        check(position["step"].shape == (frames,) and position["time"].shape == (frames,),
              "position step/time shape")
        check(np.array_equal(position["time"][()], 0.5 * np.arange(frames)), "position time values")

        energy = f["observables/energy"]
        check(energy["value"].shape == (frames,), "observables/energy shape")
        check(np.array_equal(energy["value"][()], np.arange(frames) / 4), "observables/energy values")

        parameters = f["parameters"]
        check(parameters["particles"].attrs["n"] == n, "parameters/particles n")
        check(parameters["interaction"].attrs["kernel"] == b"riesz", "parameters/interaction kernel")
        check(parameters["interaction"].attrs["s"] == 1.5, "parameters/interaction s")

        fields = f["fields"]
        check(list(fields.attrs["cells"]) == cells, "fields cells")
        check(fields["mask"].shape == tuple(cells), "fields/mask shape")
        density = fields["density/value"]
        check(density.shape == (frames, *cells), f"fields/density/value shape {density.shape}")
        # value[f][i][j][k] holds flat index i + nx (j + ny k).
        grids = np.meshgrid(*[np.arange(c) for c in cells], indexing="ij")
        flat = grids[0] + cells[0] * (grids[1] + cells[1] * grids[2])
        want = np.arange(frames)[:, None, None, None] + flat[None] / 1024
        check(np.array_equal(density[()], want), "fields/density values or cell order")


def check_with_mdanalysis(path, n, frames, units):
    with warnings.catch_warnings():  # MDAnalysis re-enables its own import-time warnings
        warnings.simplefilter("ignore")
        import MDAnalysis as mda

    if units:
        universe = mda.Universe(path)  # the one-line form: needs units, group "trajectory", .h5md
    else:
        universe = mda.Universe.empty(n, trajectory=True)
        universe.load_new(path, format="H5MD", convert_units=False)
    trajectory = universe.trajectory
    check(trajectory.n_atoms == n, f"MDAnalysis n_atoms {trajectory.n_atoms}")
    check(trajectory.n_frames == frames, f"MDAnalysis n_frames {trajectory.n_frames}")
    want = expected_positions(frames, n, 3)
    for f, ts in enumerate(trajectory):
        check(ts.positions.shape == (n, 3), "MDAnalysis positions shape")
        # MDAnalysis keeps float32 positions.
        check(np.allclose(ts.positions, want[f], rtol=1e-6, atol=0), f"MDAnalysis frame {f}")
        check(ts.time == 0.5 * f, f"MDAnalysis time of frame {f}")
        check(ts.data["energy"] == f / 4, f"MDAnalysis observable of frame {f}")


def main():
    path, n, frames, d = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    cells = [int(c) for c in sys.argv[5].split(",")]
    check_with_h5py(path, n, frames, d, cells)
    if "--mdanalysis" in sys.argv:
        check_with_mdanalysis(path, n, frames, "--units" in sys.argv)
    print(f"read_h5md.py: {path}: ok")


if __name__ == "__main__":
    main()
