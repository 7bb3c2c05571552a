#include "physics/feature_maps.hpp"

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

// out[i] = factor · f(z[i] + phase) over a contiguous column, with xsimd's vectorised sin/cos.
template <class F>
void shifted_trig(const double* z, double phase, double factor, const F& f, double* out,
                  Eigen::Index n) {
  using Batch = xsimd::batch<double>;
  constexpr Eigen::Index width = Batch::size;
  Eigen::Index i = 0;
  for (; i + width <= n; i += width)
    (factor * f(Batch::load_unaligned(z + i) + phase)).store_unaligned(out + i);
  for (; i < n; ++i) out[i] = factor * f(xsimd::batch<double>(z[i] + phase)).get(0);
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

const std::vector<std::string>& feature_map_names() {
  static const std::vector<std::string> names = {"rff", "favor", "porf-softplus", "softmaxfeat"};
  return names;
}

std::string feature_map_name(FeatureMapKind kind) {
  return feature_map_names()[static_cast<std::size_t>(kind)];
}

FeatureMapKind feature_map_kind(const std::string& name) {
  const auto& names = feature_map_names();
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return static_cast<FeatureMapKind>(i);
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown feature map '" + name + "' (expected one of: " + list + ")");
}

FeatureMap::FeatureMap(FeatureMapKind kind, Eigen::VectorXd phases)
    : kind_(kind), phases_(std::move(phases)) {}

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
      shifted_trig(
          z.col(k).data(), 0.0, 1.0, [](const auto& v) { return xsimd::cos(v); }, phi.col(k).data(),
          n);
      shifted_trig(
          z.col(k).data(), 0.0, 1.0, [](const auto& v) { return xsimd::sin(v); },
          phi.col(m + k).data(), n);
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
        shifted_trig(
            z.col(k).data(), phases_[k], std::sqrt(2.0),
            [](const auto& v) { return xsimd::cos(v); }, phi.col(k).data(), n);
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
        phi.col(k) = z.col(k).array().max(0.0) + (-z.col(k).array().abs()).exp().log1p();
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
          shifted_trig(
              z.col(k).data(), phases_[k], -std::sqrt(2.0),
              [](const auto& v) { return xsimd::sin(v); }, work.col(k).data(), n);
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
        for (Eigen::Index k = 0; k < m; ++k)
          work.col(k) = -d_phi.col(k).array() *
                        (-phi.col(k).array()).unaryExpr([](double v) { return std::expm1(v); });
        break;
      case FeatureMapKind::softmaxfeat: {
        // Φ_ik = softmax_k(Z_i·)  →  dZ_ik = Φ_ik (dΦ_ik − Σ_l Φ_il dΦ_il)
        const Eigen::VectorXd inner = phi.cwiseProduct(d_phi).rowwise().sum();
        work = d_phi;
        work.colwise() -= inner;
        work.array() *= phi.array();
        break;
      }
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
