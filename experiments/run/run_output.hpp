#pragma once
// The output files of `cpm run`, written at every output time: run.h5 (H5MD: positions,
// observables, grid fields, the restart checkpoint) and the ParaView series run.pvd
// (particles as .vtp with id, force and local density; the grid as .vti with ρ, W∗ρ, mask).
#include <Eigen/Dense>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/run_config.hpp"
#include "core/grid.hpp"
#include "io/cell_grid.hpp"
#include "io/h5md_writer.hpp"
#include "io/parameter_set.hpp"
#include "io/toml_writer.hpp"
#include "solvers/particle_integrator.hpp"
#include "viz/vtk_writer.hpp"

namespace cpm {

// Every model and run parameter of the configuration, under its TOML key.
ParameterSet run_parameters(const RunConfig& config);

// The configuration as the run resolved it, as TOML: every key with the value the run used
// (defaults filled in), so that `cpm run` on this text repeats the run bit for bit. Keys whose
// value is derived when absent (grid.lower/upper, grid.step, grid.mmd_bandwidth) stay absent and
// a comment says so. `note` adds comment lines at the top (e.g. the checkpoint a run continued).
std::string resolved_run_config(const RunConfig& config, const std::string& note = "");

// Before a restart builds its solvers: imports the FFTW wisdom saved with the checkpoint of
// `restart` (if any), so that measured FFT plans are those of the run it continues.
void restore_fft_plans(const std::string& restart);

// The build that wrote a run (io/build_info.hpp), as "key = value" lines for run_info.txt.
std::string provenance_lines();
CellGrid cell_grid_of(const Grid& grid);

class RunOutput {
 public:
  // Files go to config.output.directory (already prepared); `grid` may be null.
  RunOutput(const RunConfig& config, const Grid* grid, bool overwrite);

  // One output time: positions and the drift F (the force is −F) of the particles, the run's
  // observables, with a grid the density ρ and the potential W∗ρ as cell values, and the solvers'
  // state; the frame becomes the checkpoint a restart continues from. Without room for the frame
  // (io/disk_room.hpp) it throws std::runtime_error naming run.h5, every earlier frame intact.
  void write_frame(std::int64_t step, double time, const Eigen::MatrixXd& positions,
                   const Eigen::MatrixXd& drift, const std::vector<std::string>& names,
                   const std::vector<double>& values, const std::vector<double>* density,
                   const std::vector<double>* potential, const IntegratorState& solver_state);

 private:
  const Grid* grid_;
  std::uint64_t seed_;
  void write_frame_files(std::int64_t step, double time, const Eigen::MatrixXd& positions,
                         const Eigen::MatrixXd& drift, const std::vector<std::string>& names,
                         const std::vector<double>& values, const std::vector<double>* density,
                         const std::vector<double>* potential, const IntegratorState& solver_state);

  H5mdWriter h5_;
  VtkSeriesWriter vtk_;
  std::string source_, vtk_frames_folder_;
  std::string kept_frames_ = "no frame was written";
  Eigen::MatrixXd force_;
  Eigen::VectorXd local_density_;
};

}  // namespace cpm
