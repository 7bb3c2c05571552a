#pragma once
// The Transformer classifier: token + learned position embeddings, a stack of pre-LayerNorm
// blocks with attention over each sequence's length (transformer/transformer_block.hpp)
//   x ← x + Dropout(Proj(Attention(LN1(x)))),   x ← x + Dropout(FC2(GELU(FC1(LN2(x))))),
// a final LayerNorm, mean pooling over non-padding tokens and a linear classifier, trained with
// cross-entropy. Parameters live in one allocation, activations in another, both sized once for
// (max_batch, max_length); a training step allocates nothing of its own.
//
// T is float for training and double for the finite-difference tests.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "transformer/attention_layout.hpp"
#include "transformer/model_buffers.hpp"
#include "transformer/model_shape.hpp"
#include "transformer/transformer_stack.hpp"

namespace cpm {

// A padded batch: tokens (batch, length) row-major, right-padded; lengths in [1, length];
// labels may be null (inference).
struct TokenBatch {
  const int* tokens = nullptr;
  const int* lengths = nullptr;
  const int* labels = nullptr;
  int size = 0;
  int length = 0;
};

template <class T>
class TransformerClassifier : public TransformerStack<T> {
 public:
  TransformerClassifier(const ModelShape& shape, int max_batch, int max_length);

  // GPT-2 style initialisation: N(0, 0.02) matrices, zero biases, unit LayerNorm weights.
  void initialise_parameters(std::uint64_t seed);

  // Runs the network; returns the mean cross-entropy when labels are given, else 0. With
  // training = true, dropout masks are drawn from (seed, step).
  double forward(const TokenBatch& batch, bool training = false, std::uint64_t step = 0,
                 std::uint64_t seed = 0);
  // Adds d loss / d parameters of the last forward (which must have had labels) to gradients().
  void backward(const TokenBatch& batch);

  // (classes, batch) class probabilities and logits of the last forward.
  const T* probabilities() const { return probs_; }
  const T* logits() const { return logits_; }
  // (C, batch) pooled representation of the last forward.
  const T* pooled() const { return pooled_; }

 private:
  using Base = TransformerStack<T>;
  using Base::add_tensor, Base::block_particles, Base::grad, Base::param;
  using Base::blocks_, Base::buffers_, Base::gradients_, Base::parameters_, Base::shape_,
      Base::tensors_, Base::wte_, Base::wpe_, Base::lnf_w_, Base::lnf_b_;

  void allocate_activations();

  int max_batch_, max_length_;
  std::size_t cls_w_, cls_b_;
  T *embedding_, *embedding_mask_, *drop_embedding_, *lnf_, *lnf_mean_, *lnf_rstd_, *pooled_,
      *logits_, *probs_;
  double* row_loss_;         // cross-entropy terms of the rows (B)
  T *d_pooled_, *d_logits_;  // the head's gradients, in buffers_'s backward scratch
  bool dropout_active_ = false;
};

extern template class TransformerClassifier<float>;
extern template class TransformerClassifier<double>;

}  // namespace cpm
