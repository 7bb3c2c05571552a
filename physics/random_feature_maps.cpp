#include "physics/random_feature_maps.hpp"

#include <numbers>
#include <stdexcept>

#include "core/random_stream.hpp"

// GCC 12 reports a false "used uninitialized" inside its AVX-512 headers when xsimd inlines them.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <xsimd/xsimd.hpp>
#pragma GCC diagnostic pop

namespace cpm {

namespace {

// Parallelise elementwise loops only when the work outweighs the cost of a parallel region.
constexpr Eigen::Index kParallelEntries = Eigen::Index{1} << 17;

// out[i] = f(in[i]) over a contiguous column, f applied to xsimd batches (its vectorised cos,
// sin, exp, log1p, expm1); the tail runs through one-lane batches, so every entry gets the same
// function.
template <class F>
void simd_map(const double* in, double* out, Eigen::Index n, const F& f) {
  using Batch = xsimd::batch<double>;
  constexpr Eigen::Index width = Batch::size;
  Eigen::Index i = 0;
  for (; i + width <= n; i += width) f(Batch::load_unaligned(in + i)).store_unaligned(out + i);
  for (; i < n; ++i) out[i] = f(Batch(in[i])).get(0);
}

}  // namespace

double SoftmaxFeature::value(const Eigen::VectorXd& x, const Eigen::MatrixXd& particles,
                             Eigen::Index k) const {
  const Eigen::VectorXd z = particles * x;
  const Eigen::ArrayXd e = (z.array() - z.maxCoeff()).exp();
  return e[k] / e.sum();
}

Eigen::MatrixXd SoftmaxFeature::gradient(const Eigen::VectorXd& x, const Eigen::MatrixXd& particles,
                                         Eigen::Index k) const {
  const Eigen::VectorXd z = particles * x;
  Eigen::ArrayXd p = (z.array() - z.maxCoeff()).exp();
  p /= p.sum();
  Eigen::MatrixXd g(particles.rows(), particles.cols());
  for (Eigen::Index l = 0; l < particles.rows(); ++l)
    g.row(l) = (p[k] * ((l == k ? 1.0 : 0.0) - p[l])) * x.transpose();
  return g;
}

namespace {

// Every kind's name, in FeatureMapKind order.
const std::vector<std::string>& all_feature_map_names() {
  static const std::vector<std::string> names = {"rff",         "favor",  "porf-softplus",
                                                 "softmaxfeat", "elu",    "dpfp",
                                                 "hedgehog",    "taylor", "rebased"};
  return names;
}

// The error for the kinds FeatureMap has no form of.
std::invalid_argument attention_only(FeatureMapKind kind) {
  const std::string only =
      "a linear-attention feature map only (transformer/attention_feature_maps.hpp)";
  if (kind == FeatureMapKind::hedgehog || kind == FeatureMapKind::taylor ||
      kind == FeatureMapKind::rebased)
    return std::invalid_argument(feature_map_name(kind) + " is " + only +
                                 ": FeatureMap has no form of it");
  return std::invalid_argument(feature_map_name(kind) + " has no particles: it is " + only +
                               ", not a map φ(x; ω) of FeatureMap");
}

}  // namespace

const std::vector<std::string>& feature_map_names() {
  static const std::vector<std::string> names(all_feature_map_names().begin(),
                                              all_feature_map_names().begin() + 4);
  return names;
}

const std::vector<std::string>& attention_feature_map_names() {
  static const std::vector<std::string> names(all_feature_map_names().begin() + 1,
                                              all_feature_map_names().end());
  return names;
}

std::string feature_map_name(FeatureMapKind kind) {
  return all_feature_map_names()[static_cast<std::size_t>(kind)];
}

FeatureMapKind feature_map_kind(const std::string& name) {
  const auto& names = all_feature_map_names();
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return static_cast<FeatureMapKind>(i);
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown feature map '" + name + "' (expected one of: " + list + ")");
}

FeatureMap::FeatureMap(FeatureMapKind kind, Eigen::VectorXd phases)
    : kind_(kind), phases_(std::move(phases)) {
  if (kind == FeatureMapKind::elu || kind == FeatureMapKind::dpfp ||
      kind == FeatureMapKind::hedgehog || kind == FeatureMapKind::taylor ||
      kind == FeatureMapKind::rebased)
    throw attention_only(kind);
}

FeatureMap FeatureMap::rff_pairs() {
  FeatureMap map(FeatureMapKind::rff);
  map.pairs_ = true;
  return map;
}

const std::vector<std::string>& kernel_feature_map_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v = feature_map_names();
    v.push_back("rff-pairs");
    return v;
  }();
  return names;
}

FeatureMap FeatureMap::by_name(const std::string& name, Eigen::Index n, std::uint64_t seed,
                               std::uint64_t replica) {
  if (name == "rff-pairs") return rff_pairs();
  return with_random_phases(feature_map_kind(name), n, seed, replica);
}

FeatureMap FeatureMap::with_random_phases(FeatureMapKind kind, Eigen::Index n, std::uint64_t seed,
                                          std::uint64_t replica) {
  Eigen::VectorXd phases;
  if (kind == FeatureMapKind::rff) {
    phases.resize(n);
    for (Eigen::Index k = 0; k < n; ++k) {
      RandomStream s(seed, RandomPurpose::initial_positions, replica, static_cast<std::uint64_t>(k),
                     /*step=*/1);  // step 1: independent of the particle's initial position draws
      phases[k] = 2.0 * std::numbers::pi * s.uniform();
    }
  }
  return FeatureMap(kind, std::move(phases));
}

namespace {
template <class M>
void resize_if_needed(M& m, Eigen::Index rows, Eigen::Index cols) {
  if (m.rows() != rows || m.cols() != cols) m.resize(rows, cols);
}
}  // namespace

void FeatureMap::forward(const Eigen::MatrixXd& x, const Eigen::MatrixXd& particles,
                         Eigen::MatrixXd& z, Eigen::MatrixXd& phi,
                         Eigen::VectorXd* row_shift) const {
  const Eigen::Index n = x.rows(), m = particles.rows();
  if (x.cols() != particles.cols())
    throw std::invalid_argument("feature map: data and particles differ in dimension");
  if (kind_ == FeatureMapKind::rff && !pairs_ && phases_.size() != m)
    throw std::invalid_argument("rff feature map: needs one phase per particle");
  resize_if_needed(z, n, m);
  resize_if_needed(phi, n, pairs_ ? 2 * m : m);
  z.noalias() = x * particles.transpose();
  if (pairs_) {  // Φ = [cos Z, sin Z]
    if (row_shift) {
      if (row_shift->size() != n) row_shift->resize(n);
      row_shift->setZero();
    }
#pragma omp parallel for schedule(static) if (n * m >= kParallelEntries)
    for (Eigen::Index k = 0; k < m; ++k) {
      simd_map(z.col(k).data(), phi.col(k).data(), n, [](const auto& v) { return xsimd::cos(v); });
      simd_map(z.col(k).data(), phi.col(m + k).data(), n,
               [](const auto& v) { return xsimd::sin(v); });
    }
    return;
  }
  if (row_shift) {
    if (row_shift->size() != n) row_shift->resize(n);
    row_shift->setZero();
  }
  switch (kind_) {
    case FeatureMapKind::rff:
#pragma omp parallel for schedule(static) if (n * m >= kParallelEntries)
      for (Eigen::Index k = 0; k < m; ++k)
        simd_map(z.col(k).data(), phi.col(k).data(), n, [b = phases_[k]](const auto& v) {
          return std::numbers::sqrt2 * xsimd::cos(v + b);
        });
      break;
    case FeatureMapKind::favor: {
      // exponent ω_kᵀx_i − ‖x_i‖²/2, max-shifted per row on request.
      Eigen::VectorXd offset = 0.5 * x.rowwise().squaredNorm();
      phi = z;
      phi.colwise() -= offset;
      if (row_shift) {
        *row_shift = phi.rowwise().maxCoeff();
        phi.colwise() -= *row_shift;
      }
#pragma omp parallel for schedule(static) if (n * m >= kParallelEntries)
      for (Eigen::Index k = 0; k < m; ++k) phi.col(k) = phi.col(k).array().exp();
      break;
    }
    case FeatureMapKind::porf_softplus:
#pragma omp parallel for schedule(static) if (n * m >= kParallelEntries)
      for (Eigen::Index k = 0; k < m; ++k)
        // softplus(z) = max(z, 0) + log(1 + exp(−|z|)), without overflow
        simd_map(z.col(k).data(), phi.col(k).data(), n, [](const auto& v) {
          return xsimd::max(v, decltype(v)(0.0)) + xsimd::log1p(xsimd::exp(-xsimd::abs(v)));
        });
      break;
    case FeatureMapKind::softmaxfeat: {
      // Softmax over the N features of each row, shifted by the row maximum (exact).
      const Eigen::VectorXd row_max = z.rowwise().maxCoeff();
      phi = z;
      phi.colwise() -= row_max;
      phi = phi.array().exp();
      const Eigen::VectorXd row_sum = phi.rowwise().sum();
      phi.array().colwise() /= row_sum.array();
      break;
    }
    case FeatureMapKind::elu:
    case FeatureMapKind::dpfp:
    case FeatureMapKind::hedgehog:
    case FeatureMapKind::taylor:
    case FeatureMapKind::rebased:
      throw attention_only(kind_);
  }
}

void FeatureMap::backward(const Eigen::MatrixXd& x, const Eigen::MatrixXd& particles,
                          const Eigen::MatrixXd& z, const Eigen::MatrixXd& phi,
                          const Eigen::MatrixXd& d_phi, Eigen::MatrixXd& work,
                          Eigen::MatrixXd& d_particles, Eigen::MatrixXd* d_x) const {
  const Eigen::Index n = x.rows(), m = particles.rows();
  resize_if_needed(work, n, m);
  // work = dL/dZ, differentiating Φ = f(Z) of the forward pass.
  if (pairs_) {
    // Φ = [cos Z, sin Z]  →  dZ = −dΦ_cos ⊙ sin Z + dΦ_sin ⊙ cos Z = −dΦ_cos ⊙ Φ_sin + dΦ_sin ⊙
    // Φ_cos
    work = d_phi.rightCols(m).cwiseProduct(phi.leftCols(m)) -
           d_phi.leftCols(m).cwiseProduct(phi.rightCols(m));
  } else {
    switch (kind_) {
      case FeatureMapKind::rff:
        // Φ = √2 cos(Z + b)  →  dZ = dΦ ⊙ (−√2 sin(Z + b))
#pragma omp parallel for schedule(static) if (n * m >= kParallelEntries)
        for (Eigen::Index k = 0; k < m; ++k) {
          simd_map(z.col(k).data(), work.col(k).data(), n, [b = phases_[k]](const auto& v) {
            return -std::numbers::sqrt2 * xsimd::sin(v + b);
          });
          work.col(k).array() *= d_phi.col(k).array();
        }
        break;
      case FeatureMapKind::favor:
        // Φ = exp(Z − ‖x‖²/2 [− shift])  →  dZ = dΦ ⊙ Φ
        work = d_phi.cwiseProduct(phi);
        break;
      case FeatureMapKind::porf_softplus:
        // Φ = softplus(Z)  →  dZ = dΦ ⊙ σ(Z),  σ(Z) = 1 − exp(−Φ) computed as −expm1(−Φ)
#pragma omp parallel for schedule(static) if (n * m >= kParallelEntries)
        for (Eigen::Index k = 0; k < m; ++k) {
          simd_map(phi.col(k).data(), work.col(k).data(), n,
                   [](const auto& v) { return -xsimd::expm1(-v); });
          work.col(k).array() *= d_phi.col(k).array();
        }
        break;
      case FeatureMapKind::softmaxfeat: {
        // Φ_ik = softmax_k(Z_i·)  →  dZ_ik = Φ_ik (dΦ_ik − Σ_l Φ_il dΦ_il)
        const Eigen::VectorXd inner = phi.cwiseProduct(d_phi).rowwise().sum();
        work = d_phi;
        work.colwise() -= inner;
        work.array() *= phi.array();
        break;
      }
      case FeatureMapKind::elu:
      case FeatureMapKind::dpfp:
      case FeatureMapKind::hedgehog:
      case FeatureMapKind::taylor:
      case FeatureMapKind::rebased:
        throw attention_only(kind_);
    }
  }
  // Z = X Ωᵀ  →  dΩ = dZᵀ X,  dX = dZ Ω
  resize_if_needed(d_particles, m, x.cols());
  d_particles.noalias() = work.transpose() * x;
  if (d_x) {
    resize_if_needed(*d_x, n, x.cols());
    d_x->noalias() = work * particles;
    // favor's exponent also holds −‖x‖²/2: its x-derivative adds −(Σ_k dZ_ik) x_i.
    if (kind_ == FeatureMapKind::favor) {
      const Eigen::VectorXd row_sum = work.rowwise().sum();
      d_x->noalias() -= row_sum.asDiagonal() * x;
    }
  }
}

Eigen::MatrixXd FeatureMap::features(const Eigen::MatrixXd& x,
                                     const Eigen::MatrixXd& particles) const {
  Eigen::MatrixXd z, phi;
  forward(x, particles, z, phi);
  return phi;
}

std::string FeatureMap::describe() const {
  return pairs_ ? std::string("rff-pairs") : feature_map_name(kind_);
}

}  // namespace cpm
