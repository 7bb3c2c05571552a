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
#include "transformer/parameter_tensors.hpp"
#include "transformer/transformer_block.hpp"

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
class TransformerClassifier {
 public:
  TransformerClassifier(const ModelShape& shape, int max_batch, int max_length);

  const ModelShape& shape() const { return shape_; }
  const std::vector<ParameterTensor>& tensors() const { return tensors_; }
  const ParameterTensor& tensor(const std::string& name) const;

  std::vector<T>& parameters() { return parameters_; }
  const std::vector<T>& parameters() const { return parameters_; }
  std::vector<T>& gradients() { return gradients_; }
  // Particles of every head, (layers, heads, m, d_head) row-major; frozen during training.
  std::vector<T>& particles() { return particles_; }
  const std::vector<T>& particles() const { return particles_; }
  T* head_particles(int layer, int head);
  // One flag per parameter: 1 where weight decay applies.
  std::vector<unsigned char> weight_decay_mask() const;

  // GPT-2 style initialisation: N(0, 0.02) matrices, zero biases, unit LayerNorm weights.
  void initialise_parameters(std::uint64_t seed);

  // Runs the network; returns the mean cross-entropy when labels are given, else 0. With
  // training = true, dropout masks are drawn from (seed, step).
  double forward(const TokenBatch& batch, bool training = false, std::uint64_t step = 0,
                 std::uint64_t seed = 0);
  // Adds d loss / d parameters of the last forward (which must have had labels) to gradients().
  void backward(const TokenBatch& batch);
  void zero_gradients();

  // (classes, batch) class probabilities and logits of the last forward.
  const T* probabilities() const { return probs_; }
  const T* logits() const { return logits_; }
  // (C, batch) pooled representation of the last forward.
  const T* pooled() const { return pooled_; }
  // The input of layer `layer`'s attention after its q|k|v projection, and where head h's keys sit.
  const T* qkv(int layer) const { return blocks_[layer].qkv(); }
  AttentionLayout attention_layout(int batch, int length) const;
  // The scale applied to projected tokens before the feature map (d_head^{-1/4}).
  T feature_input_scale() const;

 private:
  using Block = TransformerBlock<T>;

  std::size_t add_tensor(const std::string& name, int rows, int cols, bool decay);
  void allocate_activations();
  T* param(std::size_t offset) { return parameters_.data() + offset; }
  T* grad(std::size_t offset) { return gradients_.data() + offset; }
  // Layer `layer`'s particles, null without linear attention.
  const T* block_particles(int layer) const;

  ModelShape shape_;
  int max_batch_, max_length_;
  std::vector<ParameterTensor> tensors_;
  std::size_t wte_, wpe_, lnf_w_, lnf_b_, cls_w_, cls_b_;
  std::vector<Block> blocks_;
  std::vector<T> parameters_, gradients_, particles_;

  // Activations (one allocation) and backward scratch (a second one, reused by every layer).
  ModelBuffers<T> buffers_;
  T *embedding_, *embedding_mask_, *drop_embedding_, *lnf_, *lnf_mean_, *lnf_rstd_, *pooled_,
      *logits_, *probs_;
  double* row_loss_;         // cross-entropy terms of the rows (B)
  T *d_pooled_, *d_logits_;  // the head's gradients, in buffers_'s backward scratch
  bool dropout_active_ = false;
};

extern template class TransformerClassifier<float>;
extern template class TransformerClassifier<double>;

}  // namespace cpm
