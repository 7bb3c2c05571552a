// Attention: backward against finite differences (double), linear attention against the explicit
// φ(Q)φ(K)ᵀ-normalised attention computed the slow way, and padding that changes nothing.
#include <gtest/gtest.h>

#include <cmath>

#include "tests/transformer/finite_difference.hpp"
#include "transformer/linear_attention.hpp"
#include "transformer/softmax_attention.hpp"
#include "transformer/thread_index.hpp"
#include "transformer/uniform_attention.hpp"

namespace cpm {
namespace {

using testing::expect_gradient;
using testing::random_vector;
using testing::weighted_sum;

// Buffers for one attention call in double, sized for the layout.
struct AttentionFixture {
  AttentionLayout layout;
  int m;
  FeatureMapSpec spec;
  std::vector<int> lengths;
  std::vector<double> qkv, omega, out, lse, phi_q, phi_k, inv, key_norm, kv, z, scratch,
      scratch_double;

  AttentionFixture(AttentionLayout a, int m_, FeatureMapSpec s, std::vector<int> len,
                   std::uint64_t seed)
      : layout(a), m(m_), spec(s), lengths(std::move(len)) {
    const int N = a.batch * a.length, bh = a.batch * a.heads;
    qkv = random_vector(std::size_t(a.qkv_rows()) * N, seed);
    omega = random_vector(std::size_t(a.heads) * m * a.head_size, seed + 1);
    out.assign(std::size_t(a.channels()) * N, 0.0);
    lse.assign(std::size_t(bh) * a.length, 0.0);
    phi_q.assign(std::size_t(bh) * m * a.length, 0.0);
    phi_k = phi_q;
    inv.assign(std::size_t(bh) * a.length, 0.0);
    key_norm = inv;
    kv.assign(std::size_t(bh) * m * a.head_size, 0.0);
    z.assign(std::size_t(bh) * m, 0.0);
    scratch.assign(max_threads() * std::max(linear_attention_scratch(m, a.length, a.head_size),
                                            softmax_attention_scratch(a.head_size, a.length)),
                   0.0);
    scratch_double.assign(max_threads() * linear_attention_scratch_double(m, a.head_size), 0.0);
  }
  LinearAttentionCache<double> cache() {
    return {phi_q.data(), phi_k.data(), kv.data(), z.data(), inv.data(), key_norm.data()};
  }
  void linear_forward() {
    linear_attention_forward(out.data(), cache(), qkv.data(), omega.data(), lengths.data(), layout,
                             spec, m, scratch.data(), scratch_double.data());
  }
  std::vector<double> linear_backward(const std::vector<double>& dout) {
    std::vector<double> dqkv(qkv.size(), 0.0);
    linear_attention_backward(dqkv.data(), dout.data(), out.data(), cache(), qkv.data(),
                              omega.data(), lengths.data(), layout, spec, m, scratch.data(),
                              scratch_double.data());
    return dqkv;
  }
  void softmax_forward() {
    softmax_attention_forward(out.data(), lse.data(), qkv.data(), lengths.data(), layout,
                              scratch.data());
  }
  std::vector<double> softmax_backward(const std::vector<double>& dout) {
    std::vector<double> dqkv(qkv.size(), 0.0);
    softmax_attention_backward(dqkv.data(), dout.data(), out.data(), lse.data(), qkv.data(),
                               lengths.data(), layout, scratch.data());
    return dqkv;
  }
};

struct Variant {
  FeatureMapKind kind;
  bool tied;
};

class LinearAttentionGradient : public ::testing::TestWithParam<Variant> {};

TEST_P(LinearAttentionGradient, BackwardMatchesFiniteDifferencesWithPadding) {
  const auto [kind, tied] = GetParam();
  // With ε = 0 the favor max-shift cancels exactly, so treating it as a constant is exact; with
  // the default ε = 1e-6 it cancels up to O(ε) relative to the smallest features.
  for (const double eps : {0.0, 1e-6}) {
    AttentionFixture f({2, 5, 2, 3, tied}, 4, {kind, eps}, {5, 3}, 21);
    const auto g = random_vector(f.out.size(), 22);
    auto loss = [&] {
      f.linear_forward();
      return weighted_sum(f.out.data(), g);
    };
    loss();
    const auto dqkv = f.linear_backward(g);
    const bool shifted = kind == FeatureMapKind::favor && eps > 0.0;
    expect_gradient(f.qkv, dqkv, loss,
                    "dqkv " + feature_map_name(kind) + " eps=" + std::to_string(eps),
                    shifted ? 1e-4 : 1e-7);
  }
}

INSTANTIATE_TEST_SUITE_P(AllMaps, LinearAttentionGradient,
                         ::testing::Values(Variant{FeatureMapKind::favor, false},
                                           Variant{FeatureMapKind::favor, true},
                                           Variant{FeatureMapKind::porf_softplus, false},
                                           Variant{FeatureMapKind::porf_softplus, true},
                                           Variant{FeatureMapKind::softmaxfeat, false},
                                           Variant{FeatureMapKind::softmaxfeat, true}));

TEST(SoftmaxAttention, BackwardMatchesFiniteDifferencesWithPaddingUntiedAndTied) {
  for (bool tied : {false, true}) {
    AttentionFixture f({2, 66, 1, 2, tied}, 1, {}, {66, 20}, 23);  // 66 > one query block
    const auto g = random_vector(f.out.size(), 24);
    auto loss = [&] {
      f.softmax_forward();
      return weighted_sum(f.out.data(), g);
    };
    loss();
    const auto dqkv = f.softmax_backward(g);
    expect_gradient(f.qkv, dqkv, loss, tied ? "dqkv tied" : "dqkv");
  }
}

// φ of one point, written out from the formulas of attention_features.hpp without shifts.
double feature(FeatureMapKind kind, const double* omega, int m, int k,
               const std::vector<double>& x) {
  const int d = static_cast<int>(x.size());
  auto dot = [&](int r) {
    double s = 0.0;
    for (int a = 0; a < d; ++a) s += omega[r * d + a] * x[a];
    return s;
  };
  double norm2 = 0.0;
  for (double v : x) norm2 += v * v;
  switch (kind) {
    case FeatureMapKind::favor:
      return std::exp(dot(k) - norm2 / 2);
    case FeatureMapKind::porf_softplus:
      return std::log1p(std::exp(dot(k)));
    case FeatureMapKind::rff:
    case FeatureMapKind::elu:  // tested in attention_feature_maps_extra_test.cpp
    case FeatureMapKind::dpfp:
    case FeatureMapKind::hedgehog:
    case FeatureMapKind::taylor:
    case FeatureMapKind::rebased:
      return 0.0;
    case FeatureMapKind::softmaxfeat: {
      double total = 0.0;
      for (int r = 0; r < m; ++r) total += std::exp(dot(r));
      return std::exp(dot(k)) / total;
    }
  }
  return 0.0;
}

struct NormalisedVariant {
  FeatureMapKind kind;
  KeyNormalisation keys;
};

class KeyNormalisedAttention : public ::testing::TestWithParam<NormalisedVariant> {};

// φ(k)/‖φ(k)‖ in the forward and backward passes, padding included; taylor's features change sign
// (the l1 norm's sign(φ) term).
TEST_P(KeyNormalisedAttention, BackwardMatchesFiniteDifferencesWithPadding) {
  const auto [kind, keys] = GetParam();
  FeatureMapSpec spec{kind, 1e-6};
  spec.key_normalisation = keys;
  const int m = kind == FeatureMapKind::taylor ? 10 : kind == FeatureMapKind::hedgehog ? 8 : 4;
  AttentionFixture f({2, 5, 2, 3, false}, m, spec, {5, 3}, 31);
  const auto g = random_vector(f.out.size(), 32);
  auto loss = [&] {
    f.linear_forward();
    return weighted_sum(f.out.data(), g);
  };
  loss();
  const auto dqkv = f.linear_backward(g);
  expect_gradient(f.qkv, dqkv, loss,
                  "dqkv " + feature_map_name(kind) + " " + key_normalisation_name(keys),
                  kind == FeatureMapKind::favor ? 1e-4 : 1e-7);
}

INSTANTIATE_TEST_SUITE_P(
    NormalisedKeys, KeyNormalisedAttention,
    ::testing::Values(NormalisedVariant{FeatureMapKind::favor, KeyNormalisation::l2},
                      NormalisedVariant{FeatureMapKind::favor, KeyNormalisation::l1},
                      NormalisedVariant{FeatureMapKind::porf_softplus, KeyNormalisation::l2},
                      NormalisedVariant{FeatureMapKind::softmaxfeat, KeyNormalisation::l1},
                      NormalisedVariant{FeatureMapKind::hedgehog, KeyNormalisation::l2},
                      NormalisedVariant{FeatureMapKind::taylor, KeyNormalisation::l1},
                      NormalisedVariant{FeatureMapKind::taylor, KeyNormalisation::l2}));

TEST(LinearAttention, EqualsExplicitNormalisedKernelAttention) {
  for (const auto& [kind, keys] :
       {std::pair{FeatureMapKind::favor, KeyNormalisation::none},
        std::pair{FeatureMapKind::porf_softplus, KeyNormalisation::none},
        std::pair{FeatureMapKind::softmaxfeat, KeyNormalisation::none},
        std::pair{FeatureMapKind::favor, KeyNormalisation::l2},
        std::pair{FeatureMapKind::porf_softplus, KeyNormalisation::l1}}) {
    // ε = 0: the max-shifts must then cancel exactly.
    FeatureMapSpec spec{kind, 0.0};
    spec.key_normalisation = keys;
    AttentionFixture f({2, 6, 2, 4, false}, 5, spec, {6, 4}, 25);
    f.linear_forward();
    const AttentionLayout& a = f.layout;
    const double s = 1.0 / std::sqrt(2.0);  // d_head^{-1/4} for d_head = 4
    for (int b = 0; b < a.batch; ++b)
      for (int h = 0; h < a.heads; ++h) {
        const auto q = a.block(static_cast<const double*>(f.qkv.data()), b, h, 0);
        const auto k = a.block(static_cast<const double*>(f.qkv.data()), b, h, a.k_offset());
        const auto v = a.block(static_cast<const double*>(f.qkv.data()), b, h, a.v_offset());
        const double* om = f.omega.data() + h * f.m * a.head_size;
        const int len = f.lengths[b];
        Eigen::MatrixXd phi_q(f.m, a.length), phi_k(f.m, len);
        for (int i = 0; i < a.length; ++i) {
          std::vector<double> x(a.head_size);
          for (int r = 0; r < a.head_size; ++r) x[r] = s * q(r, i);
          for (int r = 0; r < f.m; ++r) phi_q(r, i) = feature(kind, om, f.m, r, x);
        }
        for (int j = 0; j < len; ++j) {
          std::vector<double> x(a.head_size);
          for (int r = 0; r < a.head_size; ++r) x[r] = s * k(r, j);
          for (int r = 0; r < f.m; ++r) phi_k(r, j) = feature(kind, om, f.m, r, x);
          if (keys == KeyNormalisation::l2) phi_k.col(j).normalize();
          if (keys == KeyNormalisation::l1) phi_k.col(j) /= phi_k.col(j).cwiseAbs().sum();
        }
        const Eigen::MatrixXd scores = phi_q.transpose() * phi_k;  // the explicit (L, len) matrix
        for (int i = 0; i < a.length; ++i) {
          const Eigen::VectorXd expected =
              v.leftCols(len) * scores.row(i).transpose() / scores.row(i).sum();
          const auto got = a.output(static_cast<const double*>(f.out.data()), b, h).col(i);
          for (int r = 0; r < a.head_size; ++r)
            EXPECT_NEAR(got(r), expected(r), 1e-11 * (1 + std::abs(expected(r))))
                << feature_map_name(kind) << " " << key_normalisation_name(keys) << " b=" << b
                << " h=" << h << " i=" << i;
        }
      }
  }
}

// The batched attention features agree with physics/random_feature_maps.hpp's FeatureMap (the map
// Phase A learns with): exactly for porf-softplus and softmaxfeat, and up to the per-point
// max-shift factor for favor.
TEST(AttentionFeatures, AgreeWithThePhysicsFeatureMaps) {
  const int d = 4, m = 6, n = 5;
  const auto x_values = random_vector(d * n, 41), omega = random_vector(m * d, 42);
  Eigen::MatrixXd x(n, d), particles(m, d);
  for (int j = 0; j < n; ++j)
    for (int a = 0; a < d; ++a) x(j, a) = x_values[j * d + a];
  for (int k = 0; k < m; ++k)
    for (int a = 0; a < d; ++a) particles(k, a) = omega[k * d + a];
  for (FeatureMapKind kind :
       {FeatureMapKind::favor, FeatureMapKind::porf_softplus, FeatureMapKind::softmaxfeat}) {
    const Eigen::MatrixXd reference = FeatureMap(kind).features(x, particles);  // (n, m)
    std::vector<double> phi(m * n);
    feature_map_forward<double>(
        {kind, 0.0}, phi.data(),
        ConstStridedMap<double>(x_values.data(), d, n, Eigen::OuterStride<>(d)), omega.data(), m,
        1.0, FeatureShift::per_column);
    for (int j = 0; j < n; ++j) {
      const double factor = kind == FeatureMapKind::favor ? reference.row(j).maxCoeff() : 1.0;
      for (int k = 0; k < m; ++k)
        EXPECT_NEAR(phi[j * m + k] * factor, reference(j, k),
                    1e-12 * (1 + std::abs(reference(j, k))))
            << feature_map_name(kind);
    }
  }
}

// A sequence of length 3 alone (L = 3) and inside a batch padded to L = 8 with garbage in the
// padding columns: the outputs at its three positions agree.
template <class Run>
void expect_padding_invariance(Run run, bool linear) {
  AttentionFixture alone({1, 3, 2, 4, false}, 6, {FeatureMapKind::favor, 1e-6}, {3}, 31);
  AttentionFixture padded({1, 8, 2, 4, false}, 6, {FeatureMapKind::favor, 1e-6}, {3}, 32);
  padded.omega = alone.omega;
  const int R = alone.layout.qkv_rows();
  for (int t = 0; t < 3; ++t)
    for (int r = 0; r < R; ++r) padded.qkv[t * R + r] = alone.qkv[t * R + r];
  run(alone);
  run(padded);
  const int C = alone.layout.channels();
  for (int t = 0; t < 3; ++t)
    for (int r = 0; r < C; ++r)
      EXPECT_NEAR(padded.out[t * C + r], alone.out[t * C + r], 1e-13)
          << (linear ? "linear" : "softmax");
}

TEST(AttentionPadding, PaddingDoesNotChangeOutputsAtNonPaddingPositions) {
  expect_padding_invariance([](AttentionFixture& f) { f.linear_forward(); }, true);
  expect_padding_invariance([](AttentionFixture& f) { f.softmax_forward(); }, false);
}

// The uniform control: every position of every head receives the mean of the sequence's values
// (padding excluded); it equals linear attention whose features are one constant (porf-softplus
// with all particles at 0: φ ≡ log 2), and only the values receive a gradient.
TEST(UniformAttention, EveryPositionReceivesTheMeanOfTheValues) {
  for (bool tied : {false, true}) {
    AttentionFixture f({2, 5, 2, 3, tied}, 4, {FeatureMapKind::porf_softplus, 0.0}, {5, 3}, 31);
    const AttentionLayout& a = f.layout;
    std::vector<double> out(f.out.size(), 0.0);
    uniform_attention_forward(out.data(), f.qkv.data(), f.lengths.data(), a);
    for (int b = 0; b < a.batch; ++b)
      for (int h = 0; h < a.heads; ++h) {
        const auto v = a.block(f.qkv.data(), b, h, a.v_offset());
        const auto o = a.output(out.data(), b, h);
        for (int r = 0; r < a.head_size; ++r) {
          double mean = 0.0;
          for (int j = 0; j < f.lengths[b]; ++j) mean += v(r, j);
          mean /= f.lengths[b];
          for (int i = 0; i < a.length; ++i) EXPECT_NEAR(o(r, i), mean, 1e-14);
        }
      }
    std::fill(f.omega.begin(), f.omega.end(), 0.0);  // φ ≡ softplus(0) = log 2
    f.linear_forward();
    for (std::size_t i = 0; i < out.size(); ++i) EXPECT_NEAR(f.out[i], out[i], 1e-12) << i;
  }
}

TEST(UniformAttention, BackwardMatchesFiniteDifferencesAndLeavesQueriesAndKeysAlone) {
  for (bool tied : {false, true}) {
    AttentionFixture f({2, 5, 2, 3, tied}, 1, {}, {5, 3}, 33);
    const auto g = random_vector(f.out.size(), 34);
    auto loss = [&] {
      uniform_attention_forward(f.out.data(), f.qkv.data(), f.lengths.data(), f.layout);
      return weighted_sum(f.out.data(), g);
    };
    loss();
    std::vector<double> dqkv(f.qkv.size(), 0.0);
    uniform_attention_backward(dqkv.data(), g.data(), f.lengths.data(), f.layout);
    expect_gradient(f.qkv, dqkv, loss, tied ? "uniform dqkv tied" : "uniform dqkv");
    const AttentionLayout& a = f.layout;
    for (int b = 0; b < a.batch; ++b)
      for (int h = 0; h < a.heads; ++h) {
        EXPECT_EQ(a.block(dqkv.data(), b, h, 0).norm(), 0.0);
        EXPECT_EQ(a.block(dqkv.data(), b, h, a.k_offset()).norm(), 0.0);
      }
  }
}

}  // namespace
}  // namespace cpm
