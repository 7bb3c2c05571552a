#pragma once
// The memory a model of stacked blocks (transformer/transformer_block.hpp) runs in, sized once:
// its activations in two allocations (T, and double for the sums linear attention keeps), the
// backward gradients every block shares followed by those of the model's head, the per-chunk
// partial gradients of the linear layers and layer norms, and the attention's per-thread scratch.
// A training step allocates nothing. Every piece handed out of an allocation covers whole cache
// lines, so it starts on one as the allocation does (core/heap_alignment.hpp): the 16 floats of
// one head's q, k, v or output are then one line, not two shared with the neighbouring heads.
#include <algorithm>
#include <cstddef>
#include <vector>

#include "core/heap_alignment.hpp"
#include "transformer/layer_norm.hpp"
#include "transformer/linear_layer.hpp"
#include "transformer/model_shape.hpp"
#include "transformer/thread_index.hpp"
#include "transformer/transformer_block.hpp"

namespace cpm {

template <class T>
class ModelBuffers {
 public:
  // plan() takes every activation with take() and take_double(); it runs twice, first counting
  // (the pointers are null), then handing out pointers into the allocations.
  template <class Plan>
  void allocate_activations(Plan&& plan) {
    base_ = nullptr;
    base_double_ = nullptr;
    count_ = count_double_ = 0;
    plan();
    activations_.assign(count_, T(0));
    activations_double_.assign(count_double_, 0.0);
    base_ = activations_.data();
    base_double_ = activations_double_.data();
    count_ = count_double_ = 0;
    plan();
  }
  T* take(std::size_t n) {
    T* p = base_ ? base_ + count_ : nullptr;
    count_ += whole_aligned_blocks<T>(n);
    return p;
  }
  double* take_double(std::size_t n) {
    double* p = base_double_ ? base_double_ + count_double_ : nullptr;
    count_double_ += whole_aligned_blocks<double>(n);
    return p;
  }

  // The blocks' scratch for batches of up to `tokens` tokens of up to max_length, then `head`
  // elements for the head's gradients, whose first element this returns; the head's linear layer
  // has head_rows × d_model weights.
  T* allocate_scratch(const ModelShape& shape, std::size_t tokens, int max_length, bool causal,
                      std::size_t head, std::size_t head_rows) {
    const std::size_t N = tokens, C = shape.d_model, F = shape.d_ff;
    const std::size_t R = (shape.qk_tied ? 2 : 3) * C;
    const std::size_t CN = whole_aligned_blocks<T>(C * N), FN = whole_aligned_blocks<T>(F * N),
                      RN = whole_aligned_blocks<T>(R * N);
    backward_.assign(3 * CN + 2 * FN + RN + head, T(0));
    T* d = backward_.data();
    scratch_.d_residual = d;
    scratch_.d_a = d + CN;
    scratch_.d_b = d + 2 * CN;
    scratch_.d_ff_a = d + 3 * CN;
    scratch_.d_ff_b = scratch_.d_ff_a + FN;
    scratch_.d_qkv = scratch_.d_ff_b + FN;
    const int c = shape.d_model, f = shape.d_ff, r = static_cast<int>(R);
    const int h = static_cast<int>(head_rows);
    linear_.assign(std::max({linear_backward_scratch(c, r), linear_backward_scratch(c, f),
                             linear_backward_scratch(f, c), linear_backward_scratch(c, h),
                             layer_norm_backward_scratch(c)}),
                   T(0));
    const int threads = max_threads();
    attention_.assign(TransformerBlock<T>::attention_scratch(shape, max_length, causal) * threads,
                      T(0));
    attention_double_.assign(TransformerBlock<T>::attention_scratch_double(shape, causal) * threads,
                             0.0);
    scratch_.linear = linear_.data();
    scratch_.attention = attention_.data();
    scratch_.attention_double = attention_double_.data();
    return scratch_.d_qkv + RN;
  }
  const BlockScratch<T>& scratch() const { return scratch_; }

 private:
  std::vector<T> activations_;
  std::vector<double> activations_double_;
  T* base_ = nullptr;
  double* base_double_ = nullptr;
  std::size_t count_ = 0, count_double_ = 0;
  std::vector<T> backward_, linear_, attention_;
  std::vector<double> attention_double_;
  BlockScratch<T> scratch_{};
};

}  // namespace cpm
