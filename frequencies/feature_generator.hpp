#pragma once
// Generators of random-feature frequencies ω_1..ω_N for the Gaussian kernel
// k(x, y) = exp(−σ²|x − y|²/2), whose spectral law is p = N(0, σ² I_d) (docs/features.md), and
// for the Laplace kernel exp(−σ|x − y|), whose p is the multivariate Cauchy law of σ Z/|g|,
// Z ~ N(0, I_d), g ~ N(0, 1) (docs/features.md §6):
//   iid         independent draws from p;
//   orthogonal  blocks of d exactly orthogonal rows with χ_d norms (core/feature_initialisation);
//   sobol       randomised Sobol' points (digital shift) mapped by σ Φ⁻¹ coordinate-wise;
//   halton      randomised Halton points (Cranley–Patterson rotation) mapped the same way;
//   coulomb     the compensated repulsive gas (frequencies/compensated_confinement.hpp),
//               started from i.i.d. draws: at β = ∞ its minimiser (L-BFGS), at finite β the
//               end of a Langevin run; for the Laplace kernel −1 < s < d (the Cauchy law has no
//               mean).
// Every method's features depend on (seed, replica) only, never on the thread count.
#include <Eigen/Dense>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "frequencies/spectral_law.hpp"
#include "physics/riesz_kernel.hpp"

namespace cpm {

enum class FeatureMethod { iid, orthogonal, sobol, halton, coulomb };

std::string feature_method_name(FeatureMethod method);
// The method of a configuration name; empty for an unknown name.
std::optional<FeatureMethod> feature_method_from_name(const std::string& name);

// The compensated gas of the `coulomb` method.
struct RepulsionSettings {
  InteractionKernel kernel = InteractionKernel::linear();  // −|z|: the energy distance
  double lambda = 1.0;  // repulsion strength λ (finite β; at β = ∞ it only scales the energy)
  double beta = std::numeric_limits<double>::infinity();  // inverse temperature β
  // β = ∞: stop when the RMS drift falls below tolerance · (the RMS drift of W ∗ p at the start)
  double tolerance = 1e-6;
  // β = ∞: at most this many L-BFGS iterations; the kernel error stops improving long before the
  // drift reaches the tolerance (bench/RESULTS.md, "Random-feature frequencies").
  int max_iterations = 100;
  // finite β: `steps` Langevin steps of size `step` in the time s = t/β, in units where p has
  // σ = 1 (the anchor relaxes in s ~ 1); above βλ = 1, βλ times as many steps of step/(βλ)
  // (docs/features.md §5), and d + 1 times as many for the Laplace kernel's stiffer anchor
  int steps = 2000;
  double step = 0.01;
};

struct FeatureRequest {
  FeatureMethod method = FeatureMethod::iid;
  Eigen::Index n = 64;  // N
  int dim = 2;          // d
  double sigma = 1.0;   // p = N(0, σ² I) (gaussian) or σ Z/|g| (laplace)
  SpectralLaw law = SpectralLaw::gaussian;
  std::uint64_t seed = 1;
  std::uint64_t replica = 0;
  RepulsionSettings repulsion;  // coulomb only
};

// What the gas did (zero for the other methods).
struct FeatureDiagnostics {
  int iterations = 0;          // minimiser iterations or Langevin steps
  bool converged = true;       // β = ∞: whether the tolerance was met
  double gradient_norm = 0.0;  // β = ∞: the final RMS drift
};

// The (N, d) frequencies. Throws std::invalid_argument for an impossible request, and
// StopRequested (empty hint) when a stop signal arrives while the coulomb gas runs
// (core/stop_request.hpp).
Eigen::MatrixXd generate_features(const FeatureRequest& request,
                                  FeatureDiagnostics* diagnostics = nullptr);

// The particles' starting law of the attention models (`particle_init`): "gaussian" (iid),
// "orthogonal", "sobol", "halton" or "coulomb" (s = −1, β = ∞), each for p = N(0, I).
Eigen::MatrixXd initial_features(const std::string& law, Eigen::Index n, int d, std::uint64_t seed,
                                 std::uint64_t replica);

}  // namespace cpm
