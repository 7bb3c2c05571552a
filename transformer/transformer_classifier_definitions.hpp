#pragma once
// The member definitions of TransformerClassifier<T>, for the files that instantiate it:
// transformer/transformer_classifier.cpp (float, what `cpm train` runs) and
// transformer/transformer_classifier_double.cpp (double, for the finite-difference checks of the
// backward pass; a library of its own, so that building the `cpm` command does not compile it).
#include "transformer/transformer_classifier.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/random_stream.hpp"
#include "transformer/cross_entropy.hpp"
#include "transformer/dropout.hpp"
#include "transformer/elementwise.hpp"
#include "transformer/embedding.hpp"
#include "transformer/layer_norm.hpp"
#include "transformer/linear_layer.hpp"
#include "transformer/mean_pooling.hpp"
#include "transformer/thread_index.hpp"

namespace cpm {

template <class T>
TransformerClassifier<T>::TransformerClassifier(const ModelShape& shape, int max_batch,
                                                int max_length)
    : TransformerStack<T>(shape), max_batch_(max_batch), max_length_(max_length) {
  shape_.validate();
  if (shape.d_ff < 1) throw std::invalid_argument("the classifier needs d_ff ≥ 1");
  if (shape.conv_kernel != 0 || !shape.position_embedding)
    throw std::invalid_argument(
        "the classifier has attention layers with position embeddings only: conv_kernel = 0 "
        "and position_embedding = true");
  if (shape.attention == AttentionKind::linear &&
      particle_rows(shape.feature_map, shape.features, shape.head_size()) != shape.features)
    throw std::invalid_argument("the classifier keeps one particle per feature: " +
                                feature_map_name(shape.feature_map.kind) + " is not supported");
  if (max_batch < 1 || max_length < 1 || max_length > shape.max_length)
    throw std::invalid_argument("batch buffers need 1 ≤ max_length ≤ the model's max_length");
  this->add_body(false);
  cls_w_ = add_tensor("classifier.weight", shape.classes, shape.d_model, true);
  cls_b_ = add_tensor("classifier.bias", 1, shape.classes, false);
  this->allocate_parameters();
  allocate_activations();
}

template <class T>
void TransformerClassifier<T>::allocate_activations() {
  const std::size_t N = static_cast<std::size_t>(max_batch_) * max_length_, B = max_batch_;
  const std::size_t C = shape_.d_model, K = shape_.classes;
  const std::size_t BH = static_cast<std::size_t>(max_batch_) * shape_.heads, L = max_length_;

  ModelBuffers<T>& b = buffers_;
  auto take = [&](std::size_t n) { return b.take(n); };
  auto take_double = [&](std::size_t n) { return b.take_double(n); };
  b.allocate_activations([&] {
    embedding_ = take(C * N);
    embedding_mask_ = take(C * N);
    drop_embedding_ = take(C * N);
    for (int l = 0; l < shape_.layers; ++l)
      blocks_[l].plan(l == 0 ? drop_embedding_ : blocks_[l - 1].output(), take, take_double, N, BH,
                      L, true);
    lnf_ = take(C * N);
    lnf_mean_ = take(N);
    lnf_rstd_ = take(N);
    pooled_ = take(C * B);
    logits_ = take(K * B);
    probs_ = take(K * B);
    row_loss_ = take_double(B);
  });

  d_pooled_ = b.allocate_scratch(shape_, N, max_length_, false, C * B + K * B, K);
  d_logits_ = d_pooled_ + C * B;
}

template <class T>
void TransformerClassifier<T>::initialise_parameters(std::uint64_t seed) {
  initialise_gpt2_parameters(parameters_, tensors_, seed);
  this->initialise_qk_scales();
}

template <class T>
double TransformerClassifier<T>::forward(const TokenBatch& batch, bool training, std::uint64_t step,
                                         std::uint64_t seed) {
  const int B = batch.size, L = batch.length, C = shape_.d_model;
  if (B < 1 || B > max_batch_ || L < 1 || L > max_length_)
    throw std::invalid_argument("batch larger than the buffers the model was built for");
  const int N = B * L, K = shape_.classes;
  const std::ptrdiff_t NC = static_cast<std::ptrdiff_t>(N) * C;
  const double p = training ? shape_.dropout : 0.0;
  dropout_active_ = p > 0.0;
  const AttentionLayout layout = this->attention_layout(B, L);

  embedding_forward(embedding_, batch.tokens, param(wte_), param(wpe_), B, L, C);  // (C, N)
  if (dropout_active_) {
    dropout_mask(embedding_mask_, p, seed, 0, step, N, C);
    dropout_forward(drop_embedding_, embedding_, embedding_mask_, NC);
  } else {
    parallel_copy(drop_embedding_, embedding_, NC);
  }
  const DropoutDraw dropout{dropout_active_ ? p : 0.0, seed, step};
  for (int l = 0; l < shape_.layers; ++l)
    blocks_[l].forward(parameters_.data(), block_particles(l), batch.lengths, layout, dropout,
                       buffers_.scratch());
  const T* top = blocks_.back().output();
  layer_norm_forward(lnf_, lnf_mean_, lnf_rstd_, top, param(lnf_w_), param(lnf_b_), N, C);
  mean_pooling_forward(pooled_, lnf_, batch.lengths, B, L, C);  // (C, B)
  linear_forward(logits_, pooled_, param(cls_w_), param(cls_b_), B, C, K,
                 buffers_.scratch().linear);  // (K, B)
  return cross_entropy_forward(probs_, logits_, batch.labels, B, K, row_loss_);
}

template <class T>
void TransformerClassifier<T>::backward(const TokenBatch& batch) {
  if (!batch.labels) throw std::invalid_argument("backward needs labels");
  const int B = batch.size, L = batch.length, C = shape_.d_model;
  const int N = B * L, K = shape_.classes;
  const std::ptrdiff_t NC = static_cast<std::ptrdiff_t>(N) * C;
  const BlockScratch<T>& scratch = buffers_.scratch();
  const AttentionLayout layout = this->attention_layout(B, L);

  cross_entropy_backward(d_logits_, probs_, batch.labels, B, K);
  // logits = W_cls pooled + b
  linear_backward(d_pooled_, grad(cls_w_), grad(cls_b_), d_logits_, pooled_, param(cls_w_), B, C, K,
                  scratch.linear);
  // pooled = mean_{t<len} lnf_t
  mean_pooling_backward(scratch.d_a, d_pooled_, batch.lengths, B, L, C);
  // lnf = LN(top)
  parallel_zero(scratch.d_residual, NC);
  layer_norm_backward(scratch.d_residual, grad(lnf_w_), grad(lnf_b_), scratch.d_a,
                      blocks_.back().output(), param(lnf_w_), lnf_mean_, lnf_rstd_, N, C,
                      scratch.linear);
  for (int l = shape_.layers - 1; l >= 0; --l)
    blocks_[l].backward(gradients_.data(), parameters_.data(), block_particles(l), nullptr,
                        batch.lengths, layout, dropout_active_, buffers_.scratch());
  // input of layer 0 = dropout(embedding)
  if (dropout_active_)
    dropout_backward(scratch.d_a, scratch.d_residual, embedding_mask_, NC);
  else
    parallel_copy(scratch.d_a, scratch.d_residual, NC);
  embedding_backward(grad(wte_), grad(wpe_), scratch.d_a, batch.tokens, B, L, C);
}

}  // namespace cpm
