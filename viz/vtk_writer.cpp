#include "viz/vtk_writer.hpp"

#include <vtkCellArray.h>
#include <vtkCellData.h>
#include <vtkDoubleArray.h>
#include <vtkIdTypeArray.h>
#include <vtkImageData.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>
#include <vtkUnsignedCharArray.h>
#include <vtkXMLImageDataWriter.h>
#include <vtkXMLPolyDataWriter.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <sstream>
#include <stdexcept>

namespace cpm {

namespace {

std::string numbered(const std::string& stem, const std::string& kind, int frame,
                     const std::string& ext) {
  std::ostringstream name;
  name << stem << '_' << kind << '_' << std::setw(4) << std::setfill('0') << frame << '.' << ext;
  return name.str();
}

// A VTK array from `array`, whose rows must number `rows`; spatial vectors padded to 3 components.
vtkNew<vtkDoubleArray> to_vtk(const NamedArray& array, Eigen::Index rows, const std::string& what) {
  const Eigen::Index columns = array.values.cols();
  if (array.values.rows() != rows)
    throw std::invalid_argument(what + ": array " + array.name + " needs " + std::to_string(rows) +
                                " rows");
  if (array.spatial && columns > 3)
    throw std::invalid_argument(what + ": vector array " + array.name +
                                " has more than 3 components");
  const int components = array.spatial ? 3 : static_cast<int>(columns);
  vtkNew<vtkDoubleArray> out;
  out->SetName(array.name.c_str());
  out->SetNumberOfComponents(components);
  out->SetNumberOfTuples(rows);
  for (Eigen::Index r = 0; r < rows; ++r)
    for (int c = 0; c < components; ++c)
      out->SetTypedComponent(r, c, c < columns ? array.values(r, c) : 0.0);
  return out;
}

// Raw binary appended data without compression: zlib made a frame of 10⁶ particles about ten times
// slower to write for little gain on random coordinates (bench/output_bench.cpp).
template <class Writer, class Data>
void write_xml(Writer& writer, Data& data, const std::string& path) {
  writer->SetFileName(path.c_str());
  writer->SetInputData(data);
  writer->SetDataModeToAppended();
  writer->EncodeAppendedDataOff();
  writer->SetCompressorTypeToNone();
  if (writer->Write() != 1) throw std::runtime_error(path + ": VTK could not write the file");
}

}  // namespace

VtkSeriesWriter::VtkSeriesWriter(std::string directory, std::string stem)
    : directory_(std::move(directory)), stem_(std::move(stem)) {
  const std::string frames = directory_ + "/" + frames_folder();
  std::error_code ec;
  std::filesystem::create_directories(frames, ec);
  if (ec) throw std::runtime_error(frames + ": cannot create the folder: " + ec.message());
  // Frames of an earlier series of this name (a run replaced with --overwrite) would otherwise
  // stay beside the new ones without being listed in the new .pvd.
  for (const std::string& folder : {directory_, frames})
    for (const auto& entry : std::filesystem::directory_iterator(folder)) {
      const std::string name = entry.path().filename().string();
      const bool particles = name.starts_with(stem_ + "_particles_") && name.ends_with(".vtp");
      const bool grid = name.starts_with(stem_ + "_grid_") && name.ends_with(".vti");
      if (particles || grid) std::filesystem::remove(entry.path());
    }
}

void VtkSeriesWriter::set_grid(const CellGrid& grid, std::vector<std::uint8_t> mask) {
  if (grid_) throw std::logic_error(collection_path() + ": the grid is set once");
  grid.validate(collection_path());
  if (static_cast<Eigen::Index>(mask.size()) != grid.size())
    throw std::invalid_argument(collection_path() + ": the mask needs one value per cell");
  grid_ = grid;
  mask_ = std::move(mask);
}

void VtkSeriesWriter::write_frame(double time, const Eigen::MatrixXd& positions,
                                  const std::vector<NamedArray>& particle_arrays,
                                  const std::vector<NamedArray>& grid_fields) {
  if (!entries_.empty() && !(time > entries_.back().time))
    throw std::invalid_argument(collection_path() + ": frame times must increase");
  if (positions.cols() < 1 || positions.cols() > 3)
    throw std::invalid_argument(collection_path() + ": positions must have 1 to 3 columns");
  const Eigen::Index n = positions.rows();

  vtkNew<vtkPoints> points;
  points->SetDataTypeToDouble();
  points->SetNumberOfPoints(n);
  vtkNew<vtkCellArray> vertices;
  vertices->AllocateExact(n, n);
  vtkNew<vtkIdTypeArray> ids;
  ids->SetName("id");
  ids->SetNumberOfTuples(n);
  for (Eigen::Index k = 0; k < n; ++k) {
    double p[3] = {0.0, 0.0, 0.0};
    for (Eigen::Index a = 0; a < positions.cols(); ++a) p[a] = positions(k, a);
    points->SetPoint(k, p);
    const vtkIdType id = k;
    vertices->InsertNextCell(1, &id);
    ids->SetValue(k, id);
  }
  vtkNew<vtkPolyData> cloud;
  cloud->SetPoints(points);
  cloud->SetVerts(vertices);
  cloud->GetPointData()->AddArray(ids);
  for (const NamedArray& array : particle_arrays)
    cloud->GetPointData()->AddArray(to_vtk(array, n, collection_path()));
  const std::string particle_file =
      frames_folder() + "/" + numbered(stem_, "particles", frames_, "vtp");
  vtkNew<vtkXMLPolyDataWriter> particle_writer;
  write_xml(particle_writer, cloud, directory_ + "/" + particle_file);
  entries_.push_back({time, 0, particle_file});

  if (!grid_fields.empty()) {
    if (!grid_)
      throw std::logic_error(collection_path() + ": set_grid must come before grid fields");
    vtkNew<vtkImageData> image;
    image->SetDimensions(static_cast<int>(grid_->cells[0] + (grid_->dim > 0)),
                         static_cast<int>(grid_->cells[1] + (grid_->dim > 1)),
                         static_cast<int>(grid_->cells[2] + (grid_->dim > 2)));
    image->SetOrigin(grid_->origin.data());
    image->SetSpacing(grid_->spacing.data());
    vtkNew<vtkUnsignedCharArray> mask;
    mask->SetName("mask");
    mask->SetNumberOfTuples(grid_->size());
    for (Eigen::Index c = 0; c < grid_->size(); ++c)
      mask->SetValue(c, mask_[static_cast<std::size_t>(c)]);
    image->GetCellData()->AddArray(mask);
    for (const NamedArray& field : grid_fields)
      image->GetCellData()->AddArray(to_vtk(field, grid_->size(), collection_path()));
    const std::string grid_file = frames_folder() + "/" + numbered(stem_, "grid", frames_, "vti");
    vtkNew<vtkXMLImageDataWriter> grid_writer;
    write_xml(grid_writer, image, directory_ + "/" + grid_file);
    entries_.push_back({time, 1, grid_file});
  }
  ++frames_;
  write_collection();
}

void VtkSeriesWriter::write_collection() const {
  const std::string path = collection_path(), partial = path + ".partial";
  {
    std::ofstream out(partial);
    out << "<?xml version=\"1.0\"?>\n"
        << "<VTKFile type=\"Collection\" version=\"0.1\" byte_order=\"LittleEndian\">\n"
        << "  <Collection>\n"
        << std::setprecision(17);
    for (const Entry& e : entries_)
      out << "    <DataSet timestep=\"" << e.time << "\" group=\"\" part=\"" << e.part
          << "\" file=\"" << e.file << "\"/>\n";
    out << "  </Collection>\n</VTKFile>\n";
    if (!out) throw std::runtime_error(partial + ": cannot write the collection");
  }
  // Renamed into place, so a viewer never sees a half-written collection.
  std::filesystem::rename(partial, path);
}

}  // namespace cpm
