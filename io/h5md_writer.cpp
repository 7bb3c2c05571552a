#include "io/h5md_writer.hpp"

#include <filesystem>
#include <stdexcept>

#include "io/hdf5_parameters.hpp"
#include "io/input_error.hpp"

namespace cpm {

namespace {

void require_element_name(const std::string& name) {
  if (name.empty() || name == "." || name.find('/') != std::string::npos)
    throw std::invalid_argument("'" + name + "' cannot name an H5MD element");
}

H5::H5File create_file(const std::string& path, Eigen::Index particles, int dim, bool overwrite) {
  if (particles < 1 || dim < 1)
    throw std::invalid_argument(path + ": needs N ≥ 1 particles and d ≥ 1");
  if (!overwrite && std::filesystem::exists(path))
    throw InputError(path + ": exists already; pass --overwrite or choose another output folder");
  hdf5::record_library_errors();
  try {
    return H5::H5File(path, H5F_ACC_TRUNC);
  } catch (const H5::Exception&) {
    throw InputError(path + ": cannot create the HDF5 file");
  }
}

}  // namespace

H5mdWriter::H5mdWriter(const std::string& path, const H5mdHeader& header,
                       const ParameterSet& parameters, Eigen::Index particles, int dim,
                       bool overwrite)
    : path_(path),
      header_(header),
      particles_(particles),
      dim_(dim),
      file_(create_file(path, particles, dim, overwrite)) {
  const H5::Group root = file_.openGroup("/");
  const H5::Group h5md = root.createGroup("h5md");
  hdf5::write_attribute(h5md, "version", std::vector<std::int64_t>{1, 1});
  hdf5::write_attribute(h5md.createGroup("author"), "name", header.author);
  const H5::Group creator = h5md.createGroup("creator");
  hdf5::write_attribute(creator, "name", header.creator);
  hdf5::write_attribute(creator, "version", header.creator_version);
  for (const auto& [name, value] : header.creator_details)
    hdf5::write_attribute(creator, name, value);

  const H5::Group particle_group =
      hdf5::require_group(root, std::string("particles/") + kH5mdParticleGroup);
  const H5::Group box = particle_group.createGroup("box");
  hdf5::write_attribute(box, "dimension", std::int64_t{dim});
  // Boundaries are "none": the domain D is closed by a wall (the projection), never periodic.
  hdf5::write_attribute(box, "boundary",
                        std::vector<std::string>(static_cast<std::size_t>(dim), "none"));
  position_ = std::make_unique<Element>(make_element(
      particle_group, "position", {static_cast<hsize_t>(particles), static_cast<hsize_t>(dim)},
      header.length_unit));
  root.createGroup("observables");
  write_parameters(root, parameters);
  flush();
}

H5mdWriter::~H5mdWriter() {
  try {
    flush();
  } catch (const H5::Exception&) {
    // A destructor must not throw; the frames flushed so far stay readable.
  }
}

H5mdWriter::Element H5mdWriter::make_element(const H5::Group& parent, const std::string& name,
                                             const std::vector<hsize_t>& frame_shape,
                                             const std::string& unit) {
  const H5::Group group = parent.createGroup(name);
  Element element{hdf5::FrameDataset(group, "step", H5::PredType::NATIVE_INT64, {}),
                  hdf5::FrameDataset(group, "time", H5::PredType::NATIVE_DOUBLE, {}),
                  hdf5::FrameDataset(group, "value", H5::PredType::NATIVE_DOUBLE, frame_shape)};
  if (!header_.time_unit.empty())
    hdf5::write_attribute(element.time.dataset(), "unit", header_.time_unit, true);
  if (!unit.empty()) hdf5::write_attribute(element.value.dataset(), "unit", unit, true);
  return element;
}

void H5mdWriter::append_clock(Element& element, std::int64_t step, double time,
                              const std::string& what) {
  if (element.step.frames() > 0 && step < element.last_step)
    throw std::invalid_argument(path_ + ": " + what + ": steps must not decrease");
  element.step.append(&step);
  element.time.append(&time);
  element.last_step = step;
}

void H5mdWriter::write_positions(std::int64_t step, double time, const Eigen::MatrixXd& positions) {
  if (positions.rows() != particles_ || positions.cols() != dim_)
    throw std::invalid_argument(path_ + ": positions must be (N, d) = (" +
                                std::to_string(particles_) + ", " + std::to_string(dim_) + ")");
  row_major_ = positions;  // value[frame][N][d] is stored in C order
  position_->value.append(row_major_.data());
  append_clock(*position_, step, time, "position");
}

void H5mdWriter::write_observables(std::int64_t step, double time,
                                   const std::vector<std::string>& names,
                                   const std::vector<double>& values) {
  if (names.size() != values.size())
    throw std::invalid_argument(path_ + ": observables need one value per name");
  for (std::size_t i = 0; i < names.size(); ++i) {
    auto it = observables_.find(names[i]);
    if (it == observables_.end()) {
      require_element_name(names[i]);
      it = observables_
               .emplace(names[i], make_element(file_.openGroup("observables"), names[i], {}, ""))
               .first;
    }
    it->second.value.append(&values[i]);
    append_clock(it->second, step, time, "observables/" + names[i]);
  }
}

void H5mdWriter::set_grid(const CellGrid& grid, const std::vector<std::uint8_t>& mask) {
  if (grid_) throw std::logic_error(path_ + ": the grid is set once");
  grid.validate(path_);
  if (static_cast<Eigen::Index>(mask.size()) != grid.size())
    throw std::invalid_argument(path_ + ": the mask needs one value per cell");
  grid_ = grid;
  const H5::Group fields = file_.createGroup("fields");
  const auto d = static_cast<std::size_t>(grid.dim);
  hdf5::write_attribute(fields, "dimension", std::int64_t{grid.dim});
  hdf5::write_attribute(fields, "cells",
                        std::vector<std::int64_t>(grid.cells.begin(), grid.cells.begin() + d));
  hdf5::write_attribute(fields, "origin",
                        std::vector<double>(grid.origin.begin(), grid.origin.begin() + d));
  hdf5::write_attribute(fields, "spacing",
                        std::vector<double>(grid.spacing.begin(), grid.spacing.begin() + d));
  std::vector<hsize_t> shape(grid.cells.begin(), grid.cells.begin() + d);
  // mask[nx][ny][nz] in C order: the x-fastest input transposed.
  std::vector<std::uint8_t> c_order(mask.size());
  const auto [nx, ny, nz] = grid.cells;
  for (Eigen::Index k = 0; k < nz; ++k)
    for (Eigen::Index j = 0; j < ny; ++j)
      for (Eigen::Index i = 0; i < nx; ++i)
        c_order[static_cast<std::size_t>((i * ny + j) * nz + k)] =
            mask[static_cast<std::size_t>(i + nx * (j + ny * k))];
  hdf5::write_dataset(fields, "mask", shape, c_order);
  field_buffer_.resize(static_cast<std::size_t>(grid.size()));
}

void H5mdWriter::write_field(const std::string& name, std::int64_t step, double time,
                             const Eigen::Ref<const Eigen::VectorXd>& values) {
  if (!grid_) throw std::logic_error(path_ + ": set_grid must come before write_field");
  if (values.size() != grid_->size())
    throw std::invalid_argument(path_ + ": field " + name + " needs one value per cell");
  auto it = fields_.find(name);
  if (it == fields_.end()) {
    require_element_name(name);
    if (name == "mask")
      throw std::invalid_argument(path_ + ": 'mask' is the grid's mask, not a field");
    std::vector<hsize_t> shape(grid_->cells.begin(), grid_->cells.begin() + grid_->dim);
    it = fields_.emplace(name, make_element(file_.openGroup("fields"), name, shape, "")).first;
  }
  const auto [nx, ny, nz] = grid_->cells;
  for (Eigen::Index k = 0; k < nz; ++k)
    for (Eigen::Index j = 0; j < ny; ++j)
      for (Eigen::Index i = 0; i < nx; ++i)
        field_buffer_[static_cast<std::size_t>((i * ny + j) * nz + k)] =
            values[i + nx * (j + ny * k)];
  it->second.value.append(field_buffer_.data());
  append_clock(it->second, step, time, "fields/" + name);
}

void H5mdWriter::write_checkpoint(const RestartState& state) {
  if (position_->step.frames() == 0 || position_->last_step != state.step)
    throw std::logic_error(path_ + ": a checkpoint needs a position frame at its step");
  const auto density = fields_.find(kDensityField);
  if (density != fields_.end() && density->second.last_step != state.step)
    throw std::logic_error(path_ + ": a checkpoint needs the density frame at its step");
  const H5::Group root = file_.openGroup("/");
  const H5::Group checkpoint = hdf5::require_group(root, "checkpoint");
  hdf5::write_attribute(checkpoint, "step", state.step);
  hdf5::write_attribute(checkpoint, "time", state.time);
  hdf5::write_attribute(checkpoint, "seed", state.seed);
  hdf5::write_attribute(checkpoint, "replica", state.replica);
  hdf5::write_attribute(checkpoint, "position_frame",
                        static_cast<std::int64_t>(position_->step.frames() - 1));
  if (density != fields_.end())
    hdf5::write_attribute(checkpoint, "density_frame",
                          static_cast<std::int64_t>(density->second.step.frames() - 1));
  if (!state.fft_wisdom.empty())
    hdf5::write_attribute(checkpoint, "fft_wisdom", state.fft_wisdom, true);
  const H5::Group solver_state = hdf5::require_group(checkpoint, "solver_state");
  for (int i = solver_state.getNumAttrs() - 1; i >= 0; --i) {
    const std::string stale = solver_state.openAttribute(static_cast<unsigned>(i)).getName();
    if (!state.solver_state.count(stale)) solver_state.removeAttr(stale);
  }
  for (const auto& [name, value] : state.solver_state) {
    require_element_name(name);
    hdf5::write_attribute(solver_state, name, value);
  }
  flush();
}

std::uintmax_t H5mdWriter::bytes_for_next_frame(const std::vector<std::string>& observables,
                                                const std::vector<std::string>& fields) const {
  const auto clock = hdf5::FrameDataset::bytes_of_first_frame({}, 8);
  const auto element = [&](const Element& e) {
    return e.step.bytes_to_append() + e.time.bytes_to_append() + e.value.bytes_to_append();
  };
  // Object headers, B-tree nodes and the checkpoint's attributes: a few kB per element.
  std::uintmax_t bytes = element(*position_) + 65536;
  for (const std::string& name : observables) {
    const auto it = observables_.find(name);
    bytes += (it != observables_.end() ? element(it->second) : 3 * clock) + 4096;
  }
  for (const std::string& name : fields) {
    const auto it = fields_.find(name);
    std::vector<hsize_t> shape;
    if (grid_) shape.assign(grid_->cells.begin(), grid_->cells.begin() + grid_->dim);
    bytes +=
        (it != fields_.end() ? element(it->second)
                             : 2 * clock + hdf5::FrameDataset::bytes_of_first_frame(shape, 8)) +
        4096;
  }
  return bytes;
}

void H5mdWriter::flush() {
  file_.flush(H5F_SCOPE_GLOBAL);
}

}  // namespace cpm
