// Causal (decoder) attention: chunked causal linear attention against the O(L²) sum over j ≤ i
// written out, causal softmax against the explicitly masked softmax, causal uniform attention
// against prefix means; outputs at i that do not see later tokens; every backward pass against
// finite differences; the same results with 1 and 2 threads, and float close to double.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "tests/transformer/finite_difference.hpp"
#include "transformer/causal_linear_attention.hpp"
#include "transformer/softmax_attention.hpp"
#include "transformer/thread_index.hpp"
#include "transformer/uniform_attention.hpp"

namespace cpm {
namespace {

using testing::expect_gradient;
using testing::random_vector;
using testing::weighted_sum;

// Buffers for one causal attention call in T, sized for the layout; every sequence has length L.
template <class T>
struct CausalFixture {
  AttentionLayout layout;
  int m;
  FeatureMapSpec spec;
  std::vector<int> lengths;
  std::vector<T> qkv, omega, out, lse, phi_q, phi_k, inv, key_norm, scratch, dqkv, domega;
  std::vector<double> kv, z, scratch_double;

  CausalFixture(AttentionLayout a, int m_, FeatureMapSpec s, std::uint64_t seed)
      : layout(a), m(m_), spec(s), lengths(a.batch, a.length) {
    const int N = a.batch * a.length, bh = a.batch * a.heads;
    const auto x = random_vector(std::size_t(a.qkv_rows()) * N, seed);
    const auto w = random_vector(std::size_t(a.heads) * m * a.head_size, seed + 1);
    qkv.assign(x.begin(), x.end());
    omega.assign(w.begin(), w.end());
    out.assign(std::size_t(a.channels()) * N, T(0));
    lse.assign(std::size_t(bh) * a.length, T(0));
    phi_q.assign(std::size_t(bh) * m * a.length, T(0));
    phi_k = phi_q;
    inv = lse;
    key_norm = lse;
    kv.assign(std::size_t(bh) * m * a.head_size, 0.0);
    z.assign(std::size_t(bh) * m, 0.0);
    const std::size_t threads = std::max(max_threads(), 2);  // the thread test runs 2
    scratch.assign(threads * std::max(causal_linear_attention_scratch(m, a.length, a.head_size),
                                      softmax_attention_scratch(a.head_size, a.length)),
                   T(0));
    scratch_double.assign(threads * causal_linear_attention_scratch_double(m, a.head_size), 0.0);
  }
  CausalLinearAttentionCache<T> cache() {
    return {phi_q.data(), phi_k.data(), kv.data(), z.data(), inv.data(), key_norm.data()};
  }
  void linear_forward() {
    causal_linear_attention_forward(out.data(), cache(), qkv.data(), omega.data(), layout, spec, m,
                                    scratch.data(), scratch_double.data());
  }
  // dqkv; with `particles`, ∂ℓ/∂Ω lands in domega (laid out as omega).
  std::vector<T> linear_backward(const std::vector<T>& dout, bool particles = false) {
    dqkv.assign(qkv.size(), T(0));
    domega.assign(omega.size(), T(0));
    causal_linear_attention_backward(dqkv.data(), dout.data(), out.data(), cache(), qkv.data(),
                                     omega.data(), layout, spec, m, scratch.data(),
                                     scratch_double.data(), particles ? domega.data() : nullptr);
    return dqkv;
  }
  void softmax_forward() {
    softmax_attention_forward(out.data(), lse.data(), qkv.data(), lengths.data(), layout,
                              scratch.data(), true);
  }
  std::vector<T> softmax_backward(const std::vector<T>& dout) {
    dqkv.assign(qkv.size(), T(0));
    softmax_attention_backward(dqkv.data(), dout.data(), out.data(), lse.data(), qkv.data(),
                               lengths.data(), layout, scratch.data(), true);
    return dqkv;
  }
  void uniform_forward() { causal_uniform_attention_forward(out.data(), qkv.data(), layout); }
  std::vector<T> uniform_backward(const std::vector<T>& dout) {
    dqkv.assign(qkv.size(), T(0));
    causal_uniform_attention_backward(dqkv.data(), dout.data(), layout);
    return dqkv;
  }
};

enum class Kind { linear, softmax, uniform };

template <class T>
void run_forward(CausalFixture<T>& f, Kind kind) {
  if (kind == Kind::linear) f.linear_forward();
  if (kind == Kind::softmax) f.softmax_forward();
  if (kind == Kind::uniform) f.uniform_forward();
}

template <class T>
std::vector<T> run_backward(CausalFixture<T>& f, Kind kind, const std::vector<T>& dout) {
  if (kind == Kind::linear) return f.linear_backward(dout);
  if (kind == Kind::softmax) return f.softmax_backward(dout);
  return f.uniform_backward(dout);
}

const char* kind_name(Kind kind) {
  return kind == Kind::linear ? "linear" : (kind == Kind::softmax ? "softmax" : "uniform");
}

// L = 150 spans two full chunks of kCausalChunk = 64 and a partial one.
constexpr int kLength = 150;
static_assert(kLength % kCausalChunk != 0 && kLength > 2 * kCausalChunk);

// φ of one point, written out from the formulas of attention_features.hpp without max-shifts
// (for favor exact only with ε = 0).
double feature(const FeatureMapSpec& spec, const double* omega, int m, int k,
               const Eigen::VectorXd& x) {
  const int d = static_cast<int>(x.size());
  auto dot = [&](int r) { return ConstVectorMap<double>(omega + r * d, d).dot(x); };
  switch (spec.kind) {
    case FeatureMapKind::favor:
      return std::exp(dot(k) - x.squaredNorm() / 2) + spec.epsilon;
    case FeatureMapKind::porf_softplus:
      return std::log1p(std::exp(dot(k)));
    case FeatureMapKind::softmaxfeat: {
      double total = 0.0;
      for (int r = 0; r < m; ++r) total += std::exp(dot(r));
      return std::exp(dot(k)) / total + spec.epsilon;
    }
    default:
      ADD_FAILURE() << "no reference for " << feature_map_name(spec.kind);
      return 0.0;
  }
}

struct Variant {
  FeatureMapKind kind;
  bool tied;
};

class CausalLinearAttention : public ::testing::TestWithParam<Variant> {};

TEST_P(CausalLinearAttention, EqualsTheExplicitSumOverEarlierPositions) {
  const auto [kind, tied] = GetParam();
  // favor needs ε = 0 for its max-shifts to cancel; the others carry ε in the reference. The
  // guard δ = 1e-12 is added to favor's shifted denominators, which at early positions, before the
  // largest keys, can be as small as 1e-3: hence a wider tolerance for favor.
  const bool favor = kind == FeatureMapKind::favor;
  const FeatureMapSpec spec{kind, favor ? 0.0 : 1e-3};
  const double tolerance = favor ? 1e-8 : 1e-10;
  CausalFixture<double> f({2, kLength, 3, 4, tied}, 5, spec, 51);
  f.linear_forward();
  const AttentionLayout& a = f.layout;
  const double s = 1.0 / std::sqrt(2.0);  // d_head^{-1/4} for d_head = 4
  double worst = 0.0;
  for (int b = 0; b < a.batch; ++b)
    for (int h = 0; h < a.heads; ++h) {
      const auto q = a.block(static_cast<const double*>(f.qkv.data()), b, h, 0);
      const auto k = a.block(static_cast<const double*>(f.qkv.data()), b, h, a.k_offset());
      const auto v = a.block(static_cast<const double*>(f.qkv.data()), b, h, a.v_offset());
      const double* om = f.omega.data() + h * f.m * a.head_size;
      Eigen::MatrixXd phi_q(f.m, a.length), phi_k(f.m, a.length);
      for (int i = 0; i < a.length; ++i)
        for (int r = 0; r < f.m; ++r) {
          phi_q(r, i) = feature(spec, om, f.m, r, s * q.col(i));
          phi_k(r, i) = feature(spec, om, f.m, r, s * k.col(i));
        }
      const auto got = a.output(static_cast<const double*>(f.out.data()), b, h);
      for (int i = 0; i < a.length; ++i) {
        Eigen::VectorXd numerator = Eigen::VectorXd::Zero(a.head_size);
        double denominator = 0.0;
        for (int j = 0; j <= i; ++j) {
          double kernel = 0.0;
          for (int r = 0; r < f.m; ++r) kernel += phi_q(r, i) * phi_k(r, j);
          numerator += kernel * v.col(j);
          denominator += kernel;
        }
        for (int r = 0; r < a.head_size; ++r) {
          const double expected = numerator(r) / denominator;
          worst = std::max(worst, std::abs(got(r, i) - expected) / (1 + std::abs(expected)));
          EXPECT_NEAR(got(r, i), expected, tolerance * (1 + std::abs(expected)))
              << feature_map_name(kind) << " b=" << b << " h=" << h << " i=" << i;
        }
      }
    }
  std::printf("  %s%s: worst relative deviation from the O(L^2) sum %.2e\n",
              feature_map_name(kind).c_str(), tied ? " tied" : "", worst);
}

TEST_P(CausalLinearAttention, BackwardMatchesFiniteDifferences) {
  const auto [kind, tied] = GetParam();
  // With ε = 0 the favor key shift cancels exactly, so treating it as a constant is exact; with
  // ε = 1e-6 it cancels up to O(ε) relative to the smallest features.
  const bool favor = kind == FeatureMapKind::favor;
  for (const double eps : favor ? std::vector<double>{0.0, 1e-6} : std::vector<double>{1e-6}) {
    CausalFixture<double> f({2, kLength, 2, 2, tied}, 3, {kind, eps}, 52);
    const auto g = random_vector(f.out.size(), 53);
    auto loss = [&] {
      f.linear_forward();
      return weighted_sum(f.out.data(), g);
    };
    loss();
    const auto dqkv = f.linear_backward(g);
    expect_gradient(f.qkv, dqkv, loss,
                    "causal dqkv " + feature_map_name(kind) + (tied ? " tied" : "") +
                        " eps=" + std::to_string(eps),
                    favor && eps > 0.0 ? 1e-4 : 1e-7);
  }
}

INSTANTIATE_TEST_SUITE_P(AllMaps, CausalLinearAttention,
                         ::testing::Values(Variant{FeatureMapKind::favor, false},
                                           Variant{FeatureMapKind::favor, true},
                                           Variant{FeatureMapKind::porf_softplus, false},
                                           Variant{FeatureMapKind::porf_softplus, true},
                                           Variant{FeatureMapKind::softmaxfeat, false},
                                           Variant{FeatureMapKind::softmaxfeat, true}));

// Keys normalised, φ(k)/‖φ(k)‖₂ and φ(k)/‖φ(k)‖₁: the chunked causal attention against the O(L²)
// sum written out, and its backward pass against finite differences.
TEST(CausalLinearAttention, NormalisedKeysEqualTheExplicitSumAndDifferentiate) {
  for (const auto& [kind, keys] : {std::pair{FeatureMapKind::favor, KeyNormalisation::l2},
                                   std::pair{FeatureMapKind::porf_softplus, KeyNormalisation::l1},
                                   std::pair{FeatureMapKind::softmaxfeat, KeyNormalisation::l2}}) {
    FeatureMapSpec spec{kind, kind == FeatureMapKind::favor ? 0.0 : 1e-3};
    spec.key_normalisation = keys;
    const std::string name = feature_map_name(kind) + " " + key_normalisation_name(keys);
    CausalFixture<double> f({1, kLength, 2, 4, false}, 5, spec, 54);
    f.linear_forward();
    const AttentionLayout& a = f.layout;
    const double s = 1.0 / std::sqrt(2.0);  // d_head^{-1/4} for d_head = 4
    for (int h = 0; h < a.heads; ++h) {
      const auto q = a.block(static_cast<const double*>(f.qkv.data()), 0, h, 0);
      const auto k = a.block(static_cast<const double*>(f.qkv.data()), 0, h, a.k_offset());
      const auto v = a.block(static_cast<const double*>(f.qkv.data()), 0, h, a.v_offset());
      const double* om = f.omega.data() + h * f.m * a.head_size;
      Eigen::MatrixXd phi_q(f.m, a.length), phi_k(f.m, a.length);
      for (int i = 0; i < a.length; ++i) {
        for (int r = 0; r < f.m; ++r) {
          phi_q(r, i) = feature(spec, om, f.m, r, s * q.col(i));
          phi_k(r, i) = feature(spec, om, f.m, r, s * k.col(i));
        }
        phi_k.col(i) /=
            keys == KeyNormalisation::l2 ? phi_k.col(i).norm() : phi_k.col(i).cwiseAbs().sum();
      }
      const auto got = a.output(static_cast<const double*>(f.out.data()), 0, h);
      for (int i = 0; i < a.length; ++i) {
        const Eigen::VectorXd kernel = phi_k.leftCols(i + 1).transpose() * phi_q.col(i);
        const Eigen::VectorXd expected = v.leftCols(i + 1) * kernel / kernel.sum();
        for (int r = 0; r < a.head_size; ++r)
          EXPECT_NEAR(got(r, i), expected(r), 1e-9 * (1 + std::abs(expected(r))))
              << name << " h=" << h << " i=" << i;
      }
    }
    CausalFixture<double> g({2, kLength, 2, 2, false}, 3, spec, 55);
    const auto weights = random_vector(g.out.size(), 56);
    auto loss = [&] {
      g.linear_forward();
      return weighted_sum(g.out.data(), weights);
    };
    loss();
    expect_gradient(g.qkv, g.linear_backward(weights), loss, "causal dqkv " + name, 1e-7);
  }
}

// The maps without particles (elu, dpfp) and with D_φ = 2r (hedgehog): m = D_φ, and the particle
// blocks of the heads have particle_rows(spec, m, d_head) rows.
TEST(CausalLinearAttention, BackwardMatchesFiniteDifferencesForTheOtherMaps) {
  for (const FeatureMapSpec spec :
       {FeatureMapSpec{FeatureMapKind::elu, 1e-6}, FeatureMapSpec{FeatureMapKind::dpfp, 1e-6, 2},
        FeatureMapSpec{FeatureMapKind::hedgehog, 1e-6}})
    for (bool tied : {false, true}) {
      const int hs = 3, m = feature_dimension(spec, 3, hs);
      CausalFixture<double> f({2, kLength, 2, hs, tied}, m, spec, 67);
      const auto g = random_vector(f.out.size(), 68);
      auto loss = [&] {
        f.linear_forward();
        return weighted_sum(f.out.data(), g);
      };
      loss();
      const auto dqkv = f.linear_backward(g);
      // dpfp is only piecewise smooth (relu), and its products that vanish leave some features
      // and denominators at the ε level: central differences are less accurate there (as for the
      // non-causal attention).
      const bool dpfp = spec.kind == FeatureMapKind::dpfp;
      expect_gradient(f.qkv, dqkv, loss,
                      "causal dqkv " + feature_map_name(spec.kind) + (tied ? " tied" : ""),
                      dpfp ? 1e-6 : 1e-7);
    }
}

// The projected maps (taylor; dpfp on u = s P x) with d′ below and above d_head = 3: dqkv and the
// projection's gradient dP of every head against finite differences, over L = 70 tokens (a full
// chunk and part of a second, so the state carried between chunks is differentiated too).
TEST(CausalLinearAttention, ProjectedMapsBackwardMatchesFiniteDifferences) {
  struct Projected {
    FeatureMapSpec spec;
    int d;  // d′
    bool tied;
  };
  constexpr int kShort = kCausalChunk + 6;
  for (const Projected& c : {Projected{{FeatureMapKind::taylor, 0.0}, 2, false},
                             Projected{{FeatureMapKind::taylor, 0.0}, 5, true},
                             Projected{{FeatureMapKind::dpfp, 1e-6, 1, true}, 2, true},
                             Projected{{FeatureMapKind::dpfp, 1e-6, 2, true}, 4, false},
                             Projected{{FeatureMapKind::dpfp, 1e-6, 3, true}, 2, false}}) {
    const int hs = 3, m = feature_dimension(c.spec, c.d, hs);
    CausalFixture<double> f({2, kShort, 2, hs, c.tied}, m, c.spec, 69);
    ASSERT_EQ(particle_rows(c.spec, m, hs), c.d);
    f.omega.resize(std::size_t(f.layout.heads) * c.d * hs);  // H blocks of P (d′, d_head)
    const auto g = random_vector(f.out.size(), 70);
    auto loss = [&] {
      f.linear_forward();
      return weighted_sum(f.out.data(), g);
    };
    loss();
    const auto dqkv = f.linear_backward(g, true);
    const std::vector<double> dp = f.domega;
    const bool dpfp = c.spec.kind == FeatureMapKind::dpfp;
    const std::string what = feature_map_name(c.spec.kind) +
                             (dpfp ? std::to_string(c.spec.dpfp_nu) + " projected" : "") +
                             " d'=" + std::to_string(c.d) + (c.tied ? " tied" : "");
    // dpfp: relu kinks and products that vanish leave some denominators small (as for the native
    // dpfp above), where the outputs curve enough to need h = 1e-6 (with h = 1e-5 the central
    // differences agree to 3e-6 only).
    const double tolerance = dpfp ? 1e-6 : 1e-7, h = dpfp ? 1e-6 : 1e-5;
    expect_gradient(f.omega, dp, loss, "causal dP " + what, tolerance, h);
    expect_gradient(f.qkv, dqkv, loss, "causal dqkv " + what, tolerance, h);
  }
}

// Replaces every token after position i of every sequence by new random numbers and checks that
// the outputs at positions ≤ i stay the same, to within `tolerance` (0: bit for bit).
void expect_causal(Kind kind, const FeatureMapSpec& spec, bool tied, double tolerance) {
  for (const int last : {0, kCausalChunk - 1, kCausalChunk, 100, kLength - 2}) {
    CausalFixture<double> f({2, kLength, 2, 4, tied}, 6, spec, 54);
    run_forward(f, kind);
    const std::vector<double> before = f.out;
    const AttentionLayout& a = f.layout;
    const auto noise = random_vector(f.qkv.size(), 55 + last);
    for (int b = 0; b < a.batch; ++b)
      for (int t = last + 1; t < a.length; ++t)
        for (int r = 0; r < a.qkv_rows(); ++r) {
          const std::size_t i = std::size_t(a.column(b) + t) * a.qkv_rows() + r;
          f.qkv[i] = noise[i];
        }
    run_forward(f, kind);
    double worst = 0.0;
    for (int b = 0; b < a.batch; ++b)
      for (int t = 0; t <= last; ++t)
        for (int r = 0; r < a.channels(); ++r) {
          const std::size_t i = std::size_t(a.column(b) + t) * a.channels() + r;
          worst = std::max(worst, std::abs(f.out[i] - before[i]) / (1 + std::abs(before[i])));
        }
    EXPECT_LE(worst, tolerance) << kind_name(kind) << " " << feature_map_name(spec.kind)
                                << " tokens after " << last << " changed";
  }
}

TEST(CausalAttention, OutputsDoNotDependOnLaterTokens) {
  for (bool tied : {false, true}) {
    expect_causal(Kind::linear, {FeatureMapKind::porf_softplus, 1e-6}, tied, 0.0);
    expect_causal(Kind::linear, {FeatureMapKind::softmaxfeat, 1e-6}, tied, 0.0);
    expect_causal(Kind::linear, {FeatureMapKind::taylor, 0.0}, tied, 0.0);  // m = 6: d′ = 2
    expect_causal(Kind::linear, {FeatureMapKind::dpfp, 1e-6, 1, true}, tied, 0.0);  // d′ = 3
    // The favor key shift is a maximum over the whole sequence: for ε = 0 it cancels up to
    // rounding and the guard δ = 1e-12 added to the shifted denominators.
    expect_causal(Kind::linear, {FeatureMapKind::favor, 0.0}, tied, 1e-9);
    expect_causal(Kind::softmax, {}, tied, 0.0);
    expect_causal(Kind::uniform, {}, tied, 0.0);
  }
}

// Causal and not, with padding: L = 150 spans three query and three key blocks, so the online
// softmax rescales what earlier key blocks added (and the causal diagonal tiles are masked).
TEST(CausalSoftmaxAttention, EqualsTheExplicitlyMaskedSoftmax) {
  for (bool causal : {true, false})
    for (bool tied : {false, true}) {
      CausalFixture<double> f({2, kLength, 2, 4, tied}, 1, {}, 56);
      f.lengths = {kLength, 100};
      softmax_attention_forward(f.out.data(), f.lse.data(), f.qkv.data(), f.lengths.data(),
                                f.layout, f.scratch.data(), causal);
      const AttentionLayout& a = f.layout;
      for (int b = 0; b < a.batch; ++b)
        for (int h = 0; h < a.heads; ++h) {
          const auto q = a.block(static_cast<const double*>(f.qkv.data()), b, h, 0);
          const auto k = a.block(static_cast<const double*>(f.qkv.data()), b, h, a.k_offset());
          const auto v = a.block(static_cast<const double*>(f.qkv.data()), b, h, a.v_offset());
          const auto got = a.output(static_cast<const double*>(f.out.data()), b, h);
          for (int i = 0; i < a.length; ++i) {
            const int keys = causal ? std::min(i + 1, f.lengths[b]) : f.lengths[b];
            Eigen::VectorXd p(keys);
            for (int j = 0; j < keys; ++j) p(j) = q.col(i).dot(k.col(j)) / 2.0;  // √d_head = 2
            const double shift = p.maxCoeff();
            p = (p.array() - shift).exp();
            const double total = p.sum();
            p /= total;
            const Eigen::VectorXd expected = v.leftCols(keys) * p;
            for (int r = 0; r < a.head_size; ++r)
              EXPECT_NEAR(got(r, i), expected(r), 1e-13 * (1 + std::abs(expected(r))))
                  << "causal=" << causal << " b=" << b << " h=" << h << " i=" << i;
            EXPECT_NEAR(f.lse[(b * a.heads + h) * a.length + i], shift + std::log(total), 1e-13)
                << "causal=" << causal << " b=" << b << " h=" << h << " i=" << i;
          }
        }
    }
}

TEST(CausalSoftmaxAttention, BackwardMatchesFiniteDifferencesWithPadding) {
  for (bool tied : {false, true}) {
    CausalFixture<double> f({2, kLength, 1, 2, tied}, 1, {}, 57);
    f.lengths = {kLength, 100};
    const auto g = random_vector(f.out.size(), 58);
    auto loss = [&] {
      f.softmax_forward();
      return weighted_sum(f.out.data(), g);
    };
    loss();
    const auto dqkv = f.softmax_backward(g);
    expect_gradient(f.qkv, dqkv, loss, tied ? "causal softmax dqkv tied" : "causal softmax dqkv");
  }
}

// The existing (non-causal) calls are unchanged by the default argument.
TEST(CausalSoftmaxAttention, DefaultIsNotCausal) {
  CausalFixture<double> f({1, 70, 1, 4, false}, 1, {}, 59);
  softmax_attention_forward(f.out.data(), f.lse.data(), f.qkv.data(), f.lengths.data(), f.layout,
                            f.scratch.data());
  const std::vector<double> full = f.out;
  f.softmax_forward();
  const int C = f.layout.channels();
  for (int r = 0; r < C; ++r) EXPECT_NE(full[r], f.out[r]);  // position 0 sees all keys, or one
  for (int r = 0; r < C; ++r)
    EXPECT_NEAR(full[69 * C + r], f.out[69 * C + r], 1e-13);  // the last position sees all keys
}

TEST(CausalUniformAttention, EveryPositionReceivesThePrefixMeanOfTheValues) {
  for (bool tied : {false, true}) {
    CausalFixture<double> f({2, kLength, 2, 3, tied}, 1, {}, 60);
    f.uniform_forward();
    const AttentionLayout& a = f.layout;
    for (int b = 0; b < a.batch; ++b)
      for (int h = 0; h < a.heads; ++h) {
        const auto v = a.block(static_cast<const double*>(f.qkv.data()), b, h, a.v_offset());
        const auto o = a.output(static_cast<const double*>(f.out.data()), b, h);
        for (int i = 0; i < a.length; ++i) {
          const Eigen::VectorXd mean = v.leftCols(i + 1).rowwise().mean();
          for (int r = 0; r < a.head_size; ++r) EXPECT_NEAR(o(r, i), mean(r), 1e-14);
        }
      }
  }
}

TEST(CausalUniformAttention, BackwardMatchesFiniteDifferencesAndLeavesQueriesAndKeysAlone) {
  for (bool tied : {false, true}) {
    CausalFixture<double> f({2, kLength, 2, 2, tied}, 1, {}, 61);
    const auto g = random_vector(f.out.size(), 62);
    auto loss = [&] {
      f.uniform_forward();
      return weighted_sum(f.out.data(), g);
    };
    loss();
    const auto dqkv = f.uniform_backward(g);
    expect_gradient(f.qkv, dqkv, loss, tied ? "causal uniform dqkv tied" : "causal uniform dqkv");
    const AttentionLayout& a = f.layout;
    for (int b = 0; b < a.batch; ++b)
      for (int h = 0; h < a.heads; ++h) {
        EXPECT_EQ(a.block(dqkv.data(), b, h, 0).norm(), 0.0);
        EXPECT_EQ(a.block(dqkv.data(), b, h, a.k_offset()).norm(), 0.0);
      }
  }
}

TEST(CausalAttention, SameResultsWithOneAndTwoThreads) {
  const int saved = max_threads();
  for (Kind kind : {Kind::linear, Kind::softmax, Kind::uniform})
    for (bool tied : {false, true}) {
      // One fixture for both thread counts: the same buffers at the same addresses (Eigen's
      // vectorised loops peel up to the first aligned element, so placement must not change).
      CausalFixture<double> f({2, kLength, 3, 4, tied}, 8, {FeatureMapKind::favor, 1e-6}, 63);
      const auto dout = random_vector(f.out.size(), 64);
      std::vector<double> out[2], dqkv[2];
      for (int threads : {1, 2}) {
        omp_set_num_threads(threads);
        run_forward(f, kind);
        out[threads - 1] = f.out;
        dqkv[threads - 1] = run_backward(f, kind, dout);
      }
      EXPECT_EQ(out[0], out[1]) << kind_name(kind);
      EXPECT_EQ(dqkv[0], dqkv[1]) << kind_name(kind);
    }
  omp_set_num_threads(saved);
}

// max |x − y| / max |y|.
template <class T>
double relative_difference(const std::vector<T>& x, const std::vector<double>& y) {
  double diff = 0.0, size = 0.0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    diff = std::max(diff, std::abs(static_cast<double>(x[i]) - y[i]));
    size = std::max(size, std::abs(y[i]));
  }
  return diff / size;
}

TEST(CausalAttention, FloatAgreesWithDouble) {
  const AttentionLayout layout{1, 600, 2, 8, false};
  for (Kind kind : {Kind::linear, Kind::softmax, Kind::uniform}) {
    CausalFixture<double> d(layout, 16, {FeatureMapKind::favor, 1e-6}, 65);
    CausalFixture<float> f(layout, 16, {FeatureMapKind::favor, 1e-6}, 65);
    const auto g = random_vector(d.out.size(), 66);
    const std::vector<float> g_float(g.begin(), g.end());
    run_forward(d, kind);
    run_forward(f, kind);
    const auto dqkv_double = run_backward(d, kind, g);
    const auto dqkv_float = run_backward(f, kind, g_float);
    const double out_error = relative_difference(f.out, d.out);
    const double gradient_error = relative_difference(dqkv_float, dqkv_double);
    std::printf("  %s float vs double: output %.2e, dqkv %.2e\n", kind_name(kind), out_error,
                gradient_error);
    EXPECT_LE(out_error, 1e-4) << kind_name(kind);
    EXPECT_LE(gradient_error, 1e-4) << kind_name(kind);
  }
}

}  // namespace
}  // namespace cpm
