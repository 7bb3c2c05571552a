#pragma once
// Where one head's queries, keys and values sit inside the fused projection buffer qkv
// (rows q | k | v, each C = heads · d_head rows; with tied W_Q = W_K the buffer is q | v and keys
// are read from the query rows), and where its output goes in the (C, N) attention output.
#include <cstddef>

#include "transformer/tensor_map.hpp"

namespace cpm {

struct AttentionLayout {
  int batch = 1, length = 1, heads = 1, head_size = 1;
  bool qk_tied = false;

  int channels() const { return heads * head_size; }
  int qkv_rows() const { return (qk_tied ? 2 : 3) * channels(); }
  int k_offset() const { return qk_tied ? 0 : channels(); }
  int v_offset() const { return (qk_tied ? 1 : 2) * channels(); }
  std::ptrdiff_t column(int b) const { return static_cast<std::ptrdiff_t>(b) * length; }

  // How many pairs of the loop over b · heads + h a thread claims at a time: every head of a
  // sequence when there are sequences enough for the threads, one otherwise. The heads of one
  // token sit side by side in q | k | v and in the output, and threads that work on neighbouring
  // heads keep taking cache lines from each other (the hardware fetches lines in pairs).
  int heads_per_claim(int threads) const { return batch >= 4 * threads ? heads : 1; }

  // (d_head, L) block of q, k or v of head h in sequence b.
  template <class T>
  ConstStridedMap<T> block(const T* qkv, int b, int h, int offset) const {
    return ConstStridedMap<T>(qkv + column(b) * qkv_rows() + offset + h * head_size, head_size,
                              length, Eigen::OuterStride<>(qkv_rows()));
  }
  template <class T>
  StridedMap<T> block(T* qkv, int b, int h, int offset) const {
    return StridedMap<T>(qkv + column(b) * qkv_rows() + offset + h * head_size, head_size, length,
                         Eigen::OuterStride<>(qkv_rows()));
  }
  // (d_head, L) block of head h in the (C, N) output.
  template <class T>
  ConstStridedMap<T> output(const T* out, int b, int h) const {
    return ConstStridedMap<T>(out + column(b) * channels() + h * head_size, head_size, length,
                              Eigen::OuterStride<>(channels()));
  }
  template <class T>
  StridedMap<T> output(T* out, int b, int h) const {
    return StridedMap<T>(out + column(b) * channels() + h * head_size, head_size, length,
                         Eigen::OuterStride<>(channels()));
  }
};

}  // namespace cpm
