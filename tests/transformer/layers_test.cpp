// Every layer's backward against central finite differences of its forward, in double precision.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <type_traits>
#include <vector>

#include "tests/transformer/finite_difference.hpp"
#include "tests/transformer/random_values.hpp"
#include "transformer/cross_entropy.hpp"
#include "transformer/dropout.hpp"
#include "transformer/embedding.hpp"
#include "transformer/gelu.hpp"
#include "transformer/layer_norm.hpp"
#include "transformer/linear_layer.hpp"
#include "transformer/mean_pooling.hpp"

namespace cpm {
namespace {

using testing::expect_gradient;
using testing::random_vector;
using testing::weighted_sum;

// y = W x + b against the plain sums, and every gradient against finite differences.
void expect_linear_layer_correct(int n, int c, int oc) {
  auto x = random_vector(c * n, 1), w = random_vector(oc * c, 2), b = random_vector(oc, 3);
  const auto g = random_vector(oc * n, 4);
  std::vector<double> y(oc * n), dx(c * n), dw(oc * c, 0.0), db(oc, 0.0);
  std::vector<double> scratch(linear_backward_scratch(c, oc));
  auto loss = [&] {
    linear_forward(y.data(), x.data(), w.data(), b.data(), n, c, oc, scratch.data());
    return weighted_sum(y.data(), g);
  };
  loss();
  for (int t = 0; t < n; ++t)
    for (int o = 0; o < oc; ++o) {
      double sum = b[o];
      for (int i = 0; i < c; ++i) sum += w[o * c + i] * x[t * c + i];
      EXPECT_NEAR(y[t * oc + o], sum, 1e-13) << "output " << o << " of token " << t;
    }
  linear_backward(dx.data(), dw.data(), db.data(), g.data(), x.data(), w.data(), n, c, oc,
                  scratch.data());
  expect_gradient(x, dx, loss, "dx");
  expect_gradient(w, dw, loss, "dW");
  expect_gradient(b, db, loss, "db");
}

TEST(TransformerLayers, LinearBackwardMatchesFiniteDifferences) {
  expect_linear_layer_correct(5, 4, 3);  // chunks of tokens
}

// A vocabulary head over a few scored positions (outputs ≥ 4 × tokens) runs in chunks of
// output rows, with din added from per-chunk partial products.
TEST(TransformerLayers, LinearWithManyMoreOutputsThanTokensMatchesFiniteDifferences) {
  expect_linear_layer_correct(3, 4, 43);
  expect_linear_layer_correct(1, 4, 5);  // some chunks without rows
}

// Outputs and output gradients whose columns lie further apart than OC (the decoder's padded
// logits): the same values as packed columns, for chunks of tokens and for a vocabulary head.
void expect_strided_columns_give_packed_values(int n, int c, int oc) {
  const std::ptrdiff_t ld = oc + 3;
  const auto x = random_vector(c * n, 1), w = random_vector(oc * c, 2), b = random_vector(oc, 3);
  const auto g = random_vector(oc * n, 4);
  std::vector<double> scratch(linear_backward_scratch(c, oc));
  std::vector<double> y(oc * n), y_strided(ld * n), g_strided(ld * n);
  linear_forward(y.data(), x.data(), w.data(), b.data(), n, c, oc, scratch.data());
  linear_forward(y_strided.data(), x.data(), w.data(), b.data(), n, c, oc, scratch.data(),
                 static_cast<const double*>(nullptr), ld);
  for (int t = 0; t < n; ++t)
    for (int o = 0; o < oc; ++o) {
      EXPECT_EQ(y_strided[t * ld + o], y[t * oc + o]) << "output " << o << " of token " << t;
      g_strided[t * ld + o] = g[t * oc + o];
    }
  std::vector<double> dx(c * n), dw(oc * c, 0.0), db(oc, 0.0);
  std::vector<double> dx_s(c * n), dw_s(oc * c, 0.0), db_s(oc, 0.0);
  linear_backward(dx.data(), dw.data(), db.data(), g.data(), x.data(), w.data(), n, c, oc,
                  scratch.data());
  linear_backward(dx_s.data(), dw_s.data(), db_s.data(), g_strided.data(), x.data(), w.data(), n, c,
                  oc, scratch.data(), ld);
  EXPECT_EQ(dx_s, dx);
  EXPECT_EQ(dw_s, dw);
  EXPECT_EQ(db_s, db);
}

TEST(TransformerLayers, LinearWithStridedColumnsGivesThePackedValues) {
  expect_strided_columns_give_packed_values(5, 4, 3);   // chunks of tokens
  expect_strided_columns_give_packed_values(3, 4, 43);  // chunks of output rows
}

// A head whose slices of 1,024 float (512 double) rows are copied with a padded leading dimension
// (padded_leading_dimension): the same outputs as the plain sums.
template <class T>
void expect_padded_head_forward(int oc) {
  const int n = 2, c = 3;
  const auto x = testing::random_values<T>(std::size_t(c) * n, 1);
  const auto w = testing::random_values<T>(std::size_t(oc) * c, 2);
  const auto b = testing::random_values<T>(oc, 3);
  ASSERT_NE(padded_leading_dimension<T>(oc / kTokenChunks), oc / kTokenChunks);
  const double tolerance = std::is_same_v<T, float> ? 1e-5 : 1e-13;
  std::vector<T> y(std::size_t(oc) * n), scratch(linear_backward_scratch(c, oc));
  linear_forward(y.data(), x.data(), w.data(), b.data(), n, c, oc, scratch.data());
  for (int t = 0; t < n; ++t)
    for (int o = 0; o < oc; ++o) {
      double sum = b[o];
      for (int i = 0; i < c; ++i) sum += double(w[o * c + i]) * x[t * c + i];
      ASSERT_NEAR(y[t * oc + o], sum, tolerance) << "output " << o << " of token " << t;
    }
}

TEST(TransformerLayers, HeadWithPaddedSlicesMatchesPlainSums) {
  expect_padded_head_forward<float>(8 * 1024);
  expect_padded_head_forward<double>(8 * 512);
}

TEST(TransformerLayers, LayerNormBackwardMatchesFiniteDifferences) {
  const int n = 4, c = 7;
  auto x = random_vector(c * n, 5), w = random_vector(c, 6), b = random_vector(c, 7);
  const auto g = random_vector(c * n, 8);
  std::vector<double> y(c * n), mean(n), rstd(n), dx(c * n, 0.0), dw(c, 0.0), db(c, 0.0);
  auto loss = [&] {
    layer_norm_forward(y.data(), mean.data(), rstd.data(), x.data(), w.data(), b.data(), n, c);
    return weighted_sum(y.data(), g);
  };
  loss();
  std::vector<double> scratch(layer_norm_backward_scratch(c));
  layer_norm_backward(dx.data(), dw.data(), db.data(), g.data(), x.data(), w.data(), mean.data(),
                      rstd.data(), n, c, scratch.data());
  expect_gradient(x, dx, loss, "dx");
  expect_gradient(w, dw, loss, "dw");
  expect_gradient(b, db, loss, "db");
}

// The layer norm in float (its statistics summed in registers of floats) against the same inputs
// in double, with a full register of channels and a remainder: outputs, cached statistics and
// every gradient within float rounding.
TEST(TransformerLayers, LayerNormInFloatMatchesDouble) {
  for (const int c : {64, 20, 5}) {
    const int n = 37;
    const auto x = testing::random_values<double>(std::size_t(c) * n, 21);
    const auto w = testing::random_values<double>(c, 22), b = testing::random_values<double>(c, 23);
    const auto dy = testing::random_values<double>(std::size_t(c) * n, 24);
    const auto run = [&](auto zero) {
      using T = decltype(zero);
      const auto in = [](const std::vector<double>& v) {
        return std::vector<T>(v.begin(), v.end());
      };
      std::vector<T> y(x.size()), mean(n), rstd(n), dx(x.size(), T(0.5)), dw(c, T(0)), db(c, T(0));
      std::vector<T> scratch(layer_norm_backward_scratch(c));
      const auto xt = in(x), wt = in(w), bt = in(b), dyt = in(dy);
      layer_norm_forward(y.data(), mean.data(), rstd.data(), xt.data(), wt.data(), bt.data(), n, c);
      layer_norm_backward(dx.data(), dw.data(), db.data(), dyt.data(), xt.data(), wt.data(),
                          mean.data(), rstd.data(), n, c, scratch.data());
      std::vector<double> all;
      for (const auto* v : {&y, &mean, &rstd, &dx, &dw, &db})
        all.insert(all.end(), v->begin(), v->end());
      return all;
    };
    const std::vector<double> in_float = run(0.0f), in_double = run(0.0);
    ASSERT_EQ(in_float.size(), in_double.size());
    for (std::size_t i = 0; i < in_double.size(); ++i)
      ASSERT_NEAR(in_float[i], in_double[i], 2e-5 * (1.0 + std::abs(in_double[i])))
          << "entry " << i << " of y | mean | rstd | dx | dw | db, C = " << c;
  }
}

// The backward passes of the linear layer (both ways of chunking) and of the layer norm add their
// chunks' partial gradients in chunk order: 1, 2 and 3 threads give the same bits.
TEST(TransformerLayers, LinearAndLayerNormGradientsDoNotDependOnTheThreadCount) {
  const int saved = omp_get_max_threads();
  const auto gradients = [](int n, int c, int oc) {
    const auto x = random_vector(c * n, 11), w = random_vector(oc * c, 12);
    const auto g = random_vector(oc * n, 13), gc = random_vector(c * n, 14);
    const auto lw = random_vector(c, 15), lb = random_vector(c, 16);
    std::vector<double> dx(c * n), dw(oc * c, 0.5), db(oc, 0.25), y(c * n), mean(n), rstd(n);
    std::vector<double> ldx(c * n, 0.0), ldw(c, 0.0), ldb(c, 0.0);
    std::vector<double> scratch(
        std::max(linear_backward_scratch(c, oc), layer_norm_backward_scratch(c)));
    linear_backward(dx.data(), dw.data(), db.data(), g.data(), x.data(), w.data(), n, c, oc,
                    scratch.data());
    layer_norm_forward(y.data(), mean.data(), rstd.data(), x.data(), lw.data(), lb.data(), n, c);
    layer_norm_backward(ldx.data(), ldw.data(), ldb.data(), gc.data(), x.data(), lw.data(),
                        mean.data(), rstd.data(), n, c, scratch.data());
    for (const auto* v : {&dw, &db, &ldx, &ldw, &ldb}) dx.insert(dx.end(), v->begin(), v->end());
    return dx;
  };
  for (const auto& [n, c, oc] : {std::array<int, 3>{37, 20, 9}, std::array<int, 3>{5, 6, 40}}) {
    omp_set_num_threads(1);
    const auto reference = gradients(n, c, oc);
    for (int threads : {2, 3}) {
      omp_set_num_threads(threads);
      EXPECT_EQ(gradients(n, c, oc), reference) << threads << " threads, " << n << " tokens";
    }
  }
  omp_set_num_threads(saved);
}

TEST(TransformerLayers, GeluBackwardMatchesFiniteDifferences) {
  auto x = random_vector(40, 9, 2.0);
  const auto g = random_vector(40, 10);
  std::vector<double> y(40), dx(40);
  auto loss = [&] {
    gelu_forward(y.data(), x.data(), 40);
    return weighted_sum(y.data(), g);
  };
  gelu_backward(dx.data(), x.data(), g.data(), 40);
  expect_gradient(x, dx, loss, "dx");
}

TEST(TransformerLayers, GeluMatchesTheTanhFormulaAtKnownPoints) {
  const double x[3] = {-1.0, 0.0, 2.0};
  double y[3];
  gelu_forward(y, x, 3);
  EXPECT_NEAR(y[0], -0.15880800939172324, 1e-12);  // PyTorch gelu(-1, approximate="tanh")
  EXPECT_EQ(y[1], 0.0);
  EXPECT_NEAR(y[2], 1.9545976940871754, 1e-12);
}

TEST(TransformerLayers, EmbeddingBackwardMatchesFiniteDifferences) {
  const int vocab = 5, L = 3, B = 2, c = 4;
  auto wte = random_vector(vocab * c, 11), wpe = random_vector(L * c, 12);
  const int tokens[B * L] = {1, 4, 1, 0, 2, 4};
  const auto g = random_vector(c * B * L, 13);
  std::vector<double> y(c * B * L), dwte(vocab * c, 0.0), dwpe(L * c, 0.0);
  auto loss = [&] {
    embedding_forward(y.data(), tokens, wte.data(), wpe.data(), B, L, c);
    return weighted_sum(y.data(), g);
  };
  embedding_backward(dwte.data(), dwpe.data(), g.data(), tokens, B, L, c);
  expect_gradient(wte, dwte, loss, "dwte");
  expect_gradient(wpe, dwpe, loss, "dwpe");
}

// A null position table: the tokens' rows alone.
TEST(TransformerLayers, EmbeddingWithoutPositionsIsTheTokenRow) {
  const int vocab = 5, L = 3, B = 2, c = 4;
  auto wte = random_vector(vocab * c, 11);
  const int tokens[B * L] = {1, 4, 1, 0, 2, 4};
  const auto g = random_vector(c * B * L, 13);
  std::vector<double> y(c * B * L), dwte(vocab * c, 0.0);
  auto loss = [&] {
    embedding_forward(y.data(), tokens, wte.data(), static_cast<const double*>(nullptr), B, L, c);
    return weighted_sum(y.data(), g);
  };
  loss();
  for (int n = 0; n < B * L; ++n)
    for (int i = 0; i < c; ++i) EXPECT_EQ(y[n * c + i], wte[tokens[n] * c + i]);
  embedding_backward(dwte.data(), static_cast<double*>(nullptr), g.data(), tokens, B, L, c);
  expect_gradient(wte, dwte, loss, "dwte");
}

TEST(TransformerLayers, MeanPoolingBackwardMatchesFiniteDifferencesAndIgnoresPadding) {
  const int B = 2, L = 4, c = 3;
  const int lengths[B] = {4, 2};
  auto x = random_vector(c * B * L, 14);
  const auto g = random_vector(c * B, 15);
  std::vector<double> y(c * B), dx(c * B * L);
  auto loss = [&] {
    mean_pooling_forward(y.data(), x.data(), lengths, B, L, c);
    return weighted_sum(y.data(), g);
  };
  mean_pooling_backward(dx.data(), g.data(), lengths, B, L, c);
  expect_gradient(x, dx, loss, "dx");
  for (int t = 2; t < L; ++t)
    for (int i = 0; i < c; ++i) EXPECT_EQ(dx[(1 * L + t) * c + i], 0.0);
}

TEST(TransformerLayers, CrossEntropyBackwardMatchesFiniteDifferences) {
  const int B = 3, K = 4;
  auto z = random_vector(K * B, 16, 3.0);
  const int labels[B] = {2, 0, 3};
  std::vector<double> p(K * B), dz(K * B), row_loss(B);
  auto loss = [&] {
    return cross_entropy_forward(p.data(), z.data(), labels, B, K, row_loss.data());
  };
  loss();
  cross_entropy_backward(dz.data(), p.data(), labels, B, K);
  expect_gradient(z, dz, loss, "dlogits");
}

}  // namespace
}  // namespace cpm

namespace cpm {
namespace {

TEST(TransformerLayers, DropoutKeepsOneMinusPScaledByItsInverseAndRepeatsPerStep) {
  const int n = 200, c = 64;
  std::vector<float> mask(n * c), again(n * c), next(n * c);
  dropout_mask(mask.data(), 0.25, 7, 3, 11, n, c);
  dropout_mask(again.data(), 0.25, 7, 3, 11, n, c);
  dropout_mask(next.data(), 0.25, 7, 3, 12, n, c);
  double kept = 0.0, mean = 0.0;
  for (float m : mask) {
    EXPECT_TRUE(m == 0.0f || std::abs(m - 1.0f / 0.75f) < 1e-6f);
    kept += m != 0.0f;
    mean += m;
  }
  EXPECT_NEAR(kept / mask.size(), 0.75, 0.015);  // 12,800 draws: 4σ ≈ 0.015
  EXPECT_NEAR(mean / mask.size(), 1.0, 0.02);
  EXPECT_EQ(mask, again);
  EXPECT_NE(mask, next);
}

}  // namespace
}  // namespace cpm
