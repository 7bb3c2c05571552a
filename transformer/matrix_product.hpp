#pragma once
// C = A·B or C += A·B for the small and thin matrices of a training step (the 64 × 64 tiles of a
// causal attention chunk, d_model × tokens linear layers), without the packing a general GEMM
// does first. A and C are column-major, so a register tile of C is a few full vector registers of
// rows by a few columns: each step over the inner index loads the tile's rows of one column of A
// and broadcasts one element of B per tile column, with one FMA per register. At these sizes A's
// columns and B's rows stay in L1/L2, and the packing and zero-filling of Eigen's products cost
// as much as the multiplications.
// Every element is one chain of FMAs (products and sums without FMA) over the inner index in
// increasing order, the same in a register tile and in the scalar edge, so its value depends on A,
// B and its own position, not on the tiling or on which thread computes it.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <xsimd/xsimd.hpp>
#pragma GCC diagnostic pop

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <type_traits>
#ifdef __AVX__
#include <immintrin.h>
#endif

namespace cpm {

namespace matrix_product_detail {

// One step of an element's chain as xsimd::fma takes it in the registers: fused where the
// instruction set has FMA, a product and a sum otherwise (a portable build without -march=native).
template <class T>
inline T chain_step(T a, T b, T sum) {
#ifdef __FMA__
  return std::fma(a, b, sum);
#else
  return a * b + sum;
#endif
}

// Registers of C per tile: kRowBatches vector registers of rows by kColumns columns. With 32
// vector registers (AVX-512) 2 × 8 accumulators, with 16 (AVX2) 2 × 6, leaving room for the
// column of A and the broadcast element of B.
template <class T>
inline constexpr int kRowBatches = 2;
template <class T>
inline constexpr int kColumns = sizeof(xsimd::batch<T>) == 64 ? 8 : 6;

// The inner index runs in pieces of at most kInnerBlock: a row panel of A then spans 16 KB (32
// float rows), which stays in L1 while the panel's tiles read it once per column tile; each
// element's chain of FMAs continues from the stored C of the piece before, so the split does not
// change any value.
inline constexpr int kInnerBlock = 128;

// What a product stores: each register of sums as it is, or what an epilogue makes of it.
struct StoreSums {};

// The (R · width) × NC tile of C at c: Σ_κ A(:, κ) B(κ, j), onto C's values with `accumulate`,
// else onto the rows' bias (zero if null). An epilogue other than StoreSums is called as
// epilogue(sums, i, j) for the register of the tile's rows [r · width, (r + 1) · width) of its
// column c, with i = row0 + r · width and j = col0 + c (the caller's own row and column), and its
// result is stored.
template <class T, int R, int NC, class Epilogue = StoreSums>
inline void tile(T* c, std::ptrdiff_t ldc, const T* a, std::ptrdiff_t lda, const T* b,
                 std::ptrdiff_t b_row, std::ptrdiff_t b_col, int k, bool accumulate, const T* bias,
                 const Epilogue& epilogue = {}, int row0 = 0, int col0 = 0) {
  using Batch = xsimd::batch<T>;
  constexpr int width = Batch::size;
  Batch sum[R][NC];
#pragma GCC unroll 8
  for (int j = 0; j < NC; ++j)
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r)
      sum[r][j] = accumulate ? Batch::load_unaligned(c + j * ldc + r * width)
                  : bias     ? Batch::load_unaligned(bias + r * width)
                             : Batch(T(0));
  for (int q = 0; q < k; ++q) {
    Batch column[R];
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) column[r] = Batch::load_unaligned(a + q * lda + r * width);
#pragma GCC unroll 8
    for (int j = 0; j < NC; ++j) {
      const Batch element(b[q * b_row + j * b_col]);
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r) sum[r][j] = xsimd::fma(column[r], element, sum[r][j]);
    }
  }
#pragma GCC unroll 8
  for (int j = 0; j < NC; ++j)
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      if constexpr (std::is_same_v<Epilogue, StoreSums>)
        sum[r][j].store_unaligned(c + j * ldc + r * width);
      else
        epilogue(sum[r][j], row0 + r * width, col0 + j).store_unaligned(c + j * ldc + r * width);
    }
}

// Rows [i0, i0 + R · width) of C, every column: full tiles of kColumns, then single columns.
template <class T, int R, class Epilogue = StoreSums>
inline void row_panel(T* c, std::ptrdiff_t ldc, const T* a, std::ptrdiff_t lda, const T* b,
                      std::ptrdiff_t b_row, std::ptrdiff_t b_col, int n, int k, bool accumulate,
                      const T* bias, const Epilogue& epilogue = {}, int i0 = 0) {
  constexpr int NC = kColumns<T>;
  int j = 0;
  for (; j + NC <= n; j += NC)
    tile<T, R, NC>(c + j * ldc, ldc, a, lda, b + j * b_col, b_row, b_col, k, accumulate, bias,
                   epilogue, i0, j);
  for (; j < n; ++j)
    tile<T, R, 1>(c + j * ldc, ldc, a, lda, b + j * b_col, b_row, b_col, k, accumulate, bias,
                  epilogue, i0, j);
}

}  // namespace matrix_product_detail

// The rows and columns of C one register tile covers (a product over fewer rows than a multiple
// of the row tile computes the remainder in narrower tiles or scalar rows).
template <class T>
inline constexpr int kProductRowTile =
    matrix_product_detail::kRowBatches<T>* static_cast<int>(xsimd::batch<T>::size);
template <class T>
inline constexpr int kProductColumnTile = matrix_product_detail::kColumns<T>;

// A leading dimension for a column-major matrix of `rows` rows of T. Columns whose starts lie a
// multiple of 4 KB apart fall into the same sets of L1 (64 sets of 64-byte lines), so a register
// tile's columns and a row panel's columns of A evict one another; such matrices get one line
// more per column (a vocabulary head's slice of 1,024 rows: its product 1.4 → 0.8 ms).
template <class T>
constexpr std::ptrdiff_t padded_leading_dimension(std::ptrdiff_t rows) {
  constexpr std::ptrdiff_t page = 4096 / sizeof(T), line = 64 / sizeof(T);
  return rows > 0 && rows % page == 0 ? rows + line : rows;
}

// C (m, n) = A (m, k) · B (k, n), or C += A·B with `accumulate`, or C = b 1ᵀ + A·B with a bias b
// (m) and no `accumulate` (each element's chain starting from b_i). A and C are column-major with
// leading dimensions lda, ldc (≥ m); B's element (κ, j) lies at b[κ · b_row + j · b_col], so B is
// a column-major matrix (b_row = 1, b_col its leading dimension) or the transpose of one (b_col =
// 1). C must not overlap A or B. Single-threaded: callers parallelise over tiles of their own.
template <class T>
void multiply(T* c, std::ptrdiff_t ldc, const T* a, std::ptrdiff_t lda, const T* b,
              std::ptrdiff_t b_row, std::ptrdiff_t b_col, int m, int n, int k, bool accumulate,
              const T* bias = nullptr) {
  using namespace matrix_product_detail;
  if (k > 2 * kInnerBlock) {  // pieces along κ whose rows of A stay in L1 across B's columns
    for (int q0 = 0; q0 < k; q0 += kInnerBlock)
      multiply(c, ldc, a + q0 * lda, lda, b + q0 * b_row, b_row, b_col, m, n,
               std::min(kInnerBlock, k - q0), accumulate || q0 > 0, q0 > 0 ? nullptr : bias);
    return;
  }
  constexpr int width = xsimd::batch<T>::size;
  constexpr int R = kRowBatches<T>;
  int i = 0;
  for (; i + R * width <= m; i += R * width)
    row_panel<T, R>(c + i, ldc, a + i, lda, b, b_row, b_col, n, k, accumulate,
                    bias ? bias + i : nullptr);
  for (; i + width <= m; i += width)
    row_panel<T, 1>(c + i, ldc, a + i, lda, b, b_row, b_col, n, k, accumulate,
                    bias ? bias + i : nullptr);
  for (; i < m; ++i)  // the last m mod width rows, with the same chain per element
    for (int j = 0; j < n; ++j) {
      T sum = accumulate ? c[i + j * ldc] : bias ? bias[i] : T(0);
      for (int q = 0; q < k; ++q) sum = chain_step(a[i + q * lda], b[q * b_row + j * b_col], sum);
      c[i + j * ldc] = sum;
    }
}

// C (m, n) = epilogue(A·B), the epilogue called as in matrix_product_detail::tile with the register
// of rows [i, i + width) of column j of A·B: the product and an elementwise map in one pass over
// C (softmax's exponentials of a tile of scores). m must be a multiple of the register width.
template <class T, class Epilogue>
void multiply_then(T* c, std::ptrdiff_t ldc, const T* a, std::ptrdiff_t lda, const T* b,
                   std::ptrdiff_t b_row, std::ptrdiff_t b_col, int m, int n, int k,
                   const Epilogue& epilogue) {
  using namespace matrix_product_detail;
  constexpr int width = xsimd::batch<T>::size;
  constexpr int R = kRowBatches<T>;
  if (k > 2 * kInnerBlock) {
    // The first pieces as multiply does them, the epilogue on the stores of the last.
    const int last = (k - 1) / kInnerBlock * kInnerBlock;
    multiply(c, ldc, a, lda, b, b_row, b_col, m, n, last, false);
    for (int i = 0; i < m; i += width)
      row_panel<T, 1>(c + i, ldc, a + last * lda + i, lda, b + last * b_row, b_row, b_col, n,
                      k - last, true, nullptr, epilogue, i);
    return;
  }
  int i = 0;
  for (; i + R * width <= m; i += R * width)
    row_panel<T, R>(c + i, ldc, a + i, lda, b, b_row, b_col, n, k, false, nullptr, epilogue, i);
  for (; i < m; i += width)
    row_panel<T, 1>(c + i, ldc, a + i, lda, b, b_row, b_col, n, k, false, nullptr, epilogue, i);
}

// C (rows, w) [+]= A (rows, inner) · B (inner, w), inner ≥ w, for a B that vanishes on one side
// of its diagonal: with `zero_below` B(κ, i) = 0 for κ > i, and each tile of columns [i0, i1)
// reads κ < i1 only; otherwise B(κ, i) = 0 for κ < i, and it reads κ ∈ [i0, inner). The dropped
// terms are exact zeros, so each element's chain of FMAs keeps its value.
template <class T>
void multiply_triangular(T* c, std::ptrdiff_t ldc, const T* a, std::ptrdiff_t lda, const T* b,
                         std::ptrdiff_t b_row, std::ptrdiff_t b_col, int rows, int w, int inner,
                         bool zero_below, bool accumulate) {
  for (int i0 = 0; i0 < w; i0 += kProductColumnTile<T>) {
    const int i1 = std::min(w, i0 + kProductColumnTile<T>);
    const int k0 = zero_below ? 0 : i0, k1 = zero_below ? i1 : inner;
    multiply(c + i0 * ldc, ldc, a + k0 * lda, lda, b + k0 * b_row + i0 * b_col, b_row, b_col, rows,
             i1 - i0, k1 - k0, accumulate);
  }
}

namespace matrix_product_detail {

// out(j, i) = factor · in(i, j), or out(j, i) += factor · in(i, j) with `accumulate`, for i in
// [i0, i1), j in [j0, j1), in blocks of 16 columns of in so that the 16 lines being read stay in
// L1 across the rows.
template <class T>
void copy_transposed_scalar(T* out, std::ptrdiff_t ld_out, const T* in, std::ptrdiff_t ld_in,
                            int i0, int i1, int j0, int j1, T factor, bool accumulate) {
  constexpr int kBlock = 16;
  for (int jb = j0; jb < j1; jb += kBlock) {
    const int je = jb + kBlock < j1 ? jb + kBlock : j1;
    for (int i = i0; i < i1; ++i)
      for (int j = jb; j < je; ++j) {
        T& o = out[j + i * ld_out];
        o = accumulate ? chain_step(factor, in[i + j * ld_in], o) : factor * in[i + j * ld_in];
      }
  }
}

#ifdef __AVX__
// The 8 × 8 block out(j, i) = factor · in(i, j), i, j < 8 (with `accumulate`, out(j, i) plus that
// product as chain_step forms it), in eight AVX registers: the columns of in are interleaved in
// pairs (unpack), then in fours (shuffle), then their 128-bit halves exchanged (permute), which
// leaves register r holding row r of in.
inline void transpose_8x8(float* out, std::ptrdiff_t ld_out, const float* in, std::ptrdiff_t ld_in,
                          float factor, bool accumulate) {
  const __m256 f = _mm256_set1_ps(factor);
  __m256 c[8], p[8], q[8];  // fully unrolled, so that they stay in registers
#pragma GCC unroll 8
  for (int k = 0; k < 8; ++k) c[k] = _mm256_loadu_ps(in + k * ld_in);
#pragma GCC unroll 4
  for (int k = 0; k < 8; k += 2) {
    p[k] = _mm256_unpacklo_ps(c[k], c[k + 1]);
    p[k + 1] = _mm256_unpackhi_ps(c[k], c[k + 1]);
  }
#pragma GCC unroll 2
  for (int k = 0; k < 8; k += 4)
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
      q[k + 2 * h] = _mm256_shuffle_ps(p[k + h], p[k + h + 2], _MM_SHUFFLE(1, 0, 1, 0));
      q[k + 2 * h + 1] = _mm256_shuffle_ps(p[k + h], p[k + h + 2], _MM_SHUFFLE(3, 2, 3, 2));
    }
  const auto store = [&](float* to, __m256 row) {
    if (!accumulate) return _mm256_storeu_ps(to, _mm256_mul_ps(f, row));
#ifdef __FMA__
    _mm256_storeu_ps(to, _mm256_fmadd_ps(f, row, _mm256_loadu_ps(to)));
#else
    _mm256_storeu_ps(to, _mm256_add_ps(_mm256_mul_ps(f, row), _mm256_loadu_ps(to)));
#endif
  };
#pragma GCC unroll 4
  for (int r = 0; r < 4; ++r) {
    store(out + r * ld_out, _mm256_permute2f128_ps(q[r], q[r + 4], 0x20));
    store(out + (r + 4) * ld_out, _mm256_permute2f128_ps(q[r], q[r + 4], 0x31));
  }
}
#endif

}  // namespace matrix_product_detail

// out (cols, rows) = factor · inᵀ for in (rows, cols), both column-major with leading dimensions
// ld_out, ld_in: the copy that puts an operand stored the other way into multiply's layout; with
// `accumulate`, out += factor · inᵀ. Floats go through 8 × 8 register blocks where the machine
// has AVX (the same products and sums, so the same values), the edges and other types element by
// element.
template <class T>
void copy_transposed(T* out, std::ptrdiff_t ld_out, const T* in, std::ptrdiff_t ld_in, int rows,
                     int cols, T factor = T(1), bool accumulate = false) {
  using matrix_product_detail::copy_transposed_scalar;
  int rows8 = 0, cols8 = 0;
#ifdef __AVX__
  if constexpr (std::is_same_v<T, float>) {
    rows8 = rows / 8 * 8;
    cols8 = cols / 8 * 8;
    for (int j = 0; j < cols8; j += 8)
      for (int i = 0; i < rows8; i += 8)
        matrix_product_detail::transpose_8x8(out + j + i * ld_out, ld_out, in + i + j * ld_in,
                                             ld_in, factor, accumulate);
  }
#endif
  copy_transposed_scalar(out, ld_out, in, ld_in, 0, rows8, cols8, cols, factor, accumulate);
  copy_transposed_scalar(out, ld_out, in, ld_in, rows8, rows, 0, cols, factor, accumulate);
}

// The same for Eigen column-major blocks and maps (unit inner stride): c = a·b, c += a·b, and with
// b given by its transpose, c = a·btᵀ, c += a·btᵀ.
template <class C, class A, class B>
void multiply(C&& c, const A& a, const B& b, bool accumulate = false) {
  multiply(c.data(), c.outerStride(), a.data(), a.outerStride(), b.data(), 1, b.outerStride(),
           static_cast<int>(c.rows()), static_cast<int>(c.cols()), static_cast<int>(a.cols()),
           accumulate);
}
template <class C, class A, class B>
void multiply_transposed(C&& c, const A& a, const B& bt, bool accumulate = false) {
  multiply(c.data(), c.outerStride(), a.data(), a.outerStride(), bt.data(), bt.outerStride(), 1,
           static_cast<int>(c.rows()), static_cast<int>(c.cols()), static_cast<int>(a.cols()),
           accumulate);
}

}  // namespace cpm
