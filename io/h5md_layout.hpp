#pragma once
// The H5MD 1.1 layout of a cpm run file (docs/guide/output.md), shared by writer and reader.
//
//   h5md                 +-- version [1, 1];  author (+-- name);  creator (+-- name, version,
//                        git_describe, compiler, instruction_set, libraries)
//   particles/<group>    box (+-- dimension, boundary = "none" per axis);
//                        position (step, time, value[frame][N][d])
//   observables/<name>   step, time, value[frame]
//   fields               +-- dimension, cells[d], origin[d], spacing[d];  mask[nx]([ny]([nz])),
//                        <name> (step, time, value[frame][nx]([ny]([nz])))   (cpm's extension)
//   parameters           one subgroup per dotted-key prefix, one attribute per key
//   checkpoint           +-- step, time, seed, replica, position_frame, (density_frame),
//                        (fft_wisdom);
//                        solver_state (+-- one double per name)             (cpm's extension)
#include <cstdint>
#include <map>
#include <string>

#include "cpm_version.hpp"

namespace cpm {

inline constexpr const char* kH5mdParticleGroup = "trajectory";  // the name MDAnalysis expects
inline constexpr const char* kDensityField = "density";          // the field a restart reads

struct H5mdHeader {
  std::string author = "cpm";
  std::string creator = "cpm";
  std::string creator_version = CPM_VERSION;
  // Further string attributes of h5md/creator: the build's provenance (git_describe, compiler,
  // instruction_set, libraries), which H5MD readers ignore.
  std::map<std::string, std::string> creator_details;
  // Optional H5MD unit strings for positions and times; empty means the model's dimensionless
  // units and no `unit` attribute.
  std::string length_unit;
  std::string time_unit;
  bool operator==(const H5mdHeader&) const = default;
};

// What a restart needs besides the positions and the grid density of the frame it refers to.
struct RestartState {
  std::int64_t step = 0;  // steps taken: the random streams' position (core/random_stream.hpp)
  double time = 0.0;      // the clock
  std::uint64_t seed = 0;
  std::uint64_t replica = 0;
  std::map<std::string, double> solver_state;  // integrator state by name (e.g. an adaptive step)
  std::string
      fft_wisdom;  // FFTW's plans at the checkpoint (solvers/fft_convolution.hpp); may be ""
  bool operator==(const RestartState&) const = default;
};

}  // namespace cpm
