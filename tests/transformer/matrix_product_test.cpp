// The register-tiled product of transformer/matrix_product.hpp against plain sums, over shapes
// that exercise full tiles, single columns and the scalar rows, with B column-major or given by
// its transpose, assigning, accumulating and starting from a bias.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "tests/transformer/random_values.hpp"
#include "transformer/attention_feature_maps.hpp"
#include "transformer/matrix_product.hpp"
#include "transformer/tensor_map.hpp"

namespace cpm {
namespace {

using testing::random_values;

// C (m, n) inside a buffer with leading dimension m + 3, A with m + 5, B with k + 2 (column-major)
// or n + 1 (transposed): padding that a wrong stride would read.
template <class T>
void expect_product_correct(int m, int n, int k, bool transposed_b, bool accumulate, bool with_bias,
                            double tol) {
  const std::ptrdiff_t lda = m + 5, ldc = m + 3, ldb = transposed_b ? n + 1 : k + 2;
  const auto a = random_values<T>(lda * k, 1);
  const auto b = random_values<T>(ldb * (transposed_b ? k : n), 2);
  auto c = random_values<T>(ldc * n, 3);
  const auto bias = random_values<T>(m, 4);
  const auto before = c;
  const std::ptrdiff_t b_row = transposed_b ? ldb : 1, b_col = transposed_b ? 1 : ldb;
  multiply(c.data(), ldc, a.data(), lda, b.data(), b_row, b_col, m, n, k, accumulate,
           with_bias ? bias.data() : nullptr);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < ldc; ++i) {
      if (i >= m) {
        EXPECT_EQ(c[i + j * ldc], before[i + j * ldc]) << "padding row " << i << " written";
        continue;
      }
      long double sum = accumulate ? before[i + j * ldc] : with_bias ? bias[i] : 0.0L;
      for (int q = 0; q < k; ++q)
        sum += static_cast<long double>(a[i + q * lda]) * b[q * b_row + j * b_col];
      EXPECT_NEAR(c[i + j * ldc], static_cast<double>(sum), tol * (1 + k))
          << m << " x " << n << " x " << k << " at (" << i << ", " << j << ")";
    }
}

TEST(MatrixProduct, MatchesPlainSumsOnTilesColumnsAndScalarRows) {
  // m: below one register, one register plus a few rows, two full tile rows plus a remainder; n:
  // single columns, whole tiles and a remainder; k = 0 leaves C (accumulate) or zeroes it.
  for (const int m : {1, 7, 19, 64, 77})
    for (const int n : {1, 5, 13, 64})
      for (const int k : {0, 1, 16, 33})
        for (const bool transposed_b : {false, true})
          for (const bool accumulate : {false, true}) {
            expect_product_correct<double>(m, n, k, transposed_b, accumulate, false, 1e-15);
            expect_product_correct<float>(m, n, k, transposed_b, accumulate, false, 2e-6);
          }
}

// Every element of the transposed copy is factor · in(i, j) exactly (one product each), or with
// `accumulate` its earlier value plus that product in one step of a product chain (chain_step),
// over shapes with full 8 × 8 register blocks, edge strips on either side and padded leading
// dimensions whose padding must stay untouched.
template <class T>
void expect_transposed_copy_exact(int rows, int cols, bool accumulate) {
  const std::ptrdiff_t ld_in = rows + 3, ld_out = cols + 5;
  const auto in = random_values<T>(ld_in * cols, 5);
  const auto before = random_values<T>(ld_out * rows, 6);
  auto out = before;
  const T factor = static_cast<T>(0.37);
  copy_transposed(out.data(), ld_out, in.data(), ld_in, rows, cols, factor, accumulate);
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < ld_out; ++j) {
      const T was = before[j + i * ld_out];
      const T expected = j >= cols ? was
                         : accumulate
                             ? matrix_product_detail::chain_step(factor, in[i + j * ld_in], was)
                             : factor * in[i + j * ld_in];
      ASSERT_EQ(out[j + i * ld_out], expected)
          << rows << " x " << cols << " at (" << j << ", " << i << ")";
    }
}

TEST(MatrixProduct, TransposedCopyAndSumAreExactOnBlocksAndEdges) {
  for (const int rows : {1, 7, 8, 9, 16, 23, 64})
    for (const int cols : {1, 5, 8, 13, 16, 64, 70}) {
      for (const bool accumulate : {false, true}) {
        expect_transposed_copy_exact<float>(rows, cols, accumulate);
        expect_transposed_copy_exact<double>(rows, cols, accumulate);
      }
    }
}

// C = b 1ᵀ + A·B: each row starts from its bias.
TEST(MatrixProduct, StartsFromTheRowBias) {
  for (const int m : {7, 19, 77})
    for (const bool transposed_b : {false, true}) {
      expect_product_correct<double>(m, 13, 16, transposed_b, false, true, 1e-15);
      expect_product_correct<float>(m, 13, 16, transposed_b, false, true, 2e-6);
    }
}

// An element's value does not depend on where the tiling puts it: the same row computed as part
// of a full tile, alone, or in the scalar rows gives the same bits.
TEST(MatrixProduct, ElementDoesNotDependOnTiling) {
  const int m = 70, n = 11, k = 29;
  const auto a = random_values<float>(m * k, 4), b = random_values<float>(k * n, 5);
  std::vector<float> whole(m * n), part(m * n);
  multiply(whole.data(), m, a.data(), m, b.data(), 1, k, m, n, k, false);
  for (int i = 0; i < m; ++i)  // every row as a 1-row product
    multiply(part.data() + i, m, a.data() + i, m, b.data(), 1, k, 1, n, k, false);
  EXPECT_EQ(whole, part);
  for (int j = 0; j < n; ++j)  // every column alone
    multiply(part.data() + j * m, m, a.data(), m, b.data() + j * k, 1, k, m, 1, k, false);
  EXPECT_EQ(whole, part);
}

// A long inner index runs in pieces of kInnerBlock, each continuing the stored chain of the one
// before: every element has the bits of one chain of chain_step over κ in order, from zero, the
// bias or C's earlier value.
TEST(MatrixProduct, LongInnerIndexKeepsOneChainPerElement) {
  const int k = 2 * matrix_product_detail::kInnerBlock + 37;
  for (const int m : {19, 64})
    for (const bool transposed_b : {false, true})
      for (const int start : {0, 1, 2}) {  // zero, accumulate, bias
        const int n = 13;
        const auto a = random_values<float>(std::size_t(m) * k, 7);
        const auto b = random_values<float>(std::size_t(k) * n, 8);
        const auto bias = random_values<float>(m, 9);
        auto c = random_values<float>(std::size_t(m) * n, 10);
        const auto before = c;
        const std::ptrdiff_t b_row = transposed_b ? n : 1, b_col = transposed_b ? 1 : k;
        multiply(c.data(), m, a.data(), m, b.data(), b_row, b_col, m, n, k, start == 1,
                 start == 2 ? bias.data() : nullptr);
        for (int j = 0; j < n; ++j)
          for (int i = 0; i < m; ++i) {
            float sum = start == 1 ? before[i + j * m] : start == 2 ? bias[i] : 0.0f;
            for (int q = 0; q < k; ++q)
              sum = matrix_product_detail::chain_step(a[i + q * m], b[q * b_row + j * b_col], sum);
            ASSERT_EQ(c[i + j * m], sum)
                << m << " rows, start " << start << " at (" << i << ", " << j << ")";
          }
      }
}

// multiply_then stores epilogue(sums, i, j) for each register: the same bits as the plain
// product followed by the map, with (i, j) the register's first row and its column, over full
// tiles, single columns, one-register row panels and the pieces of a long inner index.
TEST(MatrixProduct, EpilogueSeesEveryRegisterOnceWithItsPosition) {
  using Batch = xsimd::batch<float>;
  constexpr int width = Batch::size;
  for (const int m : {width, 3 * width, 4 * width})
    for (const int n : {1, 13})
      for (const int k : {16, 2 * matrix_product_detail::kInnerBlock + 37}) {
        const std::ptrdiff_t ldc = m + 3;
        const auto a = random_values<float>(std::size_t(m) * k, 11);
        const auto b = random_values<float>(std::size_t(k) * n, 12);
        const auto row_shift = random_values<float>(m, 13);
        std::vector<float> plain(ldc * n, 0.0f), mapped(ldc * n, -7.0f);
        multiply(plain.data(), ldc, a.data(), m, b.data(), 1, k, m, n, k, false);
        std::vector<int> calls(std::size_t(m / width) * n, 0);
        multiply_then(mapped.data(), ldc, a.data(), m, b.data(), 1, k, m, n, k,
                      [&](const Batch& sums, int i, int j) {
                        ++calls[i / width + std::size_t(m / width) * j];
                        return sums * Batch::load_unaligned(row_shift.data() + i) + float(j);
                      });
        for (int j = 0; j < n; ++j) {
          for (int i = 0; i < m; ++i)
            ASSERT_EQ(mapped[i + j * ldc], plain[i + j * ldc] * row_shift[i] + float(j))
                << m << " x " << n << " x " << k << " at (" << i << ", " << j << ")";
          for (int i = m; i < ldc; ++i) ASSERT_EQ(mapped[i + j * ldc], -7.0f) << "padding written";
        }
        for (const int c : calls) ASSERT_EQ(c, 1);
      }
}

TEST(MatrixProduct, EigenBlocksMatchEigenProducts) {
  Matrix<double> a = Matrix<double>::Random(40, 24), b = Matrix<double>::Random(24, 30);
  Matrix<double> c(40, 30);
  multiply(c.middleCols(0, 30), a, b);
  EXPECT_LT((c - a * b).norm(), 1e-13);
  Matrix<double> bt = b.transpose();
  multiply_transposed(c.middleCols(3, 20), a, bt.middleRows(3, 20), true);
  Matrix<double> expected = a * b;
  expected.middleCols(3, 20) += a * b.middleCols(3, 20);
  EXPECT_LT((c - expected).norm(), 1e-13);
}

// s Ω x through the stack pieces of s Ω: several pieces of rows (d = 16, 300 rows) and several
// pieces along d (d = kProjectionPiece + 5), against plain sums.
TEST(MatrixProduct, FeatureProjectionMatchesPlainSumsAcrossPieces) {
  for (const auto& [rows, d] : {std::pair{300, 16}, std::pair{3, kProjectionPiece + 5}}) {
    const int n = 7, ld = d + 2;
    const double s = 0.7;
    const auto omega = random_values<double>(std::size_t(rows) * d, 6);
    const auto x = random_values<double>(std::size_t(ld) * n, 7);
    std::vector<double> y(std::size_t(rows + 1) * n, 5.0);
    project_features(y.data(), rows + 1, omega.data(), rows,
                     ConstStridedMap<double>(x.data(), d, n, Eigen::OuterStride<>(ld)), s);
    for (int j = 0; j < n; ++j) {
      EXPECT_EQ(y[rows + j * (rows + 1)], 5.0) << "padding row written";
      for (int r = 0; r < rows; ++r) {
        double sum = 0;
        for (int b = 0; b < d; ++b) sum += s * omega[std::size_t(r) * d + b] * x[b + j * ld];
        EXPECT_NEAR(y[r + j * (rows + 1)], sum, 1e-12 * d) << rows << " x " << d;
      }
    }
  }
}

}  // namespace
}  // namespace cpm
