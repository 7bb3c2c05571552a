#pragma once
// The member definitions of TransformerDecoder<T>, for the files that instantiate it:
// transformer/transformer_decoder.cpp (float) and transformer/transformer_decoder_double.cpp
// (double, in the cpm_double library of the gradient checks).
#include "transformer/transformer_decoder.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/random_stream.hpp"
#include "transformer/cross_entropy.hpp"
#include "transformer/elementwise.hpp"
#include "transformer/embedding.hpp"
#include "transformer/layer_norm.hpp"
#include "transformer/linear_layer.hpp"
#include "transformer/thread_index.hpp"

namespace cpm {

template <class T>
TransformerDecoder<T>::TransformerDecoder(const ModelShape& shape, int max_batch, int max_length,
                                          int max_scored)
    : TransformerStack<T>(shape),
      max_batch_(max_batch),
      max_length_(max_length),
      max_scored_(max_scored > 0 ? max_scored : max_batch * max_length) {
  shape_.classes = shape_.vocabulary;
  shape_.validate();
  if (shape_.dropout != 0.0) throw std::invalid_argument("the decoder has no dropout: set it to 0");
  if (max_batch < 1 || max_length < 1 || max_length > shape.max_length)
    throw std::invalid_argument("batch buffers need 1 ≤ max_length ≤ the model's max_length");
  this->add_body(true);
  head_w_ = add_tensor("head.weight", shape.vocabulary, shape.d_model, true);
  head_b_ = add_tensor("head.bias", 1, shape.vocabulary, false);
  this->allocate_parameters();
  allocate_activations();
}

template <class T>
void TransformerDecoder<T>::allocate_activations() {
  const std::size_t N = static_cast<std::size_t>(max_batch_) * max_length_;
  const std::size_t C = shape_.d_model, V = shape_.vocabulary, S = max_scored_;
  const std::size_t ld = static_cast<std::size_t>(logits_stride());  // of logits and probabilities
  const std::size_t BH = static_cast<std::size_t>(max_batch_) * shape_.heads, L = max_length_;

  ModelBuffers<T>& b = buffers_;
  auto take = [&](std::size_t n) { return b.take(n); };
  auto take_double = [&](std::size_t n) { return b.take_double(n); };
  b.allocate_activations([&] {
    embedding_ = take(C * N);
    for (int l = 0; l < shape_.layers; ++l)
      blocks_[l].plan(l == 0 ? embedding_ : blocks_[l - 1].output(), take, take_double, N, BH, L,
                      false);
    lnf_ = take(C * N);
    lnf_mean_ = take(N);
    lnf_rstd_ = take(N);
    gathered_ = take(C * S);
    logits_ = take(ld * S);
    probs_ = take(ld * S);
    row_loss_ = take_double(S);
  });
  scored_positions_.reserve(S);
  scored_targets_.reserve(S);
  full_lengths_.assign(max_batch_, 0);

  d_gathered_ = b.allocate_scratch(shape_, N, max_length_, true, C * S + ld * S, V);
  d_logits_ = d_gathered_ + C * S;
}

template <class T>
void TransformerDecoder<T>::initialise_parameters(std::uint64_t seed) {
  initialise_gpt2_parameters(parameters_, tensors_, seed);
  // The short convolutions as PyTorch's Conv1d: weight and bias ~ U(±1/√fan_in), fan_in = k for a
  // depthwise convolution; tensor t draws from its own stream.
  const double bound = shape_.conv_kernel > 0 ? 1.0 / std::sqrt(double(shape_.conv_kernel)) : 0.0;
  for (std::size_t t = 0; t < tensors_.size(); ++t) {
    const ParameterTensor& p = tensors_[t];
    const auto ends_with = [&](const std::string& tail) {
      return p.name.size() >= tail.size() &&
             p.name.compare(p.name.size() - tail.size(), tail.size(), tail) == 0;
    };
    if (!ends_with(".conv.weight") && !ends_with(".conv.bias")) continue;
    RandomStream stream(seed, RandomPurpose::parameter_init, t, 0);
    for (std::size_t i = 0; i < p.size(); ++i)
      parameters_[p.offset + i] = static_cast<T>(bound * (2.0 * stream.uniform() - 1.0));
  }
  this->initialise_qk_scales();
}

template <class T>
int TransformerDecoder<T>::prediction(int s) const {
  const T* p = probs_ + s * logits_stride();
  return static_cast<int>(std::max_element(p, p + shape_.vocabulary) - p);
}

template <class T>
double TransformerDecoder<T>::forward(const DecoderBatch& batch) {
  const int B = batch.size, L = batch.length, C = shape_.d_model;
  if (B < 1 || B > max_batch_ || L < 1 || L > max_length_)
    throw std::invalid_argument("batch larger than the buffers the decoder was built for");
  const int N = B * L, V = shape_.vocabulary;
  const AttentionLayout layout = this->attention_layout(B, L);
  std::fill_n(full_lengths_.begin(), B, L);

  embedding_forward(embedding_, batch.tokens, param(wte_),
                    shape_.position_embedding ? param(wpe_) : nullptr, B, L, C);  // (C, N)
  for (int l = 0; l < shape_.layers; ++l)
    blocks_[l].forward(parameters_.data(), block_particles(l), full_lengths_.data(), layout, {},
                       buffers_.scratch());
  layer_norm_forward(lnf_, lnf_mean_, lnf_rstd_, blocks_.back().output(), param(lnf_w_),
                     param(lnf_b_), N, C);

  // The scored columns of lnf, in (batch, position) order: (C, S).
  scored_positions_.clear();
  scored_targets_.clear();
  for (int n = 0; n < N; ++n)
    if (!batch.targets || batch.targets[n] >= 0) {
      if (static_cast<int>(scored_positions_.size()) == max_scored_)
        throw std::invalid_argument("more scored positions than the decoder was built for");
      if (batch.targets && batch.targets[n] >= V)
        throw std::invalid_argument("a target lies outside the vocabulary");
      scored_positions_.push_back(n);
      scored_targets_.push_back(batch.targets ? batch.targets[n] : 0);
    }
  scored_count_ = static_cast<int>(scored_positions_.size());
  if (scored_count_ == 0) return 0.0;
  for (int s = 0; s < scored_count_; ++s)
    std::copy_n(lnf_ + static_cast<std::ptrdiff_t>(scored_positions_[s]) * C, C,
                gathered_ + static_cast<std::ptrdiff_t>(s) * C);
  linear_forward(logits_, gathered_, param(head_w_), param(head_b_), scored_count_, C, V,
                 buffers_.scratch().linear, static_cast<const T*>(nullptr),
                 logits_stride());  // (V, S)
  return cross_entropy_forward(probs_, logits_, batch.targets ? scored_targets_.data() : nullptr,
                               scored_count_, V, row_loss_, logits_stride());
}

template <class T>
void TransformerDecoder<T>::backward(const DecoderBatch& batch, bool particles) {
  if (!batch.targets) throw std::invalid_argument("backward needs targets");
  if (particles && particles_.empty())
    throw std::invalid_argument("particle gradients need an attention with particles");
  const int B = batch.size, L = batch.length, C = shape_.d_model;
  const int N = B * L, V = shape_.vocabulary;
  const std::ptrdiff_t NC = static_cast<std::ptrdiff_t>(N) * C;
  const BlockScratch<T>& scratch = buffers_.scratch();
  const AttentionLayout layout = this->attention_layout(B, L);

  // lnf, scattered back from the scored columns; zero elsewhere.
  parallel_zero(scratch.d_a, NC);
  if (scored_count_ > 0) {
    cross_entropy_backward(d_logits_, probs_, scored_targets_.data(), scored_count_, V,
                           logits_stride());
    // logits = W_head gathered + b
    linear_backward(d_gathered_, grad(head_w_), grad(head_b_), d_logits_, gathered_, param(head_w_),
                    scored_count_, C, V, scratch.linear, logits_stride());
    for (int s = 0; s < scored_count_; ++s)
      std::copy_n(d_gathered_ + static_cast<std::ptrdiff_t>(s) * C, C,
                  scratch.d_a + static_cast<std::ptrdiff_t>(scored_positions_[s]) * C);
  }
  // lnf = LN(top)
  parallel_zero(scratch.d_residual, NC);
  layer_norm_backward(scratch.d_residual, grad(lnf_w_), grad(lnf_b_), scratch.d_a,
                      blocks_.back().output(), param(lnf_w_), lnf_mean_, lnf_rstd_, N, C,
                      scratch.linear);
  for (int l = shape_.layers - 1; l >= 0; --l) {
    T* particle_gradients = particles ? block_particle_gradients(l) : nullptr;
    blocks_[l].backward(gradients_.data(), parameters_.data(), block_particles(l),
                        particle_gradients, full_lengths_.data(), layout, false,
                        buffers_.scratch());
  }
  // input of layer 0 = embedding
  embedding_backward(grad(wte_), shape_.position_embedding ? grad(wpe_) : nullptr,
                     scratch.d_residual, batch.tokens, B, L, C);
}

}  // namespace cpm
