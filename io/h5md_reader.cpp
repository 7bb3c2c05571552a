#include "io/h5md_reader.hpp"

#include <H5Cpp.h>

#include <cmath>
#include <filesystem>
#include <stdexcept>

#include "io/hdf5_parameters.hpp"
#include "io/hdf5_support.hpp"
#include "io/input_error.hpp"

namespace cpm {

namespace {

using RowMajorMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

std::string hdf5_reason() {
  const std::string reason = hdf5::last_library_error();
  return reason.empty() ? "unreadable (damaged file)" : reason;
}

// One open run file with every failure turned into a one-line InputError.
class RunFile {
 public:
  explicit RunFile(const std::string& path) : path_(path), file_(open(path)) {
    const H5::Group root = file_.openGroup("/");
    if (!root.nameExists("h5md")) fail("no h5md group: not an H5MD file");
    guard("h5md/version", [&] {
      const std::vector<std::int64_t> v =
          hdf5::read_int64s_attribute(root.openGroup("h5md"), "version");
      if (v.size() != 2 || v[0] != 1) throw std::runtime_error("not H5MD 1.x");
    });
  }

  [[noreturn]] void fail(const std::string& reason) const {
    throw InputError(path_ + ": " + reason);
  }

  template <class F>
  auto guard(const std::string& object, F&& f) const -> decltype(f()) {
    hdf5::clear_last_library_error();
    try {
      return f();
    } catch (const InputError&) {
      throw;
    } catch (const H5::Exception&) {
      fail(object + ": " + hdf5_reason());
    } catch (const std::exception& e) {
      fail(object + ": " + e.what());
    }
  }

  // True if every prefix of the '/'-separated path exists (H5Lexists checks one link at a time).
  bool has(const std::string& object) const {
    for (std::size_t slash = object.find('/');; slash = object.find('/', slash + 1)) {
      if (H5Lexists(file_.getId(), object.substr(0, slash).c_str(), H5P_DEFAULT) <= 0) return false;
      if (slash == std::string::npos) return true;
    }
  }
  H5::Group group(const std::string& object) const {
    if (!has(object)) fail("missing group " + object);
    return guard(object, [&] { return file_.openGroup(object); });
  }
  H5::DataSet dataset(const std::string& object) const {
    if (!has(object)) fail("missing dataset " + object);
    return guard(object, [&] { return file_.openDataSet(object); });
  }

  std::vector<double> doubles(const std::string& object, std::vector<hsize_t>& shape) const {
    return guard(object, [&] { return hdf5::read_doubles(dataset(object), shape); });
  }
  std::vector<std::int64_t> int64s(const std::string& object, std::vector<hsize_t>& shape) const {
    return guard(object, [&] { return hdf5::read_int64s(dataset(object), shape); });
  }

  // step and time of a time-dependent element, both of length `frames`.
  H5mdClock clock(const std::string& element, hsize_t frames) const {
    std::vector<hsize_t> step_shape, time_shape;
    H5mdClock c{int64s(element + "/step", step_shape), doubles(element + "/time", time_shape)};
    if (step_shape != std::vector<hsize_t>{frames} || time_shape != std::vector<hsize_t>{frames})
      fail(element + ": step and time do not match the " + std::to_string(frames) +
           " frames of value");
    return c;
  }

  const std::string& path() const { return path_; }
  H5::Group root() const { return file_.openGroup("/"); }

 private:
  static H5::H5File open(const std::string& path) {
    hdf5::record_library_errors();
    hdf5::clear_last_library_error();
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) throw InputError(path + ": no such file");
    if (std::filesystem::is_directory(path, ec))
      throw InputError(path + ": is a directory, not an HDF5 file");
    if (H5Fis_hdf5(path.c_str()) <= 0) throw InputError(path + ": not an HDF5 file");
    try {
      return H5::H5File(path, H5F_ACC_RDONLY);
    } catch (const H5::Exception&) {
      throw InputError(path + ": truncated or damaged HDF5 file (" + hdf5_reason() + ")");
    }
  }

  std::string path_;
  H5::H5File file_;
};

std::string particle_group_name(const RunFile& file) {
  const H5::Group particles = file.group("particles");
  if (particles.nameExists(kH5mdParticleGroup)) return kH5mdParticleGroup;
  if (particles.getNumObjs() == 0) file.fail("particles holds no particle group");
  return particles.getObjnameByIdx(0);
}

ParameterSet parameters_of(const RunFile& file) {
  ParameterSet p;
  const H5::Group group = file.group("parameters");
  file.guard("parameters", [&] { p = read_parameters(group); });
  return p;
}

// The box dimension, checked against the position frames' [frames][N][d] shape.
struct PositionLayout {
  std::string element;
  int dim;
  hsize_t frames, particles;
};

PositionLayout position_layout(const RunFile& file, const std::string& group) {
  const std::string base = "particles/" + group;
  const int dim = static_cast<int>(file.guard(base + "/box", [&] {
    return hdf5::read_int64_attribute(file.group(base + "/box"), "dimension");
  }));
  const std::string element = base + "/position";
  const H5::DataSet value = file.dataset(element + "/value");
  const std::vector<hsize_t> shape = file.guard(element + "/value", [&] {
    std::vector<hsize_t> dims(static_cast<std::size_t>(value.getSpace().getSimpleExtentNdims()));
    value.getSpace().getSimpleExtentDims(dims.data());
    return dims;
  });
  if (shape.size() != 3 || shape[2] != static_cast<hsize_t>(dim) || shape[1] == 0)
    file.fail(element + "/value: shape is not [frames][N][" + std::to_string(dim) + "]");
  return {element, dim, shape[0], shape[1]};
}

Eigen::MatrixXd position_frame(const RunFile& file, const PositionLayout& layout, hsize_t frame) {
  const std::string object = layout.element + "/value";
  const std::vector<double> values =
      file.guard(object, [&] { return hdf5::read_double_frame(file.dataset(object), frame); });
  return Eigen::Map<const RowMajorMatrix>(values.data(),
                                          static_cast<Eigen::Index>(layout.particles), layout.dim);
}

std::optional<CellGrid> grid_of(const RunFile& file) {
  if (!file.has("fields")) return std::nullopt;
  const H5::Group fields = file.group("fields");
  return file.guard("fields", [&] {
    CellGrid g;
    g.dim = static_cast<int>(hdf5::read_int64_attribute(fields, "dimension"));
    const auto cells = hdf5::read_int64s_attribute(fields, "cells");
    const auto origin = hdf5::read_doubles_attribute(fields, "origin");
    const auto spacing = hdf5::read_doubles_attribute(fields, "spacing");
    const auto d = static_cast<std::size_t>(g.dim);
    if (g.dim < 1 || g.dim > 3 || cells.size() != d || origin.size() != d || spacing.size() != d)
      throw std::runtime_error("grid attributes do not agree with its dimension");
    for (std::size_t a = 0; a < d; ++a) {
      g.cells[a] = cells[a];
      g.origin[a] = origin[a];
      g.spacing[a] = spacing[a];
    }
    g.validate("grid");
    return g;
  });
}

// A C-order [nx][ny][nz] block as a flat x-fastest array.
template <class T>
std::vector<T> x_fastest(const std::vector<T>& c_order, const CellGrid& g) {
  std::vector<T> out(c_order.size());
  const auto [nx, ny, nz] = g.cells;
  for (Eigen::Index k = 0; k < nz; ++k)
    for (Eigen::Index j = 0; j < ny; ++j)
      for (Eigen::Index i = 0; i < nx; ++i)
        out[static_cast<std::size_t>(i + nx * (j + ny * k))] =
            c_order[static_cast<std::size_t>((i * ny + j) * nz + k)];
  return out;
}

std::vector<hsize_t> grid_shape(const CellGrid& g) {
  return std::vector<hsize_t>(g.cells.begin(), g.cells.begin() + g.dim);
}

hsize_t field_frames(const RunFile& file, const std::string& element, const CellGrid& g) {
  const H5::DataSet value = file.dataset(element + "/value");
  std::vector<hsize_t> dims = file.guard(element + "/value", [&] {
    std::vector<hsize_t> d(static_cast<std::size_t>(value.getSpace().getSimpleExtentNdims()));
    value.getSpace().getSimpleExtentDims(d.data());
    return d;
  });
  if (dims.empty() || std::vector<hsize_t>(dims.begin() + 1, dims.end()) != grid_shape(g))
    file.fail(element + "/value: shape does not match the grid");
  return dims[0];
}

Eigen::VectorXd field_frame(const RunFile& file, const std::string& element, const CellGrid& g,
                            hsize_t frame) {
  const std::string object = element + "/value";
  const std::vector<double> c_order =
      file.guard(object, [&] { return hdf5::read_double_frame(file.dataset(object), frame); });
  const std::vector<double> flat = x_fastest(c_order, g);
  return Eigen::Map<const Eigen::VectorXd>(flat.data(), static_cast<Eigen::Index>(flat.size()));
}

// The checkpoint's state and the frames it marks, checked against the position element.
struct CheckpointIndex {
  RestartState state;
  hsize_t position_frame;
  std::optional<hsize_t> density_frame;
};

std::optional<CheckpointIndex> checkpoint_of(const RunFile& file, const PositionLayout& layout) {
  if (!file.has("checkpoint")) return std::nullopt;
  const H5::Group group = file.group("checkpoint");
  CheckpointIndex c = file.guard("checkpoint", [&] {
    CheckpointIndex index;
    index.state.step = hdf5::read_int64_attribute(group, "step");
    index.state.time = hdf5::read_double_attribute(group, "time");
    index.state.seed = hdf5::read_uint64_attribute(group, "seed");
    index.state.replica = hdf5::read_uint64_attribute(group, "replica");
    const std::int64_t frame = hdf5::read_int64_attribute(group, "position_frame");
    if (frame < 0) throw std::runtime_error("negative position_frame");
    index.position_frame = static_cast<hsize_t>(frame);
    if (group.attrExists("density_frame")) {
      const std::int64_t d = hdf5::read_int64_attribute(group, "density_frame");
      if (d < 0) throw std::runtime_error("negative density_frame");
      index.density_frame = static_cast<hsize_t>(d);
    }
    if (group.attrExists("fft_wisdom"))
      index.state.fft_wisdom = hdf5::read_string_attribute(group, "fft_wisdom");
    if (group.nameExists("solver_state")) {
      const H5::Group solver = group.openGroup("solver_state");
      for (unsigned i = 0; i < static_cast<unsigned>(solver.getNumAttrs()); ++i) {
        const std::string name = solver.openAttribute(i).getName();
        index.state.solver_state[name] = hdf5::read_double_attribute(solver, name);
      }
    }
    return index;
  });
  if (c.position_frame >= layout.frames)
    file.fail("checkpoint refers to position frame " + std::to_string(c.position_frame) + " but " +
              layout.element + " holds " + std::to_string(layout.frames) + " frames");
  const H5mdClock clock = file.clock(layout.element, layout.frames);
  if (clock.step[c.position_frame] != c.state.step || clock.time[c.position_frame] != c.state.time)
    file.fail("checkpoint step/time do not match those of its position frame");
  return c;
}

}  // namespace

H5mdRun read_h5md(const std::string& path) {
  const RunFile file(path);
  H5mdRun run;
  const H5::Group h5md = file.group("h5md");
  file.guard("h5md", [&] {
    const auto v = hdf5::read_int64s_attribute(h5md, "version");
    run.version = {v.at(0), v.at(1)};
    run.header.author = hdf5::read_string_attribute(h5md.openGroup("author"), "name");
    const H5::Group creator = h5md.openGroup("creator");
    run.header.creator = hdf5::read_string_attribute(creator, "name");
    run.header.creator_version = hdf5::read_string_attribute(creator, "version");
    for (int i = 0; i < creator.getNumAttrs(); ++i) {
      const std::string name = creator.openAttribute(static_cast<unsigned>(i)).getName();
      if (name != "name" && name != "version")
        run.header.creator_details[name] = hdf5::read_string_attribute(creator, name);
    }
  });
  run.parameters = parameters_of(file);
  run.particle_group = particle_group_name(file);
  const PositionLayout layout = position_layout(file, run.particle_group);
  run.dim = layout.dim;
  run.boundary = file.guard("box", [&] {
    return hdf5::read_strings_attribute(file.group("particles/" + run.particle_group + "/box"),
                                        "boundary");
  });
  run.position_clock = file.clock(layout.element, layout.frames);
  file.guard(layout.element, [&] {
    const H5::DataSet time = file.dataset(layout.element + "/time");
    if (time.attrExists("unit")) run.header.time_unit = hdf5::read_string_attribute(time, "unit");
    const H5::DataSet value = file.dataset(layout.element + "/value");
    if (value.attrExists("unit"))
      run.header.length_unit = hdf5::read_string_attribute(value, "unit");
  });
  for (hsize_t f = 0; f < layout.frames; ++f)
    run.positions.push_back(position_frame(file, layout, f));

  const H5::Group observables = file.group("observables");
  for (hsize_t i = 0; i < observables.getNumObjs(); ++i) {
    const std::string name = observables.getObjnameByIdx(i);
    const std::string element = "observables/" + name;
    std::vector<hsize_t> shape;
    std::vector<double> values = file.doubles(element + "/value", shape);
    if (shape.size() != 1) file.fail(element + "/value: not a scalar time series");
    run.observables[name] = {file.clock(element, shape[0]), std::move(values)};
  }

  run.grid = grid_of(file);
  if (run.grid) {
    std::vector<hsize_t> shape;
    const std::vector<std::uint8_t> mask = file.guard(
        "fields/mask", [&] { return hdf5::read_uint8s(file.dataset("fields/mask"), shape); });
    if (shape != grid_shape(*run.grid)) file.fail("fields/mask: shape does not match the grid");
    run.mask = x_fastest(mask, *run.grid);
    const H5::Group fields = file.group("fields");
    for (hsize_t i = 0; i < fields.getNumObjs(); ++i) {
      const std::string name = fields.getObjnameByIdx(i);
      if (name == "mask") continue;
      const std::string element = "fields/" + name;
      const hsize_t frames = field_frames(file, element, *run.grid);
      auto& [clock, frames_out] = run.fields[name];
      clock = file.clock(element, frames);
      for (hsize_t f = 0; f < frames; ++f)
        frames_out.push_back(field_frame(file, element, *run.grid, f));
    }
  }
  if (const auto c = checkpoint_of(file, layout)) run.restart = c->state;
  return run;
}

Checkpoint read_checkpoint(const std::string& path) {
  const RunFile file(path);
  const PositionLayout layout = position_layout(file, particle_group_name(file));
  const std::optional<CheckpointIndex> index = checkpoint_of(file, layout);
  if (!index) file.fail("holds no checkpoint to restart from");
  Checkpoint c;
  c.state = index->state;
  c.parameters = parameters_of(file);
  c.positions = position_frame(file, layout, index->position_frame);
  if (!c.positions.allFinite()) file.fail(layout.element + ": checkpoint positions are not finite");
  c.grid = grid_of(file);
  if (c.grid && index->density_frame) {
    const std::string element = std::string("fields/") + kDensityField;
    const hsize_t frames = field_frames(file, element, *c.grid);
    if (*index->density_frame >= frames)
      file.fail("checkpoint refers to a missing " + element + " frame");
    const H5mdClock clock = file.clock(element, frames);
    if (clock.step[*index->density_frame] != c.state.step)
      file.fail(element + ": the checkpoint's frame is at another step than the positions");
    c.density = field_frame(file, element, *c.grid, *index->density_frame);
    if (!c.density.allFinite() || (c.density.array() < 0.0).any())
      file.fail(element + ": checkpoint density is negative or not finite");
  } else if (c.grid) {
    c.grid.reset();
  }
  return c;
}

std::string read_checkpoint_fft_wisdom(const std::string& path) {
  hdf5::record_library_errors();
  try {
    if (!std::filesystem::is_regular_file(path)) return "";
    const H5::H5File file(path, H5F_ACC_RDONLY);
    if (!file.nameExists("checkpoint")) return "";
    const H5::Group checkpoint = file.openGroup("checkpoint");
    return checkpoint.attrExists("fft_wisdom")
               ? hdf5::read_string_attribute(checkpoint, "fft_wisdom")
               : std::string();
  } catch (const std::exception&) {
    return "";
  } catch (const H5::Exception&) {
    return "";
  }
}

}  // namespace cpm
