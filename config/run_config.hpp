#pragma once
// The configuration of `cpm run`, parsed once from TOML into plain structs. Solvers never see
// TOML; they receive these values.
#include <Eigen/Dense>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "config/model_sections.hpp"
#include "config/toml_reader.hpp"
#include "solvers/mckean_vlasov.hpp"

namespace cpm {

struct OutputConfig {
  std::string directory = "out";
};

// [grid.initial]: the grid solver's initial density ρ_0 (normalised to unit mass on the grid).
enum class GridInitialKind { law, file, compact_power, sech2 };  // law: the [initial] law
const std::vector<std::string>& names(GridInitialKind);

struct GridInitialConfig {
  GridInitialKind kind = GridInitialKind::law;
  std::string file;        // file: M cell averages, axis 0 fastest, '#' starts a comment
  Eigen::VectorXd centre;  // compact_power, sech2
  double radius = 1.0;     // compact_power: (R² − |x − centre|²)_+^exponent
  double exponent = 0.5;
  double width = 1.0;  // sech2: Π_a sech²((x_a − centre_a)/width)
};

// [grid]: the McKean–Vlasov grid solver run side by side with the particles by `cpm run`.
struct GridConfig {
  Eigen::VectorXi cells;         // cells per axis
  Eigen::VectorXd lower, upper;  // grid box; D's bounding box when empty (required for whole_space)
  double cfl = 0.5;              // fraction of the stability bound per step, in (0, 1]
  double step = 0.0;             // fixed step, checked against the bound; 0: from the bound
  Reconstruction scheme = Reconstruction::limited_linear;  // named "second_order", "first_order"
  GridInitialConfig initial;
  int directions = 16;         // sliced Wasserstein directions
  double mmd_bandwidth = 0.0;  // Gaussian MMD σ; 0: a twentieth of the smallest box side
};

struct RunConfig {
  std::string source;  // file name, or "embedded default"
  Eigen::Index n = 100;
  std::uint64_t seed = 1;
  Domain domain = Domain::whole_space(1);
  PotentialConfig potential;
  InteractionConfig interaction;
  InitialLaw initial;
  DynamicsConfig dynamics;
  OutputConfig output;
  std::optional<GridConfig> grid;  // present when the config has a [grid] section
};

RunConfig parse_run_config(const std::string& toml_text, const std::string& source);

// For studies over many particle numbers (`cpm converge`, `cpm ldp`): the model sections of a run
// configuration without particles.n, plus the study's own section, read by `read_study` from the
// root table before unknown keys are rejected.
RunConfig parse_study_config(const std::string& toml_text, const std::string& source,
                             const std::function<void(TomlReader& root)>& read_study);
RunConfig load_run_config(const std::string& path);

// A lower bound on the memory a run holds at once, in bytes: parse_run_config refuses a run whose
// bound exceeds the machine's physical memory (InputError naming particles.n or grid.cells).
struct RunMemory {
  double particles = 0.0, grid = 0.0;
  double cells = 0.0;  // the grid's cells
};
RunMemory estimated_run_memory(const RunConfig& config);

}  // namespace cpm
