#pragma once
// Exact softmax attention, the baseline and the test reference:
//   out_i = Σ_{j<len} p_ij v_j,   p_ij = exp(s_ij − lse_i),   s_ij = q_iᵀk_j / √d_head.
// Work goes in (query block × key block) tiles of scores, kQueryBlock × kKeyBlock, small enough
// that a tile, its gradient and the blocks they multiply stay in L1 at any length. The forward
// pass keeps per query a running maximum of the scores and sum of exponentials over the key blocks
// (the online softmax, docs/model.md), rescaling what earlier blocks added when the maximum grows;
// the backward pass recomputes each tile from the stored log-sum-exp, raising the scores to their
// exponentials and forming the score gradient as the products store their registers
// (multiply_then), not in passes of their own over the tile. Keys at padding positions
// are excluded. With `causal` (decoder attention) query i sees only the keys j ≤ i: tiles wholly
// above the diagonal are skipped, and in the diagonal ones the later keys' scores are −∞ and the
// work runs over the lower triangle in steps of a product's row tile (see keys_of_rows).
// A tile is stored (queries, keys) column-major, one register holding a key's scores for
// consecutive queries, so that the softmax's maxima and sums per query are lanes of registers
// (no horizontal sums) and the products giving s, dp and dqᵀ have the query block as their long
// side (transformer/matrix_product.hpp); the query rows are padded to whole registers with zero
// queries, which never reach an output.
// Inside a tile the scores are in base-2 units, s_ij · log₂ e (the queries are scaled by
// log₂ e / √d_head), so that every exponential is a power of two (exponential2_lanes); the stored
// log-sum-exp stays in natural units.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <xsimd/xsimd.hpp>
#pragma GCC diagnostic pop

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numbers>
#include <numeric>
#include <type_traits>

#include "parallel/claimed_items.hpp"
#include "transformer/attention_layout.hpp"
#include "transformer/matrix_product.hpp"
#include "transformer/shifted_exponential.hpp"
#include "transformer/thread_index.hpp"

namespace cpm {

inline constexpr int kQueryBlock = 64;
inline constexpr int kKeyBlock = 64;

// Per-thread scratch of the softmax attention, in elements of T: two tiles, three (queries,
// d_head) blocks, two values per query, and for the backward pass a head's dk and dv (d_head,
// length) each.
inline std::size_t softmax_attention_scratch(int head_size, int length) {
  return per_thread_block(std::size_t(kQueryBlock) * (2 * kKeyBlock + 3 * head_size + 2) +
                          2 * std::size_t(head_size) * length);
}

// How many keys query i attends to: j < len, and j ≤ i if causal.
inline int attended_keys(int len, int i, bool causal) {
  return causal ? std::min(len, i + 1) : len;
}

namespace softmax_attention_detail {

// The query rows of a tile rounded up to whole registers.
template <class T>
int padded_rows(int rows) {
  constexpr int width = xsimd::batch<T>::size;
  return (rows + width - 1) / width * width;
}

// factor · inᵀ for a query block in (d_head, queries) of q or dout: the (padded queries, d_head)
// left operand of a product, zero in the padding rows.
template <class T>
void copy_queries_transposed(T* out, const T* in, std::ptrdiff_t ld_in, int head_size, int queries,
                             T factor) {
  const std::ptrdiff_t padded = padded_rows<T>(queries);
  copy_transposed(out, padded, in, ld_in, head_size, queries, factor);
  for (int c = 0; c < head_size; ++c)
    std::fill(out + c * padded + queries, out + (c + 1) * padded, T(0));
}

// A diagonal tile of causal attention (query block i0 = key block j0) is lower triangular: query r
// sees the keys j ≤ r. Its work goes in groups of G = kProductRowTile queries or keys: the
// queries from r0 (a multiple of G) use the keys j < r0 + G, the keys from c0 the queries r ≥ c0.
// Every other tile uses all `width` keys. The entries left out of a group are exact zeros of the
// sums (p = 0), so no element's value changes.
template <class T>
int keys_of_rows(int r, int width, bool diagonal) {
  constexpr int group = kProductRowTile<T>;
  return diagonal ? std::min(width, (r / group + 1) * group) : width;
}

// s (padded, width) = left (padded, d_head) · B (d_head, width), B's column j at b + j · ldb. In a
// diagonal tile only the queries r ≥ c0 of each group of keys from c0, c0 rounded down to a tile of
// kProductColumnTile keys and then to a register: add_over_queries reads each tile of keys from
// the tile's first query on, and where the column tile does not divide the group (6 and 16 with
// AVX2) that is below c0. The scores above the diagonal are masked afterwards. With an epilogue, s
// = epilogue(scores, i, j) for the register of the tile's rows [i, i + width) of column j
// (multiply_then), in the same pass.
template <class T, class Epilogue = matrix_product_detail::StoreSums>
void tile_scores(T* s, int padded, const T* left, const T* b, std::ptrdiff_t ldb, int width,
                 int head_size, bool diagonal, const Epilogue& epilogue = {}) {
  constexpr int group = kProductRowTile<T>;
  const int step = diagonal ? group : width;
  for (int c0 = 0; c0 < width; c0 += step) {
    constexpr int column_tile = kProductColumnTile<T>, lanes = xsimd::batch<T>::size;
    // the first query computed, in whole registers (multiply_then)
    const int first = diagonal ? c0 / column_tile * column_tile / lanes * lanes : 0;
    T* at = s + std::ptrdiff_t(c0) * padded + first;
    const int columns = std::min(step, width - c0);
    if constexpr (std::is_same_v<Epilogue, matrix_product_detail::StoreSums>)
      multiply(at, padded, left + first, padded, b + c0 * ldb, 1, ldb, padded - first, columns,
               head_size, false);
    else
      multiply_then(at, padded, left + first, padded, b + c0 * ldb, 1, ldb, padded - first, columns,
                    head_size, [&](const auto& sums, int i, int j) {
                      return epilogue(sums, first + i, c0 + j);
                    });
  }
}

// xᵀ (padded, d_head) += p (padded, width) · Bᵀ, B (d_head, width) with column j at b + j · ldb: a
// sum over the keys, in a diagonal tile over the keys of each group of queries only.
template <class T>
void add_over_keys(T* x_t, const T* p, int padded, const T* b, std::ptrdiff_t ldb, int width,
                   int head_size, bool diagonal) {
  if (!diagonal) return multiply(x_t, padded, p, padded, b, ldb, 1, padded, head_size, width, true);
  constexpr int group = kProductRowTile<T>;
  for (int r0 = 0; r0 < padded; r0 += group)
    multiply(x_t + r0, padded, p + r0, padded, b, ldb, 1, std::min(group, padded - r0), head_size,
             keys_of_rows<T>(r0, width, true), true);
}

// x (d_head, width; column j at x + j · ldx) += A (d_head, rows; column r at a + r · lda) · p
// (rows, width; leading dimension padded): a sum over the queries, in a diagonal tile over the
// queries r ≥ j of each key j only (in tiles of its columns).
template <class T>
void add_over_queries(T* x, std::ptrdiff_t ldx, const T* a, std::ptrdiff_t lda, const T* p,
                      int padded, int rows, int width, int head_size, bool diagonal) {
  if (!diagonal) return multiply(x, ldx, a, lda, p, 1, padded, head_size, width, rows, true);
  multiply_triangular(x, ldx, a, lda, p, 1, padded, head_size, width, rows, false, true);
}

// 0, 1, …, width − 1: the lanes' offsets from a register's first row.
template <class T>
xsimd::batch<T> lane_indices() {
  alignas(64) T lanes[xsimd::batch<T>::size];
  std::iota(lanes, lanes + xsimd::batch<T>::size, T(0));
  return xsimd::batch<T>::load_aligned(lanes);
}

// A diagonal tile of causal attention: the score of query i0 + r for key j0 + j > i0 + r is −∞.
template <class T>
void mask_later_keys(T* s, int ld, int rows, int width, int i0, int j0) {
  for (int j = 0; j < width; ++j)
    std::fill_n(s + std::ptrdiff_t(j) * ld, std::clamp(j0 + j - i0, 0, rows),
                -std::numeric_limits<T>::infinity());
}

// Rows [r, r + register width) of oᵀ (ld, d_head) times factor, one lane per query.
template <class T>
void scale_queries(T* o_t, int ld, int head_size, int r, xsimd::batch<T> factor) {
  using Batch = xsimd::batch<T>;
  for (int c = 0; c < head_size; ++c) {
    T* o = o_t + std::ptrdiff_t(c) * ld + r;
    (factor * Batch::load_unaligned(o)).store_unaligned(o);
  }
}

// One key block of the online softmax on base-2 scores: per query the block's largest score raises
// shift (the largest so far, starting at the lowest finite value), which rescales total =
// Σ 2^(s − shift) and the output oᵀ (ld, d_head) gathered so far by 2^(old − new); then the
// tile's scores become 2^(s − shift) and their sum joins total. The lanes of a register are
// queries; in a diagonal tile each register's keys end at keys_of_rows.
template <class T>
void online_softmax_block(T* s, int ld, int width, bool diagonal, T* shift, T* total, T* o_t,
                          int head_size) {
  using Batch = xsimd::batch<T>;
  for (int r = 0; r < ld; r += Batch::size) {
    const int keys = keys_of_rows<T>(r, width, diagonal);
    const Batch old_shift = Batch::load_unaligned(shift + r);
    Batch top = old_shift;
    for (int j = 0; j < keys; ++j)
      top = xsimd::max(top, Batch::load_unaligned(s + std::ptrdiff_t(j) * ld + r));
    const Batch factor = exponential2_lanes(old_shift - top);
    Batch sum = Batch::load_unaligned(total + r) * factor;
    scale_queries(o_t, ld, head_size, r, factor);
    for (int j = 0; j < keys; ++j) {
      T* column = s + std::ptrdiff_t(j) * ld + r;
      const Batch e = exponential2_lanes(Batch::load_unaligned(column) - top);
      e.store_unaligned(column);
      sum += e;
    }
    top.store_unaligned(shift + r);
    sum.store_unaligned(total + r);
  }
}

// oᵀ (ld, d_head) divided by each query's total.
template <class T>
void normalise_outputs(T* o_t, int ld, int head_size, const T* total) {
  using Batch = xsimd::batch<T>;
  for (int r = 0; r < ld; r += Batch::size)
    scale_queries(o_t, ld, head_size, r, T(1) / Batch::load_unaligned(total + r));
}

// p (padded, width) = 2^(s − lse) for the base-2 scores s = q_t · k (k: d_head × width, column j
// at k + j · ldk) and the log-sum-exp per query, in one pass: each register of scores is raised
// to its powers of two before it is stored. In a diagonal tile the scores of later keys are −∞
// first (p = 0), over the entries tile_scores computes.
template <class T>
void tile_probabilities(T* p, int padded, const T* q_t, const T* k, std::ptrdiff_t ldk, int width,
                        int head_size, bool diagonal, const T* lse) {
  using Batch = xsimd::batch<T>;
  if (!diagonal)
    return tile_scores(p, padded, q_t, k, ldk, width, head_size, false,
                       [lse](const Batch& s, int i, int) {
                         return exponential2_lanes(s - Batch::load_unaligned(lse + i));
                       });
  const Batch lane = lane_indices<T>(), minus_infinity(-std::numeric_limits<T>::infinity());
  tile_scores(p, padded, q_t, k, ldk, width, head_size, true,
              [&](const Batch& s, int i, int j) {  // queries i + lane, key j
                const Batch masked = xsimd::select(lane + T(i) < T(j), minus_infinity, s);
                return exponential2_lanes(masked - Batch::load_unaligned(lse + i));
              });
}

// ds (padded, width) = scale · p ⊙ (dp − D) for dp = dout_t · v (v as k above) and D per query,
// in one pass, over the entries tile_scores computes.
template <class T>
void tile_score_gradient(T* ds, const T* p, int padded, const T* do_t, const T* v,
                         std::ptrdiff_t ldv, int width, int head_size, bool diagonal, const T* d,
                         T scale) {
  using Batch = xsimd::batch<T>;
  tile_scores(ds, padded, do_t, v, ldv, width, head_size, diagonal,
              [&](const Batch& dp, int i, int j) {
                const Batch p_ij = Batch::load_unaligned(p + std::ptrdiff_t(j) * padded + i);
                return scale * (p_ij * (dp - Batch::load_unaligned(d + i)));
              });
}

// d_r = Σ_c a(r, c) b(r, c) over the d_head columns of two (queries, d_head) blocks: D_i of a
// query block from its transposed dout and out.
template <class T>
void query_dots(T* d, const T* a, const T* b, int ld, int head_size) {
  using Batch = xsimd::batch<T>;
  for (int r = 0; r < ld; r += Batch::size) {
    Batch sum(T(0));
    for (int c = 0; c < head_size; ++c) {
      const std::ptrdiff_t at = std::ptrdiff_t(c) * ld + r;
      sum = xsimd::fma(Batch::load_unaligned(a + at), Batch::load_unaligned(b + at), sum);
    }
    sum.store_unaligned(d + r);
  }
}

// log₂ e / √d_head: the queries' factor that puts the scores in base-2 units.
template <class T>
T base2_query_scale(int head_size) {
  return static_cast<T>(std::numbers::log2e / std::sqrt(static_cast<double>(head_size)));
}

}  // namespace softmax_attention_detail

// out (C, N); lse (B·H·L) log-sum-exp of each query row.
template <class T>
void softmax_attention_forward(T* out, T* lse, const T* qkv, const int* lengths,
                               const AttentionLayout& a, T* scratch, bool causal = false) {
  using namespace softmax_attention_detail;
  const int L = a.length, hs = a.head_size;
  const T base2_scale = base2_query_scale<T>(hs);
  const std::size_t per_thread = softmax_attention_scratch(hs, L);
  ClaimedItems items(a.batch * a.heads, a.heads_per_claim(max_threads()));
#pragma omp parallel
  items.for_each([&](int bh) {
    const int b = bh / a.heads, h = bh % a.heads, len = lengths[b];
    T* s = scratch + per_thread * static_cast<std::size_t>(omp_thread());  // (queries, keys)
    T* q_t = s + std::size_t(kQueryBlock) * kKeyBlock;  // (queries, d_head), q log₂e/√d
    T* o_t = q_t + std::size_t(kQueryBlock) * hs;       // (queries, d_head)
    T* shift = o_t + std::size_t(kQueryBlock) * hs;
    T* total = shift + kQueryBlock;
    const auto q = a.block(qkv, b, h, 0);
    const auto k = a.block(qkv, b, h, a.k_offset());
    const auto v = a.block(qkv, b, h, a.v_offset());
    auto o = a.output(out, b, h);
    for (int i0 = 0; i0 < L; i0 += kQueryBlock) {
      const int rows = std::min(kQueryBlock, L - i0), padded = padded_rows<T>(rows);
      const int keys = attended_keys(len, i0 + rows - 1, causal);
      copy_queries_transposed(q_t, q.col(i0).data(), q.outerStride(), hs, rows, base2_scale);
      std::fill_n(o_t, std::size_t(padded) * hs, T(0));
      std::fill_n(shift, padded, std::numeric_limits<T>::lowest());
      std::fill_n(total, padded, T(0));
      for (int j0 = 0; j0 < keys; j0 += kKeyBlock) {
        const int width = std::min(kKeyBlock, keys - j0);
        const bool diagonal = causal && j0 == i0;
        tile_scores(s, padded, q_t, k.col(j0).data(), k.outerStride(), width, hs,
                    diagonal);  // s (queries, keys)
        if (diagonal) mask_later_keys(s, padded, rows, width, i0, j0);
        online_softmax_block(s, padded, width, diagonal, shift, total, o_t, hs);
        add_over_keys(o_t, s, padded, v.col(j0).data(), v.outerStride(), width, hs,
                      diagonal);  // oᵀ += p vᵀ (queries, d_head)
      }
      normalise_outputs(o_t, padded, hs, total);
      copy_transposed(o.col(i0).data(), o.outerStride(), o_t, padded, rows, hs);
      for (int r = 0; r < rows; ++r)
        lse[static_cast<std::ptrdiff_t>(bh) * L + i0 + r] =
            std::numbers::ln2_v<T> * (shift[r] + std::log2(total[r]));
    }
  });
}

// Differentiates the forward above; dqkv must be zeroed by the caller (q and k may share rows).
//   D_i = dout_i·out_i,  dv_j += Σ_i p_ij dout_i,  dp_ij = dout_i·v_j,  ds_ij = p_ij (dp_ij − D_i),
//   dq_i += Σ_j ds_ij k_j / √d,  dk_j += Σ_i ds_ij q_i / √d.
template <class T>
void softmax_attention_backward(T* dqkv, const T* dout, const T* out, const T* lse, const T* qkv,
                                const int* lengths, const AttentionLayout& a, T* scratch,
                                bool causal = false) {
  using namespace softmax_attention_detail;
  const int L = a.length, hs = a.head_size;
  const T scale = static_cast<T>(1.0 / std::sqrt(static_cast<double>(hs)));
  const T base2_scale = base2_query_scale<T>(hs);
  const std::size_t per_thread = softmax_attention_scratch(hs, L);
  const std::size_t tile = std::size_t(kQueryBlock) * kKeyBlock, block = kQueryBlock * hs;
  ClaimedItems items(a.batch * a.heads, a.heads_per_claim(max_threads()));
#pragma omp parallel
  items.for_each([&](int bh) {
    const int b = bh / a.heads, h = bh % a.heads, len = lengths[b];
    T* p = scratch + per_thread * static_cast<std::size_t>(omp_thread());  // (queries, keys)
    T* ds = p + tile;
    T* q_t = ds + tile;  // (queries, d_head) each: q log₂e/√d, dout, and out then the gathered dq
    T* do_t = q_t + block;
    T* dq_t = do_t + block;
    T* row_lse = dq_t + block;
    T* d = row_lse + kQueryBlock;  // D_i
    const auto q = a.block(qkv, b, h, 0);
    auto dq = a.block(dqkv, b, h, 0);
    const auto o = a.output(out, b, h);
    const auto d_o = a.output(dout, b, h);
    const auto k = a.block(qkv, b, h, a.k_offset());
    const auto v = a.block(qkv, b, h, a.v_offset());
    // dk and dv gather in contiguous (d_head, len) blocks, added to dqkv once: every query block
    // adds to all their columns, which in place lie one qkv_rows stride apart. At L = 1,024 that
    // made the backward pass on two threads 8–15 % slower (bench/RESULTS.md); the strided columns
    // of k, v, dk and dv share a fraction of the cache's sets, the likely cause.
    MatrixMap<T> dk(d + kQueryBlock, hs, len), dv(dk.data() + hs * len, hs, len);
    std::fill_n(dk.data(), 2 * std::size_t(hs) * len, T(0));
    for (int i0 = 0; i0 < L; i0 += kQueryBlock) {
      const int rows = std::min(kQueryBlock, L - i0), padded = padded_rows<T>(rows);
      const int keys = attended_keys(len, i0 + rows - 1, causal);
      copy_queries_transposed(q_t, q.col(i0).data(), q.outerStride(), hs, rows, base2_scale);
      copy_queries_transposed(do_t, d_o.col(i0).data(), d_o.outerStride(), hs, rows, T(1));
      copy_queries_transposed(dq_t, o.col(i0).data(), o.outerStride(), hs, rows, T(1));
      query_dots(d, do_t, dq_t, padded, hs);
      std::fill_n(dq_t, std::size_t(padded) * hs, T(0));
      std::fill_n(row_lse, padded, T(0));
      for (int r = 0; r < rows; ++r)  // in base-2 units, as the scores
        row_lse[r] = std::numbers::log2e_v<T> * lse[static_cast<std::ptrdiff_t>(bh) * L + i0 + r];
      for (int j0 = 0; j0 < keys; j0 += kKeyBlock) {
        const int width = std::min(kKeyBlock, keys - j0);
        const bool diagonal = causal && j0 == i0;
        tile_probabilities(p, padded, q_t, k.col(j0).data(), k.outerStride(), width, hs, diagonal,
                           row_lse);  // recompute p (queries, keys)
        add_over_queries(dv.col(j0).data(), dv.outerStride(), d_o.col(i0).data(), d_o.outerStride(),
                         p, padded, rows, width, hs, diagonal);  // dv += dout p (d_head, keys)
        tile_score_gradient(ds, p, padded, do_t, v.col(j0).data(), v.outerStride(), width, hs,
                            diagonal, d, scale);
        add_over_keys(dq_t, ds, padded, k.col(j0).data(), k.outerStride(), width, hs,
                      diagonal);  // dqᵀ += ds kᵀ (queries, d_head)
        add_over_queries(dk.col(j0).data(), dk.outerStride(), q.col(i0).data(), q.outerStride(), ds,
                         padded, rows, width, hs, diagonal);  // dk += q ds (d_head, keys)
      }
      copy_transposed(dq.col(i0).data(), dq.outerStride(), dq_t, padded, rows, hs, T(1),
                      true);  // dq += (dqᵀ)ᵀ
    }
    a.block(dqkv, b, h, a.k_offset()).leftCols(len) += dk;
    a.block(dqkv, b, h, a.v_offset()).leftCols(len) += dv;
  });
}

}  // namespace cpm
