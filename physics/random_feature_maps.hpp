#pragma once
// Random-feature maps φ(x; ω) (docs/model.md §2). With ω drawn from N(0, I) they are the usual
// random features; with ω learned they are the Coulomb-particle features.
//
// Two layers, tested against each other:
//  * small value types, one per map, evaluating φ and ∂φ/∂ω at one data point x (the
//    reference, written for clarity);
//  * FeatureMap, the batched fast path over n data points and N particles:
//        Z = X Ωᵀ                      pre-activations                      (n, N)
//        Φ = f(Z, ‖x‖²)                the map, elementwise or row-wise     (n, N)
//    and its backward pass, which turns dΦ = ∂L/∂Φ into dΩ = ∂L/∂Ω (and optionally dX).
//    All matrix work is two matrix products; the map itself is Eigen array code.
//
// Shapes: data X (n, d), particles Ω (N, d), features Φ (n, N), Φ(i, k) = φ(x_i; ω_k).
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace cpm {

// φ(x; ω) = √2 cos(ωᵀx + b): random Fourier features of the Gaussian kernel; b is a fixed
// phase of the particle, drawn once uniformly on [0, 2π).
struct RffFeature {
  double phase = 0.0;
  double activation(double z) const { return std::sqrt(2.0) * std::cos(z + phase); }
  double activation_derivative(double z) const { return -std::sqrt(2.0) * std::sin(z + phase); }
  double value(const Eigen::VectorXd& x, const Eigen::VectorXd& w) const {
    return activation(w.dot(x));
  }
  // ∂φ/∂ω = −√2 sin(ωᵀx + b) x
  Eigen::VectorXd gradient(const Eigen::VectorXd& x, const Eigen::VectorXd& w) const {
    return activation_derivative(w.dot(x)) * x;
  }
};

// φ(x; ω) = (cos ωᵀx, sin ωᵀx): the phase-free pair of random Fourier features. Two features
// per particle; K = (1/N) Σ_k cos(ω_kᵀ(x − y)), the same Gaussian kernel as RffFeature for
// ω ~ N(0, I), shift-invariant, and every particle feels the full alignment force (no phase b
// with cos b ≈ 0 to switch it off).
struct RffPairFeature {
  Eigen::Vector2d value(const Eigen::VectorXd& x, const Eigen::VectorXd& w) const {
    const double z = w.dot(x);
    return {std::cos(z), std::sin(z)};
  }
  // Row 0: ∂cos/∂ω = −sin(ωᵀx) x; row 1: ∂sin/∂ω = cos(ωᵀx) x.
  Eigen::MatrixXd gradient(const Eigen::VectorXd& x, const Eigen::VectorXd& w) const {
    const double z = w.dot(x);
    Eigen::MatrixXd g(2, x.size());
    g.row(0) = -std::sin(z) * x.transpose();
    g.row(1) = std::cos(z) * x.transpose();
    return g;
  }
};

// φ(x; ω) = exp(ωᵀx − ‖x‖²/2): positive random features, E_ω φ(x; ω) φ(y; ω) = exp(xᵀy).
struct FavorFeature {
  double value(const Eigen::VectorXd& x, const Eigen::VectorXd& w) const {
    return std::exp(w.dot(x) - 0.5 * x.squaredNorm());
  }
  // ∂φ/∂ω = φ x
  Eigen::VectorXd gradient(const Eigen::VectorXd& x, const Eigen::VectorXd& w) const {
    return value(x, w) * x;
  }
};

// φ(x; ω) = softplus(ωᵀx) = log(1 + exp(ωᵀx)): positive, growing linearly.
struct SoftplusFeature {
  static double activation(double z) {
    return std::max(z, 0.0) + std::log1p(std::exp(-std::abs(z)));
  }
  static double activation_derivative(double z) { return 1.0 / (1.0 + std::exp(-z)); }  // σ(z)
  double value(const Eigen::VectorXd& x, const Eigen::VectorXd& w) const {
    return activation(w.dot(x));
  }
  // ∂φ/∂ω = σ(ωᵀx) x
  Eigen::VectorXd gradient(const Eigen::VectorXd& x, const Eigen::VectorXd& w) const {
    return activation_derivative(w.dot(x)) * x;
  }
};

// φ_k(x; Ω) = exp(ω_kᵀx) / Σ_l exp(ω_lᵀx): positive and normalised across the N features, so
// feature k depends on every particle.
struct SoftmaxFeature {
  double value(const Eigen::VectorXd& x, const Eigen::MatrixXd& particles, Eigen::Index k) const;
  // ∂φ_k/∂ω_l = φ_k (δ_kl − φ_l) x, as an (N, d) matrix whose row l is ∂φ_k/∂ω_l.
  Eigen::MatrixXd gradient(const Eigen::VectorXd& x, const Eigen::MatrixXd& particles,
                           Eigen::Index k) const;
};

// rff .. softmaxfeat are the maps φ(x; ω) of FeatureMap below; elu, dpfp, hedgehog, taylor and
// rebased exist only as linear-attention features (transformer/attention_feature_maps.hpp):
// FeatureMap refuses them.
enum class FeatureMapKind {
  rff,
  favor,
  porf_softplus,
  softmaxfeat,
  elu,
  dpfp,
  hedgehog,
  taylor,
  rebased
};

// The configuration names of FeatureMap's maps: "rff", "favor", "porf-softplus", "softmaxfeat".
const std::vector<std::string>& feature_map_names();
// The names of the maps linear attention accepts: "favor", "porf-softplus", "softmaxfeat", "elu",
// "dpfp", "hedgehog", "taylor", "rebased".
const std::vector<std::string>& attention_feature_map_names();
// Names of every kind, those of both lists above.
std::string feature_map_name(FeatureMapKind kind);
// Throws std::invalid_argument listing the known names.
FeatureMapKind feature_map_kind(const std::string& name);

// The batched map over data and particles. A value type: the kind, and for rff the N phases.
// The rff kind has a second form, the cos/sin pairs of RffPairFeature (FeatureMap::rff_pairs(),
// configuration name "rff-pairs"): two feature columns per particle, Φ = [cos Z, sin Z]
// (n, 2N), column k the cosine and column N + k the sine of particle k; no phases.
class FeatureMap {
 public:
  // phases: one per particle, used by rff only (may be empty for the other maps). Throws
  // std::invalid_argument for elu, dpfp, hedgehog, taylor and rebased.
  FeatureMap(FeatureMapKind kind, Eigen::VectorXd phases = {});
  // The phase-free cos/sin pairs.
  static FeatureMap rff_pairs();
  // A map by configuration name: feature_map_names() or "rff-pairs"; rff phases drawn as in
  // with_random_phases. Throws std::invalid_argument for an unknown name.
  static FeatureMap by_name(const std::string& name, Eigen::Index n, std::uint64_t seed,
                            std::uint64_t replica = 0);
  // The map for N particles; rff phases drawn uniformly on [0, 2π) from the stream keyed by
  // (seed, replica, particle k).
  static FeatureMap with_random_phases(FeatureMapKind kind, Eigen::Index n, std::uint64_t seed,
                                       std::uint64_t replica = 0);

  FeatureMapKind kind() const { return kind_; }
  const Eigen::VectorXd& phases() const { return phases_; }
  bool pairs() const { return pairs_; }
  // Feature columns per particle: 2 for the cos/sin pairs, 1 otherwise.
  Eigen::Index features_per_particle() const { return pairs_ ? 2 : 1; }
  // True when feature k depends on particle k only (all maps but softmaxfeat).
  bool separable() const { return kind_ != FeatureMapKind::softmaxfeat; }

  // Φ (n, N) from X (n, d) and Ω (N, d) — (n, 2N) for the cos/sin pairs; Z (n, N) receives
  // X Ωᵀ for the backward pass.
  // Outputs are resized only when their shape differs. Φ is exact unless row_shift is non-null:
  // then favor rows are max-shifted, Φ(i, k) = φ(x_i; ω_k) / exp(row_shift[i]) with
  // row_shift[i] = max_k (ω_kᵀx_i − ‖x_i‖²/2), a per-row factor that cancels in normalised
  // attention (backward treats it as a constant); for the other maps row_shift receives zeros.
  // softmaxfeat always subtracts the row maximum internally, which leaves it exact.
  void forward(const Eigen::MatrixXd& x, const Eigen::MatrixXd& particles, Eigen::MatrixXd& z,
               Eigen::MatrixXd& phi, Eigen::VectorXd* row_shift = nullptr) const;

  // Given dΦ = ∂L/∂Φ (n, N) and the forward's Z and Φ: d_particles (N, d) = ∂L/∂Ω and, if
  // non-null, d_x (n, d) = ∂L/∂X. `work` (n, N) is a caller-owned buffer for dL/dZ.
  void backward(const Eigen::MatrixXd& x, const Eigen::MatrixXd& particles,
                const Eigen::MatrixXd& z, const Eigen::MatrixXd& phi, const Eigen::MatrixXd& d_phi,
                Eigen::MatrixXd& work, Eigen::MatrixXd& d_particles,
                Eigen::MatrixXd* d_x = nullptr) const;

  // Convenience for tests and small problems: Φ for X and Ω.
  Eigen::MatrixXd features(const Eigen::MatrixXd& x, const Eigen::MatrixXd& particles) const;

  std::string describe() const;

 private:
  FeatureMapKind kind_;
  Eigen::VectorXd phases_;
  bool pairs_ = false;
};

// The names the kernel-learning configuration accepts: feature_map_names() and "rff-pairs".
const std::vector<std::string>& kernel_feature_map_names();

}  // namespace cpm
