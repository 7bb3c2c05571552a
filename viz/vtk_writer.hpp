#pragma once
// A run as a ParaView time series, written with VTK's XML writers: per output time one .vtp
// (particles as points with vertex cells) and, when the run has a grid, one .vti (cell data on
// the grid), both listed at the same time value in one .pvd collection (part 0 particles,
// part 1 grid). 1D and 2D points and vectors are padded to 3 components with zeros.
#include <Eigen/Dense>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "io/cell_grid.hpp"

namespace cpm {

// A named array with one row per particle (or per cell, x fastest): a scalar (one column) or a
// spatial vector (d columns, padded to 3 components).
struct NamedArray {
  std::string name;
  Eigen::Ref<const Eigen::MatrixXd> values;
  bool spatial = false;

  static NamedArray scalar(std::string name, const Eigen::Ref<const Eigen::MatrixXd>& values) {
    return {std::move(name), values, false};
  }
  static NamedArray vector(std::string name, const Eigen::Ref<const Eigen::MatrixXd>& values) {
    return {std::move(name), values, true};
  }
};

class VtkSeriesWriter {
 public:
  // The collection goes to <directory>/<stem>.pvd, the frames into the sub-folder
  // <directory>/<stem>_frames/ (<stem>_particles_<k>.vtp, <stem>_grid_<k>.vti), so that the
  // run's tables and figures are what a user sees first; frame files of an earlier series of the
  // same stem (in the sub-folder, or beside the .pvd as older versions wrote them) are removed.
  VtkSeriesWriter(std::string directory, std::string stem = "run");

  // The grid and its mask (1 = cell inside the domain), once, before the first frame with fields.
  void set_grid(const CellGrid& grid, std::vector<std::uint8_t> mask);

  // One output time: the (N, d) positions with point data "id" and `particle_arrays`, and, if
  // `grid_fields` is not empty, the grid with cell data "mask" and `grid_fields`. The .pvd is
  // rewritten afterwards, so an unfinished run opens in ParaView too. Times must increase.
  void write_frame(double time, const Eigen::MatrixXd& positions,
                   const std::vector<NamedArray>& particle_arrays,
                   const std::vector<NamedArray>& grid_fields = {});

  std::string collection_path() const { return directory_ + "/" + stem_ + ".pvd"; }
  // The folder of the frame files, relative to the directory: "<stem>_frames".
  std::string frames_folder() const { return stem_ + "_frames"; }

 private:
  struct Entry {
    double time;
    int part;
    std::string file;
  };
  void write_collection() const;

  std::string directory_, stem_;
  std::optional<CellGrid> grid_;
  std::vector<std::uint8_t> mask_;
  std::vector<Entry> entries_;
  int frames_ = 0;
};

}  // namespace cpm
