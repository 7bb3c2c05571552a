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
#include "transformer/embedding.hpp"
#include "transformer/gelu.hpp"
#include "transformer/layer_norm.hpp"
#include "transformer/linear_layer.hpp"
#include "transformer/mean_pooling.hpp"
#include "transformer/softmax_attention.hpp"
#include "transformer/thread_index.hpp"
#include "transformer/uniform_attention.hpp"

namespace cpm {

namespace classifier_detail {
// Dropout sites: 0 the embedding, then two per layer (attention output, feed-forward output).
inline std::uint64_t attention_site(int layer) {
  return 1 + 2 * static_cast<std::uint64_t>(layer);
}
inline std::uint64_t feed_forward_site(int layer) {
  return 2 + 2 * static_cast<std::uint64_t>(layer);
}
}  // namespace classifier_detail

template <class T>
TransformerClassifier<T>::TransformerClassifier(const ModelShape& shape, int max_batch,
                                                int max_length)
    : shape_(shape), max_batch_(max_batch), max_length_(max_length) {
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
  const int C = shape.d_model, F = shape.d_ff, R = (shape.qk_tied ? 2 : 3) * C;
  wte_ = add_tensor("embedding.token", shape.vocabulary, C, true);
  wpe_ = add_tensor("embedding.position", shape.max_length, C, true);
  for (int l = 0; l < shape.layers; ++l) {
    const std::string p = "layers." + std::to_string(l) + ".";
    LayerParameters lp;
    lp.ln1_w = add_tensor(p + "ln1.weight", 1, C, false);
    lp.ln1_b = add_tensor(p + "ln1.bias", 1, C, false);
    lp.qkv_w = add_tensor(p + "attention.qkv.weight", R, C, true);
    lp.qkv_b = add_tensor(p + "attention.qkv.bias", 1, R, false);
    lp.proj_w = add_tensor(p + "attention.proj.weight", C, C, true);
    lp.proj_b = add_tensor(p + "attention.proj.bias", 1, C, false);
    lp.ln2_w = add_tensor(p + "ln2.weight", 1, C, false);
    lp.ln2_b = add_tensor(p + "ln2.bias", 1, C, false);
    lp.fc_w = add_tensor(p + "mlp.fc.weight", F, C, true);
    lp.fc_b = add_tensor(p + "mlp.fc.bias", 1, F, false);
    lp.fc_proj_w = add_tensor(p + "mlp.proj.weight", C, F, true);
    lp.fc_proj_b = add_tensor(p + "mlp.proj.bias", 1, C, false);
    layer_params_.push_back(lp);
  }
  lnf_w_ = add_tensor("final_ln.weight", 1, C, false);
  lnf_b_ = add_tensor("final_ln.bias", 1, C, false);
  cls_w_ = add_tensor("classifier.weight", shape.classes, C, true);
  cls_b_ = add_tensor("classifier.bias", 1, shape.classes, false);
  const std::size_t total = tensors_.back().offset + tensors_.back().size();
  parameters_.assign(total, T(0));
  gradients_.assign(total, T(0));
  if (shape.attention == AttentionKind::linear)
    particles_.assign(
        static_cast<std::size_t>(shape.layers) * shape.heads * shape.features * shape.head_size(),
        T(0));
  allocate_activations();
}

template <class T>
std::size_t TransformerClassifier<T>::add_tensor(const std::string& name, int rows, int cols,
                                                 bool decay) {
  return append_tensor(tensors_, name, rows, cols, decay);
}

template <class T>
const ParameterTensor& TransformerClassifier<T>::tensor(const std::string& name) const {
  return find_tensor(tensors_, name);
}

template <class T>
T* TransformerClassifier<T>::head_particles(int layer, int head) {
  const std::size_t block = static_cast<std::size_t>(shape_.features) * shape_.head_size();
  return particles_.data() + (static_cast<std::size_t>(layer) * shape_.heads + head) * block;
}

template <class T>
std::vector<unsigned char> TransformerClassifier<T>::weight_decay_mask() const {
  return cpm::weight_decay_mask(tensors_, parameters_.size());
}

template <class T>
AttentionLayout TransformerClassifier<T>::attention_layout(int batch, int length) const {
  return {batch, length, shape_.heads, shape_.head_size(), shape_.qk_tied};
}

template <class T>
T TransformerClassifier<T>::feature_input_scale() const {
  return cpm::feature_input_scale<T>(shape_.feature_map, shape_.head_size());
}

template <class T>
void TransformerClassifier<T>::allocate_activations() {
  const std::size_t N = static_cast<std::size_t>(max_batch_) * max_length_, B = max_batch_;
  const std::size_t C = shape_.d_model, F = shape_.d_ff, K = shape_.classes;
  const std::size_t R = (shape_.qk_tied ? 2 : 3) * C;
  const int m = shape_.features, hs = shape_.head_size();
  const std::size_t BH = static_cast<std::size_t>(max_batch_) * shape_.heads, L = max_length_;
  const bool linear = shape_.attention == AttentionKind::linear;

  // Two passes over the same plan: the first counts, the second hands out pointers.
  std::size_t count = 0, count_double = 0;
  T* base = nullptr;
  double* base_double = nullptr;
  auto take = [&](std::size_t n) {
    T* p = base ? base + count : nullptr;
    count += n;
    return p;
  };
  auto take_double = [&](std::size_t n) {
    double* p = base_double ? base_double + count_double : nullptr;
    count_double += n;
    return p;
  };
  auto plan = [&] {
    count = count_double = 0;
    layer_acts_.clear();
    embedding_ = take(C * N);
    embedding_mask_ = take(C * N);
    drop_embedding_ = take(C * N);
    for (int l = 0; l < shape_.layers; ++l) {
      LayerActivations a{};
      a.input = l == 0 ? drop_embedding_ : layer_acts_.back().output;
      a.ln1 = take(C * N);
      a.ln1_mean = take(N);
      a.ln1_rstd = take(N);
      a.qkv = take(R * N);
      a.att = take(C * N);
      a.att_proj = take(C * N);
      a.att_mask = take(C * N);
      a.residual = take(C * N);
      a.ln2 = take(C * N);
      a.ln2_mean = take(N);
      a.ln2_rstd = take(N);
      a.fc = take(F * N);
      a.fc_gelu = take(F * N);
      a.fc_proj = take(C * N);
      a.fc_mask = take(C * N);
      a.output = take(C * N);
      if (linear) {
        a.cache.phi_q = take(BH * m * L);
        a.cache.phi_k = take(BH * m * L);
        a.cache.inverse_denominator = take(BH * L);
        a.cache.kv = take_double(BH * m * hs);
        a.cache.z = take_double(BH * m);
      } else if (shape_.attention == AttentionKind::softmax) {
        a.lse = take(BH * L);
      }
      layer_acts_.push_back(a);
    }
    lnf_ = take(C * N);
    lnf_mean_ = take(N);
    lnf_rstd_ = take(N);
    pooled_ = take(C * B);
    logits_ = take(K * B);
    probs_ = take(K * B);
    row_loss_ = take_double(B);
  };
  plan();
  activations_.assign(count, T(0));
  activations_double_.assign(count_double, 0.0);
  base = activations_.data();
  base_double = activations_double_.data();
  plan();

  backward_scratch_.assign(3 * C * N + 2 * F * N + R * N + C * B + K * B, T(0));
  T* s = backward_scratch_.data();
  d_residual_ = s;
  d_a_ = d_residual_ + C * N;
  d_b_ = d_a_ + C * N;
  d_ff_a_ = d_b_ + C * N;
  d_ff_b_ = d_ff_a_ + F * N;
  d_qkv_ = d_ff_b_ + F * N;
  d_pooled_ = d_qkv_ + R * N;
  d_logits_ = d_pooled_ + C * B;

  const std::size_t widest = std::max({R * C, F * C, C * C, K * C});
  linear_scratch_.assign(kTokenChunks * widest, T(0));

  const int threads = max_threads();
  const std::size_t per_thread =
      linear ? linear_attention_scratch(m, max_length_, hs)
             : (shape_.attention == AttentionKind::softmax ? softmax_attention_scratch(max_length_)
                                                           : 0);
  attention_scratch_.assign(per_thread * threads, T(0));
  if (linear)
    attention_scratch_double_.assign(linear_attention_scratch_double(m, hs) * threads, 0.0);
}

template <class T>
void TransformerClassifier<T>::initialise_parameters(std::uint64_t seed) {
  initialise_gpt2_parameters(parameters_, tensors_, seed);
}

template <class T>
void TransformerClassifier<T>::zero_gradients() {
  std::fill(gradients_.begin(), gradients_.end(), T(0));
}

template <class T>
double TransformerClassifier<T>::forward(const TokenBatch& batch, bool training, std::uint64_t step,
                                         std::uint64_t seed) {
  const int B = batch.size, L = batch.length, C = shape_.d_model, F = shape_.d_ff;
  if (B < 1 || B > max_batch_ || L < 1 || L > max_length_)
    throw std::invalid_argument("batch larger than the buffers the model was built for");
  const int N = B * L, R = (shape_.qk_tied ? 2 : 3) * C, K = shape_.classes, m = shape_.features;
  const std::ptrdiff_t NC = static_cast<std::ptrdiff_t>(N) * C;
  const double p = training ? shape_.dropout : 0.0;
  dropout_active_ = p > 0.0;
  const AttentionLayout layout = attention_layout(B, L);

  embedding_forward(embedding_, batch.tokens, param(wte_), param(wpe_), B, L, C);  // (C, N)
  if (dropout_active_) {
    dropout_mask(embedding_mask_, p, seed, 0, step, N, C);
    dropout_forward(drop_embedding_, embedding_, embedding_mask_, NC);
  } else {
    std::copy_n(embedding_, NC, drop_embedding_);
  }
  for (int l = 0; l < shape_.layers; ++l) {
    const LayerParameters& w = layer_params_[l];
    LayerActivations& a = layer_acts_[l];
    layer_norm_forward(a.ln1, a.ln1_mean, a.ln1_rstd, a.input, param(w.ln1_w), param(w.ln1_b), N,
                       C);
    linear_forward(a.qkv, a.ln1, param(w.qkv_w), param(w.qkv_b), N, C, R);  // (R, N)
    if (shape_.attention == AttentionKind::linear)
      linear_attention_forward(a.att, a.cache, a.qkv, head_particles(l, 0), batch.lengths, layout,
                               shape_.feature_map, m, attention_scratch_.data(),
                               attention_scratch_double_.data());
    else if (shape_.attention == AttentionKind::uniform)
      uniform_attention_forward(a.att, a.qkv, batch.lengths, layout);
    else
      softmax_attention_forward(a.att, a.lse, a.qkv, batch.lengths, layout,
                                attention_scratch_.data());
    linear_forward(a.att_proj, a.att, param(w.proj_w), param(w.proj_b), N, C, C);
    if (dropout_active_) {
      dropout_mask(a.att_mask, p, seed, classifier_detail::attention_site(l), step, N, C);
      dropout_forward(a.residual, a.att_proj, a.att_mask, NC);
    } else {
      std::copy_n(a.att_proj, NC, a.residual);
    }
    for (std::ptrdiff_t i = 0; i < NC; ++i) a.residual[i] += a.input[i];  // x + dropout(proj)
    layer_norm_forward(a.ln2, a.ln2_mean, a.ln2_rstd, a.residual, param(w.ln2_w), param(w.ln2_b), N,
                       C);
    linear_forward(a.fc, a.ln2, param(w.fc_w), param(w.fc_b), N, C, F);  // (F, N)
    gelu_forward(a.fc_gelu, a.fc, static_cast<std::ptrdiff_t>(N) * F);
    linear_forward(a.fc_proj, a.fc_gelu, param(w.fc_proj_w), param(w.fc_proj_b), N, F, C);
    if (dropout_active_) {
      dropout_mask(a.fc_mask, p, seed, classifier_detail::feed_forward_site(l), step, N, C);
      dropout_forward(a.output, a.fc_proj, a.fc_mask, NC);
    } else {
      std::copy_n(a.fc_proj, NC, a.output);
    }
    for (std::ptrdiff_t i = 0; i < NC; ++i) a.output[i] += a.residual[i];  // residual + dropout(fc)
  }
  const T* top = layer_acts_.back().output;
  layer_norm_forward(lnf_, lnf_mean_, lnf_rstd_, top, param(lnf_w_), param(lnf_b_), N, C);
  mean_pooling_forward(pooled_, lnf_, batch.lengths, B, L, C);              // (C, B)
  linear_forward(logits_, pooled_, param(cls_w_), param(cls_b_), B, C, K);  // (K, B)
  return cross_entropy_forward(probs_, logits_, batch.labels, B, K, row_loss_);
}

template <class T>
void TransformerClassifier<T>::backward(const TokenBatch& batch) {
  if (!batch.labels) throw std::invalid_argument("backward needs labels");
  const int B = batch.size, L = batch.length, C = shape_.d_model, F = shape_.d_ff;
  const int N = B * L, R = (shape_.qk_tied ? 2 : 3) * C, K = shape_.classes, m = shape_.features;
  const std::ptrdiff_t NC = static_cast<std::ptrdiff_t>(N) * C;
  const AttentionLayout layout = attention_layout(B, L);

  cross_entropy_backward(d_logits_, probs_, batch.labels, B, K);
  // logits = W_cls pooled + b
  linear_backward(d_pooled_, grad(cls_w_), grad(cls_b_), d_logits_, pooled_, param(cls_w_), B, C, K,
                  linear_scratch_.data());
  // pooled = mean_{t<len} lnf_t
  mean_pooling_backward(d_a_, d_pooled_, batch.lengths, B, L, C);
  // lnf = LN(top)
  std::fill_n(d_residual_, NC, T(0));
  layer_norm_backward(d_residual_, grad(lnf_w_), grad(lnf_b_), d_a_, layer_acts_.back().output,
                      param(lnf_w_), lnf_mean_, lnf_rstd_, N, C);
  for (int l = shape_.layers - 1; l >= 0; --l) {
    const LayerParameters& w = layer_params_[l];
    const LayerActivations& a = layer_acts_[l];
    // out = residual + dropout(fc_proj): d residual = d out (kept in d_residual_), d fc_proj = d
    // out ⊙ mask
    if (dropout_active_)
      dropout_backward(d_a_, d_residual_, a.fc_mask, NC);
    else
      std::copy_n(d_residual_, NC, d_a_);
    // fc_proj = W fc_gelu + b
    linear_backward(d_ff_a_, grad(w.fc_proj_w), grad(w.fc_proj_b), d_a_, a.fc_gelu,
                    param(w.fc_proj_w), N, F, C, linear_scratch_.data());
    // fc_gelu = gelu(fc)
    gelu_backward(d_ff_b_, a.fc, d_ff_a_, static_cast<std::ptrdiff_t>(N) * F);
    // fc = W ln2 + b
    linear_backward(d_a_, grad(w.fc_w), grad(w.fc_b), d_ff_b_, a.ln2, param(w.fc_w), N, C, F,
                    linear_scratch_.data());
    // ln2 = LN(residual); adds the branch to d residual
    layer_norm_backward(d_residual_, grad(w.ln2_w), grad(w.ln2_b), d_a_, a.residual, param(w.ln2_w),
                        a.ln2_mean, a.ln2_rstd, N, C);
    // residual = input + dropout(att_proj)
    if (dropout_active_)
      dropout_backward(d_a_, d_residual_, a.att_mask, NC);
    else
      std::copy_n(d_residual_, NC, d_a_);
    // att_proj = W att + b
    linear_backward(d_b_, grad(w.proj_w), grad(w.proj_b), d_a_, a.att, param(w.proj_w), N, C, C,
                    linear_scratch_.data());
    // att = attention(qkv)
    std::fill_n(d_qkv_, static_cast<std::ptrdiff_t>(N) * R, T(0));
    if (shape_.attention == AttentionKind::linear)
      linear_attention_backward(d_qkv_, d_b_, a.att, a.cache, a.qkv, head_particles(l, 0),
                                batch.lengths, layout, shape_.feature_map, m,
                                attention_scratch_.data(), attention_scratch_double_.data());
    else if (shape_.attention == AttentionKind::uniform)
      uniform_attention_backward(d_qkv_, d_b_, batch.lengths, layout);
    else
      softmax_attention_backward(d_qkv_, d_b_, a.att, a.lse, a.qkv, batch.lengths, layout,
                                 attention_scratch_.data());
    // qkv = W ln1 + b
    linear_backward(d_a_, grad(w.qkv_w), grad(w.qkv_b), d_qkv_, a.ln1, param(w.qkv_w), N, C, R,
                    linear_scratch_.data());
    // ln1 = LN(input); adds the branch to d input
    layer_norm_backward(d_residual_, grad(w.ln1_w), grad(w.ln1_b), d_a_, a.input, param(w.ln1_w),
                        a.ln1_mean, a.ln1_rstd, N, C);
  }
  // input of layer 0 = dropout(embedding)
  if (dropout_active_)
    dropout_backward(d_a_, d_residual_, embedding_mask_, NC);
  else
    std::copy_n(d_residual_, NC, d_a_);
  embedding_backward(grad(wte_), grad(wpe_), d_a_, batch.tokens, B, L, C);
}

}  // namespace cpm
