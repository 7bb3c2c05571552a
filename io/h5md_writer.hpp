#pragma once
// Writes a run as it goes into one HDF5 file in the H5MD 1.1 layout (io/h5md_layout.hpp):
// particle positions, observables and grid fields are time-dependent elements whose chunked,
// extendible datasets grow by one frame per call; the parameters are written once; a checkpoint
// marks the last frame as the point a restart continues from.
#include <H5Cpp.h>

#include <Eigen/Dense>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "io/cell_grid.hpp"
#include "io/h5md_layout.hpp"
#include "io/hdf5_support.hpp"
#include "io/parameter_set.hpp"

namespace cpm {

class H5mdWriter {
 public:
  // Creates `path` for `particles` particles in `dim` dimensions. An existing file is a
  // InputError unless `overwrite`.
  H5mdWriter(const std::string& path, const H5mdHeader& header, const ParameterSet& parameters,
             Eigen::Index particles, int dim, bool overwrite = false);
  ~H5mdWriter();
  H5mdWriter(const H5mdWriter&) = delete;
  H5mdWriter& operator=(const H5mdWriter&) = delete;

  // particles/<group>/position: one frame of the (N, d) positions.
  void write_positions(std::int64_t step, double time, const Eigen::MatrixXd& positions);
  // observables/<name>: one value per name; a name seen for the first time starts its element.
  void write_observables(std::int64_t step, double time, const std::vector<std::string>& names,
                         const std::vector<double>& values);

  // fields: the grid and its mask (1 = cell inside the domain), once, before any field frame.
  void set_grid(const CellGrid& grid, const std::vector<std::uint8_t>& mask);
  // fields/<name>: one frame of cell values, flat and x fastest (io/cell_grid.hpp).
  void write_field(const std::string& name, std::int64_t step, double time,
                   const Eigen::Ref<const Eigen::VectorXd>& values);

  // Marks the last position frame (and the last `density` field frame, if any) as the restart
  // point; their step must equal state.step. Flushes the file, so what a restart reads is on disk.
  void write_checkpoint(const RestartState& state);
  void flush();

  const std::string& path() const { return path_; }
  // At most the file space the next frame allocates: positions, the observables `observables`
  // and the fields `fields` (new elements included), with room for the metadata they change.
  std::uintmax_t bytes_for_next_frame(const std::vector<std::string>& observables,
                                      const std::vector<std::string>& fields) const;

 private:
  // A time-dependent H5MD element: step[frame], time[frame], value[frame][...].
  struct Element {
    hdf5::FrameDataset step, time, value;
    std::int64_t last_step = 0;
  };
  Element make_element(const H5::Group& parent, const std::string& name,
                       const std::vector<hsize_t>& frame_shape, const std::string& unit);
  void append_clock(Element& element, std::int64_t step, double time, const std::string& what);

  std::string path_;
  H5mdHeader header_;
  Eigen::Index particles_;
  int dim_;
  H5::H5File file_;
  std::unique_ptr<Element> position_;
  std::map<std::string, Element> observables_, fields_;
  std::optional<CellGrid> grid_;
  Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> row_major_;
  std::vector<double> field_buffer_;
};

}  // namespace cpm
