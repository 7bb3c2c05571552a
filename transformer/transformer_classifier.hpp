#pragma once
// The Transformer classifier: token + learned position embeddings, pre-LayerNorm encoder blocks
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
#include "transformer/linear_attention.hpp"
#include "transformer/model_shape.hpp"
#include "transformer/parameter_tensors.hpp"

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
  const T* qkv(int layer) const { return layer_acts_[layer].qkv; }
  AttentionLayout attention_layout(int batch, int length) const;
  // The scale applied to projected tokens before the feature map (d_head^{-1/4}).
  T feature_input_scale() const;

 private:
  struct LayerParameters {
    std::size_t ln1_w, ln1_b, qkv_w, qkv_b, proj_w, proj_b, ln2_w, ln2_b, fc_w, fc_b, fc_proj_w,
        fc_proj_b;
  };
  struct LayerActivations {
    // input: the residual stream entering the layer; residual = input + dropout(att_proj);
    // output = residual + dropout(fc_proj). Masks hold the dropout multipliers.
    T *input, *ln1, *ln1_mean, *ln1_rstd, *qkv, *att, *att_proj, *att_mask, *residual, *ln2,
        *ln2_mean, *ln2_rstd, *fc, *fc_gelu, *fc_proj, *fc_mask, *output, *lse;
    LinearAttentionCache<T> cache;
  };

  std::size_t add_tensor(const std::string& name, int rows, int cols, bool decay);
  void allocate_activations();
  T* param(std::size_t offset) { return parameters_.data() + offset; }
  T* grad(std::size_t offset) { return gradients_.data() + offset; }

  ModelShape shape_;
  int max_batch_, max_length_;
  std::vector<ParameterTensor> tensors_;
  std::size_t wte_, wpe_, lnf_w_, lnf_b_, cls_w_, cls_b_;
  std::vector<LayerParameters> layer_params_;
  std::vector<T> parameters_, gradients_, particles_;

  // Activations (one allocation) and backward scratch (a second one, reused by every layer).
  std::vector<T> activations_;
  std::vector<double> activations_double_;
  std::vector<LayerActivations> layer_acts_;
  T *embedding_, *embedding_mask_, *drop_embedding_, *lnf_, *lnf_mean_, *lnf_rstd_, *pooled_,
      *logits_, *probs_;
  double* row_loss_;  // cross-entropy terms of the rows (B)
  std::vector<T> backward_scratch_;
  T *d_residual_, *d_a_, *d_b_, *d_ff_a_, *d_ff_b_, *d_qkv_, *d_pooled_, *d_logits_;
  std::vector<T> linear_scratch_;  // per-chunk weight gradients of the linear layers
  std::vector<T> attention_scratch_;
  std::vector<double> attention_scratch_double_;
  bool dropout_active_ = false;
};

extern template class TransformerClassifier<float>;
extern template class TransformerClassifier<double>;

}  // namespace cpm
