#pragma once
// The causal decoder for next-token tasks (associative recall, MQAR): token + learned position
// embeddings (none with shape.position_embedding = false), a stack of pre-LayerNorm blocks with
// causal attention (transformer/transformer_block.hpp)
//   x ← x + Proj(CausalAttention(LN1(x))),   x ← x + FC2(GELU(FC1(LN2(x))))   (d_ff = 0: no MLP),
// or, with shape.conv_kernel = k > 0, the hybrid of Zoology's MQAR anchor (Arora et al. 2023):
// even layers mix the sequence with BaseConv instead of attention,
//   h = LN1(x),  x ← x + ShortConv_k(h) ⊙ (W_p h + b_p) + h
// (transformer/short_convolution.hpp), odd layers with attention as above;
// a final LayerNorm and a linear head onto the vocabulary, trained with cross-entropy on the scored
// positions only (target ≥ 0; −1 marks a position that is not scored). The head runs on the scored
// positions alone, so a task that scores few positions of a long sequence pays for few (V × C)
// products. The attention is the causal form of each kind (docs/model.md §2, "Causal (decoder)
// attention"). Parameters live in one allocation, activations in another, both sized once for
// (max_batch, max_length, max_scored); a training step allocates nothing.
//
// T is float for training and double for the finite-difference tests.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "transformer/attention_layout.hpp"
#include "transformer/matrix_product.hpp"
#include "transformer/model_shape.hpp"
#include "transformer/transformer_stack.hpp"

namespace cpm {

// A batch of equal-length sequences: tokens and targets (batch, length) row-major; targets may be
// null (inference), a target of −1 is not scored.
struct DecoderBatch {
  const int* tokens = nullptr;
  const int* targets = nullptr;
  int size = 0;
  int length = 0;
};

template <class T>
class TransformerDecoder : public TransformerStack<T> {
 public:
  // shape.vocabulary is both the input and the output vocabulary (shape.classes is not used);
  // max_scored bounds the scored positions of one batch (0: max_batch · max_length).
  TransformerDecoder(const ModelShape& shape, int max_batch, int max_length, int max_scored = 0);

  // GPT-2 style initialisation: N(0, 0.02) matrices, zero biases, unit LayerNorm weights; the
  // short convolutions' weights and biases as PyTorch's Conv1d, U(±1/√k) (fan-in k per channel).
  // Parameter tensors of a BaseConv layer l: layers.l.conv.weight (C, k), layers.l.conv.bias,
  // layers.l.conv.proj.weight (C, C), layers.l.conv.proj.bias, besides ln1 (and the MLP's). With
  // QK normalisation layers.l.attention.qk_scale (1, heads) starts at τ.
  void initialise_parameters(std::uint64_t seed);

  // Runs the network; returns the mean cross-entropy over the scored positions (0 when there are
  // none or targets is null).
  double forward(const DecoderBatch& batch);
  // Adds d loss / d parameters of the last forward (which must have had targets) to gradients(),
  // and with `particles` d loss / d particles to particle_gradients() (trainable particles).
  void backward(const DecoderBatch& batch, bool particles = false);

  // The scored positions of the last forward, as indices b·L + t, and their (V, scored) logits
  // and probabilities, whose columns lie logits_stride() apart: V, or V and a cache line when V
  // values fill whole 4 KB pages (padded_leading_dimension, transformer/matrix_product.hpp).
  int scored() const { return scored_count_; }
  const std::vector<int>& scored_positions() const { return scored_positions_; }
  const T* logits() const { return logits_; }
  const T* probabilities() const { return probs_; }
  std::ptrdiff_t logits_stride() const { return padded_leading_dimension<T>(shape_.vocabulary); }
  // The most probable token at scored position s of the last forward.
  int prediction(int s) const;

 private:
  using Base = TransformerStack<T>;
  using Base::add_tensor, Base::block_particle_gradients, Base::block_particles, Base::grad,
      Base::param;
  using Base::blocks_, Base::buffers_, Base::gradients_, Base::parameters_, Base::particles_,
      Base::shape_, Base::tensors_, Base::wte_, Base::wpe_, Base::lnf_w_, Base::lnf_b_;

  void allocate_activations();

  int max_batch_, max_length_, max_scored_;
  std::size_t head_w_, head_b_;
  T *embedding_, *lnf_, *lnf_mean_, *lnf_rstd_, *gathered_, *logits_, *probs_;
  double* row_loss_;  // cross-entropy terms of the scored positions (S)
  std::vector<int> scored_positions_, scored_targets_, full_lengths_;
  int scored_count_ = 0;
  T *d_gathered_, *d_logits_;  // the head's gradients, in buffers_'s backward scratch
};

extern template class TransformerDecoder<float>;
extern template class TransformerDecoder<double>;

}  // namespace cpm
