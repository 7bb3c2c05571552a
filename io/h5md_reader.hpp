#pragma once
// Reads back what H5mdWriter wrote (io/h5md_layout.hpp). Files are opened read-only and never
// modified. Anything missing, inconsistent or damaged (bad checksum, truncated file) is a
// InputError whose one-line message names the file and the object.
#include <Eigen/Dense>
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "io/cell_grid.hpp"
#include "io/h5md_layout.hpp"
#include "io/parameter_set.hpp"

namespace cpm {

struct H5mdClock {
  std::vector<std::int64_t> step;
  std::vector<double> time;
  bool operator==(const H5mdClock&) const = default;
};

struct H5mdRun {
  std::array<std::int64_t, 2> version{};
  H5mdHeader header;
  ParameterSet parameters;
  std::string particle_group;
  int dim = 0;
  std::vector<std::string> boundary;
  H5mdClock position_clock;
  std::vector<Eigen::MatrixXd> positions;  // one (N, d) matrix per frame
  std::map<std::string, std::pair<H5mdClock, std::vector<double>>> observables;
  std::optional<CellGrid> grid;
  std::vector<std::uint8_t> mask;  // x fastest, as given to the writer
  std::map<std::string, std::pair<H5mdClock, std::vector<Eigen::VectorXd>>> fields;  // x fastest
  std::optional<RestartState> restart;
};

// Everything in the file.
H5mdRun read_h5md(const std::string& path);

// What `--restart` continues from: the checkpoint's state with the positions and grid density of
// the frame it marks, after checking that they are present, consistent and finite.
struct Checkpoint {
  RestartState state;
  ParameterSet parameters;
  Eigen::MatrixXd positions;  // (N, d)
  std::optional<CellGrid> grid;
  Eigen::VectorXd density;  // x fastest; empty when the run has no grid
};
Checkpoint read_checkpoint(const std::string& path);

// The FFTW wisdom saved with the checkpoint of `path`, or "" when there is none or the file
// cannot be read (read_checkpoint reports what is wrong with it).
std::string read_checkpoint_fft_wisdom(const std::string& path);

}  // namespace cpm
