"""Reads a cpm .pvd collection with VTK's own Python readers; exits non-zero on any mismatch.

usage: read_vtk_series.py RUN.pvd N FRAMES DIM [NX,NY,NZ]

Frame f was written at time 0.25 f with positions x[k][a] = f + k/64 + a/8, force = -x,
local_density = k, and (with a grid) cell data density = f + (cell index)/1024, potential = -density.
"""
import os
import sys
import xml.etree.ElementTree as ElementTree

import vtk
from vtk.util.numpy_support import vtk_to_numpy
import numpy as np


def check(condition, what):
    if not condition:
        sys.exit(f"read_vtk_series.py: {what}")


def read(path):
    reader = vtk.vtkXMLPolyDataReader() if path.endswith(".vtp") else vtk.vtkXMLImageDataReader()
    check(reader.CanReadFile(path), f"VTK cannot read {path}")
    reader.SetFileName(path)
    reader.Update()
    return reader.GetOutput()


def arrays(data):
    return {data.GetArrayName(i) for i in range(data.GetNumberOfArrays())}


def check_particles(cloud, f, n, dim):
    check(cloud.GetNumberOfPoints() == n, f"frame {f}: {cloud.GetNumberOfPoints()} points")
    check(cloud.GetNumberOfVerts() == n, f"frame {f}: {cloud.GetNumberOfVerts()} vertex cells")
    point_data = cloud.GetPointData()
    check(arrays(point_data) == {"id", "force", "local_density"}, f"point arrays {arrays(point_data)}")
    k = np.arange(n)[:, None]
    want = np.zeros((n, 3))
    want[:, :dim] = f + k / 64 + np.arange(dim)[None, :] / 8
    check(np.array_equal(vtk_to_numpy(cloud.GetPoints().GetData()), want), f"frame {f}: points")
    check(np.array_equal(vtk_to_numpy(point_data.GetArray("force")), -want), f"frame {f}: force")
    check(np.array_equal(vtk_to_numpy(point_data.GetArray("id")), np.arange(n)), f"frame {f}: id")
    check(np.array_equal(vtk_to_numpy(point_data.GetArray("local_density")), np.arange(n)),
          f"frame {f}: local_density")


def check_grid(image, f, cells, dim):
    size = int(np.prod(cells))
    check(image.GetNumberOfCells() == size, f"frame {f}: {image.GetNumberOfCells()} cells")
    points_per_axis = [c + 1 if a < dim else 1 for a, c in enumerate(cells)]
    check(list(image.GetDimensions()) == points_per_axis, f"dimensions {image.GetDimensions()}")
    cell_data = image.GetCellData()
    check(arrays(cell_data) == {"mask", "density", "potential"}, f"cell arrays {arrays(cell_data)}")
    density = f + np.arange(size) / 1024
    check(np.array_equal(vtk_to_numpy(cell_data.GetArray("density")), density), f"frame {f}: density")
    check(np.array_equal(vtk_to_numpy(cell_data.GetArray("potential")), -density), f"frame {f}: potential")
    check(np.array_equal(vtk_to_numpy(cell_data.GetArray("mask")), np.arange(size) % 2), "mask")


def main():
    pvd, n, frames, dim = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    cells = [int(c) for c in sys.argv[5].split(",")] if len(sys.argv) > 5 else None
    datasets = ElementTree.parse(pvd).getroot().find("Collection").findall("DataSet")
    times = sorted({float(d.get("timestep")) for d in datasets})
    check(times == [0.25 * f for f in range(frames)], f"time steps {times}")
    for d in datasets:
        f = times.index(float(d.get("timestep")))
        data = read(os.path.join(os.path.dirname(pvd), d.get("file")))
        if d.get("part") == "0":
            check(d.get("file").endswith(".vtp"), "part 0 is not particles")
            check_particles(data, f, n, dim)
        else:
            check(cells is not None and d.get("part") == "1", f"unexpected part {d.get('part')}")
            check_grid(data, f, cells, dim)
    parts = sorted((float(d.get("timestep")), d.get("part")) for d in datasets)
    want = sorted((t, p) for t in times for p in (["0", "1"] if cells else ["0"]))
    check(parts == want, f"each time must list {'both parts' if cells else 'the particles'}")
    print(f"read_vtk_series.py: {pvd}: {len(times)} time steps ok")


if __name__ == "__main__":
    main()
