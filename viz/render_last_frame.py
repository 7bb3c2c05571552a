"""Renders the last frame of a cpm run to PNG with ParaView: particles as points over the density.

    pvbatch viz/render_last_frame.py out/run.pvd [out/last_frame.png]
    pvpython --force-offscreen-rendering viz/render_last_frame.py out/run.pvd

The .pvd lists, per time, the particles (part 0, .vtp) and the grid (part 1, .vti); the latest
time's files are shown: the grid's cell field (default "density"; a mid-height slice in 3D) in
colour, the particles as white points on top. Without a grid the particles are coloured by
"local_density" when they carry it. Needs ParaView's Python (paraview.simple); headless with pvbatch.
"""
import argparse
import os
import sys
import xml.etree.ElementTree as ElementTree


def last_frame(pvd):
    """(time, particle file, grid file or None) of the latest time in a .pvd collection."""
    datasets = ElementTree.parse(pvd).getroot().find("Collection").findall("DataSet")
    if not datasets:
        sys.exit(f"{pvd}: the collection lists no data sets")
    time = max(float(d.get("timestep")) for d in datasets)
    files = {d.get("part", "0"): os.path.join(os.path.dirname(os.path.abspath(pvd)), d.get("file"))
             for d in datasets if float(d.get("timestep")) == time}
    if "0" not in files:
        sys.exit(f"{pvd}: no particles at the last time {time}")
    return time, files["0"], files.get("1")


def render(pvd, png, field, size):
    from paraview import simple

    time, particle_file, grid_file = last_frame(pvd)
    view = simple.CreateView("RenderView")
    view.ViewSize = size
    view.OrientationAxesVisibility = 0
    view.Background = [0.1, 0.1, 0.12]
    flat = True
    if grid_file:
        grid = simple.XMLImageDataReader(FileName=[grid_file])
        grid.UpdatePipeline()
        bounds = grid.GetDataInformation().GetBounds()
        flat = bounds[5] == bounds[4]
        shown = grid
        if not flat:
            shown = simple.Slice(Input=grid)
            shown.SliceType = "Plane"
            shown.SliceType.Origin = [(bounds[0] + bounds[1]) / 2, (bounds[2] + bounds[3]) / 2,
                                      (bounds[4] + bounds[5]) / 2]
            shown.SliceType.Normal = [0.0, 0.0, 1.0]
        display = simple.Show(shown, view)
        display.Representation = "Surface"
        simple.ColorBy(display, ("CELLS", field))
        display.RescaleTransferFunctionToDataRange(True, False)
        display.SetScalarBarVisibility(view, True)
    particles = simple.XMLPolyDataReader(FileName=[particle_file])
    particles.UpdatePipeline()
    points = simple.Show(particles, view)
    points.Representation = "Points"
    points.PointSize = 4
    points.RenderPointsAsSpheres = 1
    arrays = particles.PointData.keys()
    if grid_file or "local_density" not in arrays:
        simple.ColorBy(points, None)
        points.AmbientColor = points.DiffuseColor = [1.0, 1.0, 1.0]
    else:
        simple.ColorBy(points, ("POINTS", "local_density"))
        points.SetScalarBarVisibility(view, True)
    if flat:
        view.InteractionMode = "2D"
    view.ResetCamera()
    simple.SaveScreenshot(png, view, ImageResolution=size)
    print(f"{png}: last frame t = {time:g} of {pvd}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pvd", help="the run's .pvd collection")
    parser.add_argument("png", nargs="?", help="output image (default: <pvd folder>/last_frame.png)")
    parser.add_argument("--field", default="density", help="grid cell array to colour by")
    parser.add_argument("--size", type=int, nargs=2, default=[1200, 900], metavar=("W", "H"))
    args = parser.parse_args()
    png = args.png or os.path.join(os.path.dirname(os.path.abspath(args.pvd)), "last_frame.png")
    render(args.pvd, png, args.field, args.size)


if __name__ == "__main__":
    main()
