// The attention feature maps elu + 1, dpfp, hedgehog and the projected maps (taylor, rebased,
// projected dpfp): values against per-point formulas, the x-backward against finite differences;
// the particle (projection) gradient of every particle map against finite differences, alone and
// through linear attention; linear attention with the new maps against the explicit normalised
// kernel attention; taylor's kernel 1 + z + z²/2, rebased's ε + (yᵀy′)², and the projected dpfp
// with P = I against dpfp.
//
// GCC 12 with AVX-512 emits Eigen's double-precision packet exp (pexp_double) out of line in this
// file and then reports the _mm512_undefined_pd() operands of its min/max intrinsics as
// uninitialised: a false positive of the intrinsics headers, silenced for this file alone.
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "tests/transformer/finite_difference.hpp"
#include "transformer/linear_attention.hpp"
#include "transformer/thread_index.hpp"

namespace cpm {
namespace {

using testing::expect_gradient;
using testing::random_vector;
using testing::weighted_sum;

// φ(s x) of one point, written out from the definitions (no shifts; torch.roll for dpfp). The
// projected maps read `particles` = d′ rows of omega as P; rebased then its γ and β, each in the
// first d′ entries of ⌈d′/d_head⌉ rows.
std::vector<double> point_features(const FeatureMapSpec& spec, const std::vector<double>& x,
                                   const double* omega, int particles, double s) {
  const int d = static_cast<int>(x.size());
  std::vector<double> y(d), phi;
  for (int a = 0; a < d; ++a) y[a] = s * x[a];
  auto u = [&](int k) {  // ω_kᵀ y
    double t = 0.0;
    for (int a = 0; a < d; ++a) t += omega[k * d + a] * y[a];
    return t;
  };
  switch (spec.kind) {
    case FeatureMapKind::elu:
      for (double v : y) phi.push_back((v > 0 ? v : std::expm1(v)) + 1.0);
      break;
    case FeatureMapKind::dpfp: {
      std::vector<double> in = y;  // dpfp's input: y, or u = P y when projected
      if (spec.projected) {
        in.assign(particles, 0.0);
        for (int k = 0; k < particles; ++k) in[k] = u(k);
      }
      const int e = static_cast<int>(in.size());
      std::vector<double> r(2 * e);
      for (int a = 0; a < e; ++a) {
        r[a] = std::max(in[a], 0.0);
        r[e + a] = std::max(-in[a], 0.0);
      }
      for (int i = 1; i <= spec.dpfp_nu; ++i) {
        std::vector<double> rolled(2 * e);  // torch.roll(r, i): entry j moves to j + i
        for (int j = 0; j < 2 * e; ++j) rolled[(j + i) % (2 * e)] = r[j];
        for (int j = 0; j < 2 * e; ++j) phi.push_back(r[j] * rolled[j] + spec.epsilon);
      }
      break;
    }
    case FeatureMapKind::taylor:  // [1; u; u_i u_j (i < j), u_i²/√2 (i = j)], i outer
      phi.push_back(1.0);
      for (int k = 0; k < particles; ++k) phi.push_back(u(k));
      for (int i = 0; i < particles; ++i)
        for (int j = i; j < particles; ++j)
          phi.push_back(i == j ? u(i) * u(i) / std::sqrt(2.0) : u(i) * u(j));
      break;
    case FeatureMapKind::rebased: {  // [√ε; y_i y_j (i = j), √2 y_i y_j (i < j)], i outer
      const int rows = (particles + d - 1) / d;
      const double* gamma = omega + particles * d;
      const double* beta = gamma + rows * d;
      double mean = 0.0, var = 0.0;
      for (int k = 0; k < particles; ++k) mean += u(k) / particles;
      for (int k = 0; k < particles; ++k) var += (u(k) - mean) * (u(k) - mean) / particles;
      std::vector<double> z(particles);
      for (int k = 0; k < particles; ++k)
        z[k] = gamma[k] * (u(k) - mean) / std::sqrt(var + 1e-5) + beta[k];
      phi.push_back(std::sqrt(spec.epsilon));
      for (int i = 0; i < particles; ++i)
        for (int j = i; j < particles; ++j)
          phi.push_back(i == j ? z[i] * z[i] : std::sqrt(2.0) * z[i] * z[j]);
      break;
    }
    case FeatureMapKind::hedgehog:
      for (double sign : {1.0, -1.0}) {
        double total = 0.0;
        for (int k = 0; k < particles; ++k) total += std::exp(sign * u(k));
        for (int k = 0; k < particles; ++k)
          phi.push_back(std::exp(sign * u(k)) / total + spec.epsilon);
      }
      break;
    case FeatureMapKind::favor: {
      double norm2 = 0.0;
      for (double v : y) norm2 += v * v;
      for (int k = 0; k < particles; ++k) phi.push_back(std::exp(u(k) - norm2 / 2));
      break;
    }
    case FeatureMapKind::porf_softplus:
      for (int k = 0; k < particles; ++k) phi.push_back(std::log1p(std::exp(u(k))));
      break;
    case FeatureMapKind::softmaxfeat: {
      double total = 0.0;
      for (int k = 0; k < particles; ++k) total += std::exp(u(k));
      for (int k = 0; k < particles; ++k) phi.push_back(std::exp(u(k)) / total + spec.epsilon);
      break;
    }
    case FeatureMapKind::rff:
      break;
  }
  return phi;
}

// A map with its sizes for a head of size hs: r particles (if any) and D_φ rows.
struct MapCase {
  FeatureMapSpec spec;
  int particles;  // r for the particle maps, d′ for the projected ones; ignored by elu and dpfp
  std::string name() const {
    return feature_map_name(spec.kind) +
           (spec.kind == FeatureMapKind::dpfp ? std::to_string(spec.dpfp_nu) : "") +
           (is_projected(spec) ? " projected d'=" + std::to_string(particles) : "");
  }
  int dimension(int hs) const {  // rebased's feature_dimension reads its block's rows
    return feature_dimension(
        spec, spec.kind == FeatureMapKind::rebased ? rebased_block_rows(particles, hs) : particles,
        hs);
  }
  int rows(int hs) const { return particle_rows(spec, dimension(hs), hs); }
};

std::vector<MapCase> new_maps(double eps) {
  return {{{FeatureMapKind::elu, eps}, 0},           {{FeatureMapKind::dpfp, eps, 1}, 0},
          {{FeatureMapKind::dpfp, eps, 2}, 0},       {{FeatureMapKind::dpfp, eps, 3}, 0},
          {{FeatureMapKind::hedgehog, eps}, 3},      {{FeatureMapKind::taylor, eps}, 3},
          {{FeatureMapKind::taylor, eps}, 5},        {{FeatureMapKind::dpfp, eps, 1, true}, 3},
          {{FeatureMapKind::dpfp, eps, 2, true}, 3}, {{FeatureMapKind::dpfp, eps, 3, true}, 5},
          {{FeatureMapKind::rebased, eps}, 3}};
}

// x (d_head, n) stored with an outer stride larger than d_head, as inside the qkv buffer.
constexpr int kStride = 6;
ConstStridedMap<double> columns(const std::vector<double>& x, int hs, int n) {
  return ConstStridedMap<double>(x.data(), hs, n, Eigen::OuterStride<>(kStride));
}

TEST(AttentionFeatureMaps, SizesAndRefusals) {
  const int hs = 4;
  EXPECT_EQ(feature_dimension({FeatureMapKind::favor}, 7, hs), 7);
  EXPECT_EQ(feature_dimension({FeatureMapKind::hedgehog}, 7, hs), 14);
  EXPECT_EQ(feature_dimension({FeatureMapKind::elu}, 7, hs), 4);
  EXPECT_EQ(feature_dimension({FeatureMapKind::dpfp, 0.0, 3}, 7, hs), 24);
  EXPECT_EQ(particle_rows({FeatureMapKind::porf_softplus}, 9, hs), 9);
  EXPECT_EQ(particle_rows({FeatureMapKind::hedgehog}, 14, hs), 7);
  EXPECT_EQ(particle_rows({FeatureMapKind::elu}, 4, hs), 0);
  EXPECT_EQ(particle_rows({FeatureMapKind::dpfp, 0.0, 2}, 16, hs), 0);
  EXPECT_THROW(particle_rows({FeatureMapKind::hedgehog}, 7, hs), std::invalid_argument);
  EXPECT_THROW(particle_rows({FeatureMapKind::elu}, 5, hs), std::invalid_argument);
  EXPECT_THROW(particle_rows({FeatureMapKind::dpfp, 0.0, 2}, 8, hs), std::invalid_argument);
  EXPECT_THROW(particle_rows({FeatureMapKind::rff}, 8, hs), std::invalid_argument);
  EXPECT_THROW(feature_dimension({FeatureMapKind::dpfp, 0.0, 0}, 0, hs), std::invalid_argument);
  EXPECT_THROW(feature_dimension({FeatureMapKind::dpfp, 0.0, 8}, 0, hs), std::invalid_argument);
  EXPECT_THROW(
      particle_rows({FeatureMapKind::favor}, feature_dimension({FeatureMapKind::favor}, 0, hs), hs),
      std::invalid_argument);

  for (const auto& name : attention_feature_map_names())
    EXPECT_EQ(feature_map_name(feature_map_kind(name)), name);
  EXPECT_EQ(feature_map_names().size(), 4u);  // FeatureMap's maps only
  for (FeatureMapKind kind : {FeatureMapKind::elu, FeatureMapKind::dpfp, FeatureMapKind::hedgehog,
                              FeatureMapKind::taylor})
    EXPECT_THROW(FeatureMap{kind}, std::invalid_argument) << feature_map_name(kind);
  try {
    FeatureMap::by_name("elu", 4, 1);
    ADD_FAILURE() << "FeatureMap accepted elu";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()).rfind("elu has no particles", 0), 0u) << e.what();
  }
}

TEST(AttentionFeatureMaps, ProjectedSizesAndRefusals) {
  const int hs = 4;
  const FeatureMapSpec taylor{FeatureMapKind::taylor, 0.0};
  EXPECT_EQ(taylor_projection_size(-1), 0);
  EXPECT_EQ(taylor_projection_size(0), 0);
  EXPECT_EQ(taylor_projection_size(2), 0);
  EXPECT_EQ(taylor_projection_size(3), 1);
  EXPECT_EQ(taylor_projection_size(5), 1);
  EXPECT_EQ(taylor_projection_size(6), 2);
  EXPECT_EQ(taylor_projection_size(14), 3);
  EXPECT_EQ(taylor_projection_size(15), 4);
  EXPECT_EQ(taylor_projection_size(2144), 63);
  EXPECT_EQ(taylor_projection_size(2145), 64);  // Based's d′ = 16 has 273 of these; 64 → 2145
  for (int d = 1; d <= 80; ++d) {
    const int m = feature_dimension(taylor, d, hs);
    EXPECT_EQ(m, 1 + d + d * (d + 1) / 2);
    EXPECT_EQ(taylor_feature_dimension(d), m);
    EXPECT_EQ(particle_rows(taylor, m, hs), d);  // d′ below, at and above d_head
    EXPECT_EQ(taylor_projection_size(m), d);
    EXPECT_EQ(taylor_projection_size(m - 1), d - 1);
    EXPECT_THROW(particle_rows(taylor, m + 1, hs), std::invalid_argument) << m + 1;
  }
  try {
    particle_rows(taylor, 12, hs);
    ADD_FAILURE() << "taylor accepted D_φ = 12";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("10 for d′ = 3 or 15 for d′ = 4"), std::string::npos)
        << e.what();
  }
  try {
    particle_rows(taylor, 2, hs);
    ADD_FAILURE() << "taylor accepted D_φ = 2";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("(the nearest: 3 for d′ = 1)"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(particle_rows(taylor, 1, hs), std::invalid_argument);  // d′ = 0
  EXPECT_THROW(feature_dimension(taylor, 0, hs), std::invalid_argument);
  EXPECT_THROW(feature_dimension(taylor, 70000, hs), std::invalid_argument);    // D_φ beyond int
  EXPECT_EQ(particle_rows({FeatureMapKind::taylor, 0.0, 1, true}, 10, hs), 3);  // either flag

  for (int nu : {1, 2, 3})
    for (int d : {2, 3, 5, 9}) {
      const FeatureMapSpec dpfp{FeatureMapKind::dpfp, 0.0, nu, true};
      const int m = feature_dimension(dpfp, d, hs);
      EXPECT_EQ(m, 2 * nu * d);
      EXPECT_EQ(particle_rows(dpfp, m, hs), d);
      EXPECT_THROW(particle_rows(dpfp, m + 1, hs), std::invalid_argument);
    }
  const FeatureMapSpec dpfp2{FeatureMapKind::dpfp, 0.0, 2, true};
  EXPECT_THROW(particle_rows(dpfp2, 18, hs), std::invalid_argument);  // not a multiple of 2ν
  EXPECT_THROW(particle_rows(dpfp2, 0, hs), std::invalid_argument);
  EXPECT_THROW(particle_rows({FeatureMapKind::dpfp, 0.0, 3, true}, 6, hs),  // ν = 3 ≥ 2 d′ = 2
               std::invalid_argument);
  EXPECT_THROW(particle_rows({FeatureMapKind::dpfp, 0.0, 0, true}, 6, hs), std::invalid_argument);
  EXPECT_THROW(feature_dimension(dpfp2, 0, hs), std::invalid_argument);
  EXPECT_THROW(feature_dimension({FeatureMapKind::dpfp, 0.0, 2, true}, 1, hs),
               std::invalid_argument);  // ν = 2 ≥ 2 d′
  EXPECT_EQ(particle_rows(dpfp2, 4 * kMaxDpfpProjection, hs), kMaxDpfpProjection);
  EXPECT_THROW(particle_rows(dpfp2, 4 * (kMaxDpfpProjection + 1), hs), std::invalid_argument);
  EXPECT_THROW(feature_dimension(dpfp2, kMaxDpfpProjection + 1, hs), std::invalid_argument);
  // The native dpfp is unchanged: D_φ = 2ν d_head, no particles.
  EXPECT_EQ(particle_rows({FeatureMapKind::dpfp, 0.0, 2}, 16, hs), 0);
  EXPECT_EQ(feature_dimension({FeatureMapKind::dpfp, 0.0, 2}, 5, hs), 16);

  // projected belongs to dpfp and taylor only.
  for (FeatureMapKind kind :
       {FeatureMapKind::favor, FeatureMapKind::porf_softplus, FeatureMapKind::softmaxfeat,
        FeatureMapKind::elu, FeatureMapKind::hedgehog}) {
    const FeatureMapSpec spec{kind, 0.0, 1, true};
    EXPECT_THROW(feature_dimension(spec, 4, hs), std::invalid_argument) << feature_map_name(kind);
    EXPECT_THROW(particle_rows(spec, 4, hs), std::invalid_argument) << feature_map_name(kind);
    EXPECT_FALSE(is_projected(spec));
  }
  EXPECT_TRUE(is_projected(taylor));
  EXPECT_TRUE(is_projected(dpfp2));
  EXPECT_FALSE(is_projected({FeatureMapKind::dpfp, 0.0, 2}));

  EXPECT_EQ(feature_map_kind("taylor"), FeatureMapKind::taylor);
  EXPECT_EQ(feature_map_name(FeatureMapKind::taylor), "taylor");
  const auto& names = attention_feature_map_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "taylor"), names.end());
}

TEST(AttentionFeatureMaps, ForwardEqualsPointwiseFormulas) {
  const int hs = 4, n = 5;
  const double s = 0.8;
  const auto x = random_vector(std::size_t(kStride) * n, 51);
  const auto omega = random_vector(5 * hs, 52);  // up to 5 rows
  for (const MapCase& c : new_maps(1e-3)) {
    const int m = c.dimension(hs);
    std::vector<double> phi(std::size_t(m) * n);
    feature_map_forward<double>(c.spec, phi.data(), columns(x, hs, n), omega.data(), m, s,
                                FeatureShift::per_column);
    for (int j = 0; j < n; ++j) {
      const std::vector<double> xj(x.begin() + j * kStride, x.begin() + j * kStride + hs);
      const auto expected = point_features(c.spec, xj, omega.data(), c.particles, s);
      ASSERT_EQ(expected.size(), std::size_t(m)) << c.name();
      for (int k = 0; k < m; ++k)
        EXPECT_NEAR(phi[j * m + k], expected[k], 1e-14 * (1 + std::abs(expected[k])))
            << c.name() << " j=" << j << " k=" << k;
    }
  }
}

// ℓ = Σ g ⊙ φ(x): dx and dΩ of feature_map_backward against central differences.
struct FeatureLoss {
  MapCase map;
  int hs, n;
  double scale;
  FeatureShift shift;
  std::vector<double> x, omega, g;

  int m() const { return map.dimension(hs); }
  std::vector<double> forward() const {
    std::vector<double> phi(std::size_t(m()) * n);
    feature_map_forward<double>(map.spec, phi.data(), columns(x, hs, n),
                                omega.empty() ? nullptr : omega.data(), m(), scale, shift);
    return phi;
  }
  // favor's max-shift c: the test's loss uses the unshifted φ = (φ_shifted − ε)·e^c, c of the
  // current x and Ω, so it is a smooth function of both.
  std::vector<double> shifts() const {
    std::vector<double> c(n, 0.0);
    if (is_favor()) {
      for (int j = 0; j < n; ++j) {
        double norm2 = 0.0;
        for (int a = 0; a < hs; ++a)
          norm2 += scale * scale * x[j * kStride + a] * x[j * kStride + a];
        c[j] = -1e300;
        for (int k = 0; k < m(); ++k) {
          double u = 0.0;
          for (int a = 0; a < hs; ++a) u += scale * omega[k * hs + a] * x[j * kStride + a];
          c[j] = std::max(c[j], u - norm2 / 2);
        }
      }
      if (shift == FeatureShift::shared)
        std::fill(c.begin(), c.end(), *std::max_element(c.begin(), c.end()));
    }
    return c;
  }
  bool is_favor() const { return map.spec.kind == FeatureMapKind::favor; }
  double loss() const {
    const auto phi = forward();
    const auto c = shifts();
    double total = 0.0;
    for (int j = 0; j < n; ++j)
      for (int k = 0; k < m(); ++k) {
        const double v =
            is_favor() ? (phi[j * m() + k] - map.spec.epsilon) * std::exp(c[j]) : phi[j * m() + k];
        total += g[j * m() + k] * v;
      }
    return total;
  }
  // (dx, dΩ) from the backward; for favor dphi = g ⊙ e^c turns the shifted backward into the
  // gradient of the unshifted loss.
  std::pair<std::vector<double>, std::vector<double>> backward() const {
    const auto phi = forward();
    const auto c = shifts();
    std::vector<double> dphi(g);
    if (is_favor())
      for (int j = 0; j < n; ++j)
        for (int k = 0; k < m(); ++k) dphi[j * m() + k] *= std::exp(c[j]);
    std::vector<double> dx(x.size(), 0.0), domega(omega.size(), 0.0);
    StridedMap<double> dx_map(dx.data(), hs, n, Eigen::OuterStride<>(kStride));
    feature_map_backward<double>(map.spec, dx_map, dphi.data(), phi.data(), columns(x, hs, n),
                                 omega.empty() ? nullptr : omega.data(), m(), scale,
                                 omega.empty() ? nullptr : domega.data());
    return {dx, domega};
  }
};

FeatureLoss make_loss(const MapCase& c, FeatureShift shift, std::uint64_t seed, int hs = 4) {
  const int n = 5;
  FeatureLoss f{c, hs, n, 0.8, shift, random_vector(std::size_t(kStride) * n, seed), {}, {}};
  const int rows = c.rows(hs);
  if (rows > 0) f.omega = random_vector(std::size_t(rows) * hs, seed + 1, 0.7);
  f.g = random_vector(std::size_t(f.m()) * n, seed + 2);
  return f;
}

TEST(AttentionFeatureMaps, InputBackwardMatchesFiniteDifferences) {
  std::uint64_t seed = 60;
  for (const int hs : {2, 4})  // d_head = 2: dpfp's roll by ν = 2 pairs relu(y_b) with relu(−y_b)
    for (const double eps : {0.0, 1e-3})
      for (const MapCase& c : new_maps(eps)) {
        FeatureLoss f = make_loss(c, FeatureShift::per_column, seed += 3, hs);
        const auto [dx, domega] = f.backward();
        auto loss = [&] { return f.loss(); };
        // rebased: the LayerNorm of d′ = 3 entries curves φ strongly where var u is small, and
        // central differences with h = 1e-5 agree to 2e-8 only.
        const double tolerance = c.spec.kind == FeatureMapKind::rebased ? 1e-7 : 1e-8;
        expect_gradient(f.x, dx, loss, "dx " + c.name() + " d_head=" + std::to_string(hs),
                        tolerance);
      }
}

TEST(AttentionFeatureMaps, ParticleBackwardMatchesFiniteDifferences) {
  const std::vector<MapCase> cases = {{{FeatureMapKind::favor, 1e-3}, 5},
                                      {{FeatureMapKind::porf_softplus, 1e-3}, 5},
                                      {{FeatureMapKind::softmaxfeat, 1e-3}, 5},
                                      {{FeatureMapKind::hedgehog, 1e-3}, 3}};
  std::uint64_t seed = 80;
  for (const MapCase& c : cases)
    for (FeatureShift shift : {FeatureShift::per_column, FeatureShift::shared}) {
      FeatureLoss f = make_loss(c, shift, seed += 3);
      const auto [dx, domega] = f.backward();
      const std::string what =
          c.name() + (shift == FeatureShift::shared ? " shared shift" : " per-column shift");
      auto loss = [&] { return f.loss(); };
      expect_gradient(f.omega, domega, loss, "domega " + what, 1e-8);
      expect_gradient(f.x, dx, loss, "dx " + what, 1e-8);
    }
}

// Buffers for one linear attention call in double: D_φ = m rows of φ, omega sized by
// particle_rows (empty for elu and dpfp, passed as null).
struct LinearFixture {
  AttentionLayout layout;
  FeatureMapSpec spec;
  int m, rows;
  std::vector<int> lengths;
  std::vector<double> qkv, omega, out, phi_q, phi_k, inv, kv, z, scratch, scratch_double, dqkv,
      domega;

  LinearFixture(AttentionLayout a, const MapCase& c, std::vector<int> len, std::uint64_t seed,
                int threads)
      : layout(a),
        spec(c.spec),
        m(c.dimension(a.head_size)),
        rows(c.rows(a.head_size)),
        lengths(std::move(len)) {
    const int N = a.batch * a.length, bh = a.batch * a.heads;
    qkv = random_vector(std::size_t(a.qkv_rows()) * N, seed);
    if (rows > 0) omega = random_vector(std::size_t(a.heads) * rows * a.head_size, seed + 1, 0.7);
    out.assign(std::size_t(a.channels()) * N, 0.0);
    phi_q.assign(std::size_t(bh) * m * a.length, 0.0);
    phi_k = phi_q;
    inv.assign(std::size_t(bh) * a.length, 0.0);
    kv.assign(std::size_t(bh) * m * a.head_size, 0.0);
    z.assign(std::size_t(bh) * m, 0.0);
    scratch.assign(threads * linear_attention_scratch(m, a.length, a.head_size), 0.0);
    scratch_double.assign(threads * linear_attention_scratch_double(m, a.head_size), 0.0);
  }
  const double* particles() const { return omega.empty() ? nullptr : omega.data(); }
  LinearAttentionCache<double> cache() {
    return {phi_q.data(), phi_k.data(), kv.data(), z.data(), inv.data()};
  }
  void forward() {
    linear_attention_forward(out.data(), cache(), qkv.data(), particles(), lengths.data(), layout,
                             spec, m, scratch.data(), scratch_double.data());
  }
  // (dqkv, dΩ)
  std::pair<std::vector<double>, std::vector<double>> backward(const std::vector<double>& dout) {
    dqkv.assign(qkv.size(), 0.0);  // kept buffers: the same addresses on every call
    domega.assign(omega.size(), 0.0);
    linear_attention_backward(dqkv.data(), dout.data(), out.data(), cache(), qkv.data(),
                              particles(), lengths.data(), layout, spec, m, scratch.data(),
                              scratch_double.data(), omega.empty() ? nullptr : domega.data());
    return {dqkv, domega};
  }
};

TEST(LinearAttentionFeatures, NewMapsEqualExplicitNormalisedKernelAttention) {
  for (const MapCase& c : new_maps(1e-6)) {
    LinearFixture f({2, 6, 2, 4, false}, c, {6, 4}, 71, max_threads());
    f.forward();
    const AttentionLayout& a = f.layout;
    const double s = 1.0 / std::sqrt(2.0);  // d_head^{-1/4} for d_head = 4
    for (int b = 0; b < a.batch; ++b)
      for (int h = 0; h < a.heads; ++h) {
        const auto q = a.block(static_cast<const double*>(f.qkv.data()), b, h, 0);
        const auto k = a.block(static_cast<const double*>(f.qkv.data()), b, h, a.k_offset());
        const auto v = a.block(static_cast<const double*>(f.qkv.data()), b, h, a.v_offset());
        const double* om = f.rows > 0 ? f.omega.data() + h * f.rows * a.head_size : nullptr;
        const int len = f.lengths[b];
        auto features = [&](const ConstStridedMap<double>& x, int cols) {
          Eigen::MatrixXd phi(f.m, cols);
          for (int i = 0; i < cols; ++i) {
            std::vector<double> xi(a.head_size);
            for (int r = 0; r < a.head_size; ++r) xi[r] = x(r, i);
            const auto p = point_features(f.spec, xi, om, c.particles, s);
            for (int r = 0; r < f.m; ++r) phi(r, i) = p[r];
          }
          return phi;
        };
        const Eigen::MatrixXd phi_q = features(q, a.length), phi_k = features(k, len);
        const Eigen::MatrixXd scores = phi_q.transpose() * phi_k;  // the explicit (L, len) matrix
        for (int i = 0; i < a.length; ++i) {
          // δ included: dpfp's sparse products can make the denominator as small as ~ε.
          const Eigen::VectorXd expected = v.leftCols(len) * scores.row(i).transpose() /
                                           (scores.row(i).sum() + kAttentionDenominatorGuard);
          const auto got = a.output(static_cast<const double*>(f.out.data()), b, h).col(i);
          for (int r = 0; r < a.head_size; ++r)
            EXPECT_NEAR(got(r), expected(r), 1e-11 * (1 + std::abs(expected(r))))
                << c.name() << " b=" << b << " h=" << h << " i=" << i;
        }
      }
  }
}

TEST(LinearAttentionFeatures, RefusesAFeatureDimensionTheMapDoesNotHave) {
  LinearFixture f({1, 3, 1, 4, false}, {{FeatureMapKind::elu, 0.0}, 0}, {3}, 72, max_threads());
  f.m = 6;  // elu has D_φ = d_head = 4
  EXPECT_THROW(f.forward(), std::invalid_argument);
}

struct GradientCase {
  MapCase map;
  bool tied;
};

class LinearAttentionParticleGradient : public ::testing::TestWithParam<GradientCase> {};

// ℓ = Σ g ⊙ out as a function of the particles (and of qkv), with padding.
TEST_P(LinearAttentionParticleGradient, BackwardMatchesFiniteDifferences) {
  const auto [c, tied] = GetParam();
  LinearFixture f({2, 5, 2, 4, tied}, c, {5, 3}, 91, max_threads());
  const auto g = random_vector(f.out.size(), 92);
  auto loss = [&] {
    f.forward();
    return weighted_sum(f.out.data(), g);
  };
  loss();
  const auto [dqkv, domega] = f.backward(g);
  // favor's max-shifts are treated as constants: exact for ε = 0, O(ε) otherwise. The projected
  // dpfp with d′ = 3 has few nonzero products per token (for ν = 1 a quarter of these queries
  // have φ = ε alone), so some denominators are small and the outputs curve enough that central
  // differences with h = 1e-5 agree to 5e-7 only (to 5e-9 with h = 1e-6).
  const bool projected_dpfp = c.spec.kind == FeatureMapKind::dpfp && c.spec.projected;
  const double tolerance = c.spec.kind == FeatureMapKind::favor && c.spec.epsilon > 0.0 ? 1e-4
                           : projected_dpfp                                             ? 1e-6
                                                                                        : 1e-7;
  const std::string what = c.name() + (tied ? " tied" : "") +
                           (c.spec.epsilon > 0.0 ? " eps=" + std::to_string(c.spec.epsilon) : "");
  if (f.rows > 0) expect_gradient(f.omega, domega, loss, "domega " + what, tolerance);
  expect_gradient(f.qkv, dqkv, loss, "dqkv " + what, tolerance);
}

std::vector<GradientCase> gradient_cases() {
  std::vector<GradientCase> cases;
  for (bool tied : {false, true}) {
    for (double eps : {0.0, 1e-6}) cases.push_back({{{FeatureMapKind::favor, eps}, 4}, tied});
    cases.push_back({{{FeatureMapKind::porf_softplus, 1e-6}, 4}, tied});
    cases.push_back({{{FeatureMapKind::softmaxfeat, 1e-6}, 4}, tied});
    cases.push_back({{{FeatureMapKind::hedgehog, 1e-6}, 3}, tied});
    cases.push_back({{{FeatureMapKind::elu, 1e-6}, 0}, tied});
    for (int nu : {1, 2, 3}) cases.push_back({{{FeatureMapKind::dpfp, 1e-6, nu}, 0}, tied});
    // The projected maps with d′ below and above d_head = 4: P's gradient.
    for (int d : {3, 6}) cases.push_back({{{FeatureMapKind::taylor, 0.0}, d}, tied});
    for (int d : {3, 6}) cases.push_back({{{FeatureMapKind::rebased, 1e-6}, d}, tied});
    for (int nu : {1, 2, 3}) cases.push_back({{{FeatureMapKind::dpfp, 1e-6, nu, true}, 3}, tied});
    cases.push_back({{{FeatureMapKind::dpfp, 1e-6, 2, true}, 6}, tied});
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(AllMaps, LinearAttentionParticleGradient,
                         ::testing::ValuesIn(gradient_cases()));

// Each sequence's particle gradient goes to its own block and the blocks are summed in a fixed
// order, so one and two threads give the same bits.
TEST(LinearAttentionFeatures, ParticleGradientIsTheSameOnOneAndTwoThreads) {
  const int saved = omp_get_max_threads();
  for (const MapCase& c : std::vector<MapCase>{{{FeatureMapKind::favor, 1e-6}, 8},
                                               {{FeatureMapKind::hedgehog, 1e-6}, 4},
                                               {{FeatureMapKind::taylor, 0.0}, 4},
                                               {{FeatureMapKind::rebased, 1e-6}, 5},
                                               {{FeatureMapKind::dpfp, 1e-6, 2, true}, 3}}) {
    std::vector<std::vector<double>> results;
    // One fixture for both thread counts: the same buffers at the same addresses (Eigen's
    // vectorised loops peel up to the first aligned element, so placement must not change).
    LinearFixture f({5, 7, 2, 4, false}, c, {7, 2, 5, 7, 4}, 95, 2);
    const auto g = random_vector(f.out.size(), 96);
    for (int threads : {1, 2}) {
      omp_set_num_threads(threads);
      f.forward();
      results.push_back(f.backward(g).second);
    }
    ASSERT_EQ(results[0].size(), results[1].size());
    for (std::size_t i = 0; i < results[0].size(); ++i)
      EXPECT_EQ(results[0][i], results[1][i]) << c.name() << " entry " << i;
  }
  omp_set_num_threads(saved);
}

// The float instantiation of the new maps agrees with double.
TEST(AttentionFeatureMaps, FloatAgreesWithDouble) {
  const int hs = 4, n = 5;
  for (const MapCase& c : new_maps(1e-6)) {
    FeatureLoss f = make_loss(c, FeatureShift::per_column, 120);
    const int m = f.m();
    const auto phi = f.forward();
    const auto [dx, domega] = f.backward();
    std::vector<float> xf(f.x.begin(), f.x.end()), of(f.omega.begin(), f.omega.end());
    std::vector<float> phif(phi.size()), gf(f.g.begin(), f.g.end()), dxf(xf.size(), 0.0f),
        dof(of.size(), 0.0f);
    const ConstStridedMap<float> xm(xf.data(), hs, n, Eigen::OuterStride<>(kStride));
    feature_map_forward<float>(c.spec, phif.data(), xm, of.empty() ? nullptr : of.data(), m, 0.8f,
                               FeatureShift::per_column);
    StridedMap<float> dxm(dxf.data(), hs, n, Eigen::OuterStride<>(kStride));
    feature_map_backward<float>(c.spec, dxm, gf.data(), phif.data(), xm,
                                of.empty() ? nullptr : of.data(), m, 0.8f,
                                of.empty() ? nullptr : dof.data());
    for (std::size_t i = 0; i < phi.size(); ++i) EXPECT_NEAR(phif[i], phi[i], 1e-5) << c.name();
    for (std::size_t i = 0; i < dx.size(); ++i) EXPECT_NEAR(dxf[i], dx[i], 1e-4) << c.name();
    for (std::size_t i = 0; i < domega.size(); ++i)
      EXPECT_NEAR(dof[i], domega[i], 1e-4) << c.name();
  }
}

// φ(x)ᵀφ(x′) = 1 + z + z²/2 with z = uᵀu′, u = s P x: the upper triangle carries Based's kernel.
TEST(TaylorFeatureMap, KernelIsOnePlusZPlusHalfZSquared) {
  const int n = 5;
  const double s = 0.8;
  for (const int hs : {2, 4, 6})
    for (const int d : {1, 3, 4, 7}) {
      const FeatureMapSpec spec{FeatureMapKind::taylor, 1e-3};  // ε is not used by taylor
      const int m = feature_dimension(spec, d, hs);
      const auto x = random_vector(std::size_t(kStride) * n, 200 + hs * 10 + d);
      const auto p = random_vector(std::size_t(d) * hs, 300 + hs * 10 + d, 0.9);
      std::vector<double> phi(std::size_t(m) * n);
      feature_map_forward<double>(spec, phi.data(), columns(x, hs, n), p.data(), m, s,
                                  FeatureShift::shared);
      const ConstMatrixMap<double> f(phi.data(), m, n);
      const Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>
          pm(p.data(), d, hs);
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
          const Eigen::VectorXd ui = s * pm * columns(x, hs, n).col(i);
          const Eigen::VectorXd uj = s * pm * columns(x, hs, n).col(j);
          const double z = ui.dot(uj), expected = 1.0 + z + z * z / 2;
          EXPECT_NEAR(f.col(i).dot(f.col(j)), expected, 1e-13 * expected)
              << "d_head=" << hs << " d'=" << d << " i=" << i << " j=" << j;
          EXPECT_GE(f.col(i).dot(f.col(j)), 0.5);
        }
    }
}

// With P = I (d′ = d_head) the projected dpfp is the native dpfp, forward and x-backward.
TEST(ProjectedDpfp, IdentityProjectionEqualsDpfp) {
  for (const int hs : {2, 4})
    for (const int nu : {1, 2, 3}) {
      const FeatureMapSpec native{FeatureMapKind::dpfp, 1e-3, nu};
      FeatureMapSpec projected = native;
      projected.projected = true;
      const int m = feature_dimension(native, 0, hs);
      ASSERT_EQ(feature_dimension(projected, hs, hs), m);
      ASSERT_EQ(particle_rows(projected, m, hs), hs);
      std::vector<double> identity(std::size_t(hs) * hs, 0.0), didentity(identity.size(), 0.0);
      for (int a = 0; a < hs; ++a) identity[a * hs + a] = 1.0;
      MapCase c{native, 0};
      FeatureLoss f = make_loss(c, FeatureShift::per_column, 400 + hs * 10 + nu, hs);
      const auto phi = f.forward();
      const auto [dx, unused] = f.backward();
      std::vector<double> phi_p(phi.size()), dphi(f.g), dx_p(f.x.size(), 0.0);
      feature_map_forward<double>(projected, phi_p.data(), columns(f.x, hs, f.n), identity.data(),
                                  m, f.scale, FeatureShift::per_column);
      for (std::size_t i = 0; i < phi.size(); ++i)
        EXPECT_EQ(phi_p[i], phi[i]) << "ν=" << nu << " d_head=" << hs << " entry " << i;
      StridedMap<double> dx_map(dx_p.data(), hs, f.n, Eigen::OuterStride<>(kStride));
      feature_map_backward<double>(projected, dx_map, dphi.data(), phi_p.data(),
                                   columns(f.x, hs, f.n), identity.data(), m, f.scale,
                                   didentity.data());
      for (std::size_t i = 0; i < dx.size(); ++i)
        EXPECT_NEAR(dx_p[i], dx[i], 1e-14 * (1 + std::abs(dx[i])))
            << "ν=" << nu << " d_head=" << hs << " entry " << i;
    }
}

// dx and dP of the projected maps against central differences: several d′ below and above d_head,
// both shift arguments (neither map has a shift: the results must not depend on it).
TEST(ProjectedFeatureMaps, BackwardMatchesFiniteDifferences) {
  std::uint64_t seed = 500;
  for (const int hs : {2, 4, 6})
    for (const int d : {1, 2, 3, 5, 7})
      for (const FeatureMapSpec& spec : {FeatureMapSpec{FeatureMapKind::taylor, 0.0},
                                         FeatureMapSpec{FeatureMapKind::dpfp, 1e-3, 1, true},
                                         FeatureMapSpec{FeatureMapKind::dpfp, 1e-3, 2, true},
                                         FeatureMapSpec{FeatureMapKind::dpfp, 0.0, 3, true}}) {
        if (spec.kind == FeatureMapKind::dpfp && spec.dpfp_nu >= 2 * d) continue;
        for (FeatureShift shift : {FeatureShift::per_column, FeatureShift::shared}) {
          const MapCase c{spec, d};
          FeatureLoss f = make_loss(c, shift, seed += 3, hs);
          ASSERT_EQ(f.omega.size(), std::size_t(d) * hs) << c.name();
          const auto [dx, domega] = f.backward();
          const std::string what = c.name() + " d_head=" + std::to_string(hs) +
                                   (shift == FeatureShift::shared ? " shared" : " per-column");
          auto loss = [&] { return f.loss(); };
          expect_gradient(f.omega, domega, loss, "dP " + what, 1e-8);
          expect_gradient(f.x, dx, loss, "dx " + what, 1e-8);
          // The same inputs under the other shift give the same φ.
          const auto phi = f.forward();
          f.shift = shift == FeatureShift::shared ? FeatureShift::per_column : FeatureShift::shared;
          EXPECT_EQ(f.forward(), phi) << what;
        }
      }
}

// rebased's sizes: D_φ = 1 + d′(d′+1)/2 and a block of d′ + 2⌈d′/d_head⌉ rows (P, γ, β), below
// and above d_head; a D_φ the map does not have is refused naming the nearest.
TEST(RebasedFeatureMap, SizesAndRefusals) {
  const FeatureMapSpec rebased{FeatureMapKind::rebased, 1e-6};
  EXPECT_EQ(rebased_projection_size(1), 0);
  EXPECT_EQ(rebased_projection_size(2), 1);
  EXPECT_EQ(rebased_projection_size(128), 15);  // D_φ = 121
  EXPECT_EQ(rebased_projection_size(256), 22);  // D_φ = 254
  for (const int hs : {2, 4, 16})
    for (int d = 1; d <= 40; ++d) {
      const int m = static_cast<int>(rebased_feature_dimension(d));
      EXPECT_EQ(m, 1 + d * (d + 1) / 2);
      const int rows = d + 2 * ((d + hs - 1) / hs);
      EXPECT_EQ(rebased_block_rows(d, hs), rows);
      EXPECT_EQ(particle_rows(rebased, m, hs), rows);
      EXPECT_EQ(feature_dimension(rebased, rows, hs), m);
      EXPECT_EQ(rebased_projection_size(m), d);
      EXPECT_THROW(particle_rows(rebased, m + 1, hs), std::invalid_argument) << m + 1;
    }
  EXPECT_THROW(feature_dimension(rebased, 7, 4), std::invalid_argument);  // no d′ + 2⌈d′/4⌉ = 7
  EXPECT_THROW(particle_rows(rebased, 1, 4), std::invalid_argument);      // d′ = 0
  try {
    particle_rows(rebased, 12, 4);
    ADD_FAILURE() << "rebased accepted D_φ = 12";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("11 for d′ = 4 or 16 for d′ = 5"), std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(is_projected(rebased));
  EXPECT_EQ(projection_row(rebased), 1);
  EXPECT_EQ(feature_map_kind("rebased"), FeatureMapKind::rebased);
  EXPECT_THROW(FeatureMap{FeatureMapKind::rebased}, std::invalid_argument);
}

// φ(x)ᵀφ(x′) = ε + (yᵀy′)² with y = γ ⊙ LN(s P x) + β; at γ = 1, β = 0 the LayerNorm makes φ
// independent of the input's scale (up to ε_LN).
TEST(RebasedFeatureMap, KernelIsEpsilonPlusTheSquaredInnerProductOfTheAffineLayerNorm) {
  const int n = 5;
  const double s = 0.8, eps = 1e-3;
  const FeatureMapSpec spec{FeatureMapKind::rebased, eps};
  for (const int hs : {2, 4, 6})
    for (const int d : {2, 3, 7}) {
      const int rows = rebased_block_rows(d, hs), m = feature_dimension(spec, rows, hs);
      const auto x = random_vector(std::size_t(kStride) * n, 700 + hs * 10 + d);
      for (const bool learned : {false, true}) {
        std::vector<double> p = random_vector(std::size_t(rows) * hs, 800 + hs * 10 + d, 0.9);
        const int affine = (d + hs - 1) / hs;
        double* gamma = p.data() + d * hs;
        double* beta = gamma + affine * hs;
        if (!learned) {
          std::fill(gamma, p.data() + p.size(), 0.0);
          std::fill_n(gamma, d, 1.0);
        }
        auto features = [&](double scale) {
          std::vector<double> phi(std::size_t(m) * n);
          feature_map_forward<double>(spec, phi.data(), columns(x, hs, n), p.data(), m, scale,
                                      FeatureShift::shared);
          return phi;
        };
        const auto phi = features(s);
        const ConstMatrixMap<double> f(phi.data(), m, n);
        auto y = [&](int j) {
          Eigen::VectorXd u(d);
          for (int k = 0; k < d; ++k) {
            u(k) = 0.0;
            for (int a = 0; a < hs; ++a) u(k) += s * p[k * hs + a] * x[j * kStride + a];
          }
          const double mean = u.mean(), var = (u.array() - mean).square().mean();
          Eigen::VectorXd out(d);
          for (int k = 0; k < d; ++k)
            out(k) = gamma[k] * (u(k) - mean) / std::sqrt(var + 1e-5) + beta[k];
          return out;
        };
        for (int i = 0; i < n; ++i)
          for (int j = 0; j < n; ++j) {
            const double z = y(i).dot(y(j)), expected = eps + z * z;
            EXPECT_NEAR(f.col(i).dot(f.col(j)), expected, 1e-12 * expected)
                << "d_head=" << hs << " d'=" << d << " i=" << i << " j=" << j;
          }
        if (!learned) {  // LN(2 s P x) = LN(s P x) up to ε_LN / var u: at large scales
          const auto once = features(100 * s), twice = features(200 * s);
          for (std::size_t i = 0; i < once.size(); ++i)
            EXPECT_NEAR(twice[i], once[i], 1e-5 * (1 + std::abs(once[i])));
        }
      }
    }
}

// dx and the whole block's gradient (dP, dγ, dβ) against central differences: d′ below and above
// d_head, γ and β away from their start.
TEST(RebasedFeatureMap, BackwardMatchesFiniteDifferences) {
  std::uint64_t seed = 900;
  for (const int hs : {2, 4, 6})
    for (const int d : {1, 2, 3, 5, 7})
      for (const double eps : {0.0, 1e-3}) {
        const MapCase c{{FeatureMapKind::rebased, eps}, d};
        FeatureLoss f = make_loss(c, FeatureShift::per_column, seed += 3, hs);
        ASSERT_EQ(f.omega.size(), std::size_t(rebased_block_rows(d, hs)) * hs);
        const auto [dx, domega] = f.backward();
        const std::string what = c.name() + " d_head=" + std::to_string(hs);
        auto loss = [&] { return f.loss(); };
        expect_gradient(f.omega, domega, loss, "dP dγ dβ " + what, 1e-8);
        expect_gradient(f.x, dx, loss, "dx " + what, 1e-8);
      }
}

}  // namespace
}  // namespace cpm
