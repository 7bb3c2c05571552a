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
#include "transformer/embedding.hpp"
#include "transformer/gelu.hpp"
#include "transformer/layer_norm.hpp"
#include "transformer/linear_layer.hpp"
#include "transformer/short_convolution.hpp"
#include "transformer/softmax_attention.hpp"
#include "transformer/thread_index.hpp"
#include "transformer/uniform_attention.hpp"

namespace cpm {

template <class T>
TransformerDecoder<T>::TransformerDecoder(const ModelShape& shape, int max_batch, int max_length,
                                          int max_scored)
    : shape_(shape),
      max_batch_(max_batch),
      max_length_(max_length),
      max_scored_(max_scored > 0 ? max_scored : max_batch * max_length) {
  shape_.classes = shape_.vocabulary;
  shape_.validate();
  if (shape_.dropout != 0.0) throw std::invalid_argument("the decoder has no dropout: set it to 0");
  if (max_batch < 1 || max_length < 1 || max_length > shape.max_length)
    throw std::invalid_argument("batch buffers need 1 ≤ max_length ≤ the model's max_length");
  const int C = shape.d_model, F = shape.d_ff, R = (shape.qk_tied ? 2 : 3) * C;
  wte_ = add_tensor("embedding.token", shape.vocabulary, C, true);
  if (shape.position_embedding) wpe_ = add_tensor("embedding.position", shape.max_length, C, true);
  for (int l = 0; l < shape.layers; ++l) {
    const std::string p = "layers." + std::to_string(l) + ".";
    LayerParameters lp{};
    lp.ln1_w = add_tensor(p + "ln1.weight", 1, C, false);
    lp.ln1_b = add_tensor(p + "ln1.bias", 1, C, false);
    if (shape.attention_layer(l)) {
      lp.qkv_w = add_tensor(p + "attention.qkv.weight", R, C, true);
      lp.qkv_b = add_tensor(p + "attention.qkv.bias", 1, R, false);
      lp.proj_w = add_tensor(p + "attention.proj.weight", C, C, true);
      lp.proj_b = add_tensor(p + "attention.proj.bias", 1, C, false);
    } else {
      // Conv1d's weight (C, 1, k) without its middle axis; it decays as the other weights.
      lp.conv_w = add_tensor(p + "conv.weight", C, shape.conv_kernel, true);
      lp.conv_b = add_tensor(p + "conv.bias", 1, C, false);
      lp.conv_proj_w = add_tensor(p + "conv.proj.weight", C, C, true);
      lp.conv_proj_b = add_tensor(p + "conv.proj.bias", 1, C, false);
    }
    if (has_mlp()) {
      lp.ln2_w = add_tensor(p + "ln2.weight", 1, C, false);
      lp.ln2_b = add_tensor(p + "ln2.bias", 1, C, false);
      lp.fc_w = add_tensor(p + "mlp.fc.weight", F, C, true);
      lp.fc_b = add_tensor(p + "mlp.fc.bias", 1, F, false);
      lp.fc_proj_w = add_tensor(p + "mlp.proj.weight", C, F, true);
      lp.fc_proj_b = add_tensor(p + "mlp.proj.bias", 1, C, false);
    }
    layer_params_.push_back(lp);
  }
  lnf_w_ = add_tensor("final_ln.weight", 1, C, false);
  lnf_b_ = add_tensor("final_ln.bias", 1, C, false);
  head_w_ = add_tensor("head.weight", shape.vocabulary, C, true);
  head_b_ = add_tensor("head.bias", 1, shape.vocabulary, false);
  const std::size_t total = tensors_.back().offset + tensors_.back().size();
  parameters_.assign(total, T(0));
  gradients_.assign(total, T(0));
  if (shape.attention == AttentionKind::linear) {
    particle_rows_ = cpm::particle_rows(shape.feature_map, shape.features, shape.head_size());
    particles_.assign(
        static_cast<std::size_t>(shape.layers) * shape.heads * particle_rows_ * shape.head_size(),
        T(0));
    particle_gradients_.assign(particles_.size(), T(0));
  }
  allocate_activations();
}

template <class T>
std::size_t TransformerDecoder<T>::add_tensor(const std::string& name, int rows, int cols,
                                              bool decay) {
  return append_tensor(tensors_, name, rows, cols, decay);
}

template <class T>
const ParameterTensor& TransformerDecoder<T>::tensor(const std::string& name) const {
  return find_tensor(tensors_, name);
}

template <class T>
T* TransformerDecoder<T>::head_particles(int layer, int head) {
  const std::size_t block = static_cast<std::size_t>(particle_rows_) * shape_.head_size();
  return particles_.data() + (static_cast<std::size_t>(layer) * shape_.heads + head) * block;
}

template <class T>
std::vector<unsigned char> TransformerDecoder<T>::weight_decay_mask() const {
  return cpm::weight_decay_mask(tensors_, parameters_.size());
}

template <class T>
T TransformerDecoder<T>::feature_input_scale() const {
  return cpm::feature_input_scale<T>(shape_.feature_map, shape_.head_size());
}

template <class T>
AttentionLayout TransformerDecoder<T>::attention_layout(int batch, int length) const {
  return {batch, length, shape_.heads, shape_.head_size(), shape_.qk_tied};
}

template <class T>
void TransformerDecoder<T>::allocate_activations() {
  const std::size_t N = static_cast<std::size_t>(max_batch_) * max_length_;
  const std::size_t C = shape_.d_model, F = shape_.d_ff, V = shape_.vocabulary, S = max_scored_;
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
    for (int l = 0; l < shape_.layers; ++l) {
      LayerActivations a{};
      a.input = l == 0 ? embedding_ : layer_acts_.back().output;
      a.ln1 = take(C * N);
      a.ln1_mean = take(N);
      a.ln1_rstd = take(N);
      const bool attention = shape_.attention_layer(l);
      if (attention) {
        a.qkv = take(R * N);
        a.att = take(C * N);
        a.att_proj = take(C * N);
      } else {
        a.conv = take(C * N);
        a.conv_proj = take(C * N);
      }
      a.residual = take(C * N);
      if (has_mlp()) {
        a.ln2 = take(C * N);
        a.ln2_mean = take(N);
        a.ln2_rstd = take(N);
        a.fc = take(F * N);
        a.fc_gelu = take(F * N);
        a.fc_proj = take(C * N);
        a.output = take(C * N);
      } else {
        a.output = a.residual;
      }
      if (attention && linear) {
        a.cache.phi_q = take(BH * m * L);
        a.cache.phi_k = take(BH * m * L);
        a.cache.inverse_denominator = take(BH * L);
        a.cache.kv = take_double(BH * m * hs);
        a.cache.z = take_double(BH * m);
      } else if (attention && shape_.attention == AttentionKind::softmax) {
        a.lse = take(BH * L);
      }
      layer_acts_.push_back(a);
    }
    lnf_ = take(C * N);
    lnf_mean_ = take(N);
    lnf_rstd_ = take(N);
    gathered_ = take(C * S);
    logits_ = take(V * S);
    probs_ = take(V * S);
    row_loss_ = take_double(S);
  };
  plan();
  activations_.assign(count, T(0));
  activations_double_.assign(count_double, 0.0);
  base = activations_.data();
  base_double = activations_double_.data();
  plan();
  scored_positions_.reserve(S);
  scored_targets_.reserve(S);
  full_lengths_.assign(max_batch_, 0);

  backward_scratch_.assign(3 * C * N + 2 * F * N + R * N + C * S + V * S, T(0));
  T* s = backward_scratch_.data();
  d_residual_ = s;
  d_a_ = d_residual_ + C * N;
  d_b_ = d_a_ + C * N;
  d_ff_a_ = d_b_ + C * N;
  d_ff_b_ = d_ff_a_ + F * N;
  d_qkv_ = d_ff_b_ + F * N;
  d_gathered_ = d_qkv_ + R * N;
  d_logits_ = d_gathered_ + C * S;

  const std::size_t widest = std::max({R * C, F * C, C * C, V * C});
  linear_scratch_.assign(kTokenChunks * widest, T(0));

  const int threads = max_threads();
  const std::size_t per_thread =
      linear ? causal_linear_attention_scratch(m, max_length_, hs)
             : (shape_.attention == AttentionKind::softmax ? softmax_attention_scratch(max_length_)
                                                           : 0);
  attention_scratch_.assign(per_thread * threads, T(0));
  if (linear)
    attention_scratch_double_.assign(causal_linear_attention_scratch_double(m, hs) * threads, 0.0);
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
}

template <class T>
void TransformerDecoder<T>::zero_gradients() {
  std::fill(gradients_.begin(), gradients_.end(), T(0));
  std::fill(particle_gradients_.begin(), particle_gradients_.end(), T(0));
}

template <class T>
int TransformerDecoder<T>::prediction(int s) const {
  const T* p = probs_ + static_cast<std::ptrdiff_t>(s) * shape_.vocabulary;
  return static_cast<int>(std::max_element(p, p + shape_.vocabulary) - p);
}

template <class T>
double TransformerDecoder<T>::forward(const DecoderBatch& batch) {
  const int B = batch.size, L = batch.length, C = shape_.d_model, F = shape_.d_ff;
  if (B < 1 || B > max_batch_ || L < 1 || L > max_length_)
    throw std::invalid_argument("batch larger than the buffers the decoder was built for");
  const int N = B * L, R = (shape_.qk_tied ? 2 : 3) * C, V = shape_.vocabulary, m = shape_.features;
  const std::ptrdiff_t NC = static_cast<std::ptrdiff_t>(N) * C;
  const AttentionLayout layout = attention_layout(B, L);
  std::fill_n(full_lengths_.begin(), B, L);

  embedding_forward(embedding_, batch.tokens, param(wte_),
                    shape_.position_embedding ? param(wpe_) : nullptr, B, L, C);  // (C, N)
  for (int l = 0; l < shape_.layers; ++l) {
    const LayerParameters& w = layer_params_[l];
    LayerActivations& a = layer_acts_[l];
    layer_norm_forward(a.ln1, a.ln1_mean, a.ln1_rstd, a.input, param(w.ln1_w), param(w.ln1_b), N,
                       C);
    if (shape_.attention_layer(l)) {
      linear_forward(a.qkv, a.ln1, param(w.qkv_w), param(w.qkv_b), N, C, R);  // (R, N)
      if (shape_.attention == AttentionKind::linear)
        causal_linear_attention_forward(a.att, a.cache, a.qkv, head_particles(l, 0), layout,
                                        shape_.feature_map, m, attention_scratch_.data(),
                                        attention_scratch_double_.data());
      else if (shape_.attention == AttentionKind::uniform)
        causal_uniform_attention_forward(a.att, a.qkv, layout);
      else
        softmax_attention_forward(a.att, a.lse, a.qkv, full_lengths_.data(), layout,
                                  attention_scratch_.data(), true);
      linear_forward(a.att_proj, a.att, param(w.proj_w), param(w.proj_b), N, C, C);
      for (std::ptrdiff_t i = 0; i < NC; ++i) a.residual[i] = a.input[i] + a.att_proj[i];
    } else {
      // BaseConv: y = ShortConv(ln1) ⊙ (W_p ln1 + b_p) + ln1, residual = input + y.
      short_convolution_forward(a.conv, a.ln1, param(w.conv_w), param(w.conv_b), B, L, C,
                                shape_.conv_kernel);
      linear_forward(a.conv_proj, a.ln1, param(w.conv_proj_w), param(w.conv_proj_b), N, C, C);
      for (std::ptrdiff_t i = 0; i < NC; ++i)
        a.residual[i] = a.input[i] + (a.conv[i] * a.conv_proj[i] + a.ln1[i]);
    }
    if (!has_mlp()) continue;
    layer_norm_forward(a.ln2, a.ln2_mean, a.ln2_rstd, a.residual, param(w.ln2_w), param(w.ln2_b), N,
                       C);
    linear_forward(a.fc, a.ln2, param(w.fc_w), param(w.fc_b), N, C, F);  // (F, N)
    gelu_forward(a.fc_gelu, a.fc, static_cast<std::ptrdiff_t>(N) * F);
    linear_forward(a.fc_proj, a.fc_gelu, param(w.fc_proj_w), param(w.fc_proj_b), N, F, C);
    for (std::ptrdiff_t i = 0; i < NC; ++i) a.output[i] = a.residual[i] + a.fc_proj[i];
  }
  layer_norm_forward(lnf_, lnf_mean_, lnf_rstd_, layer_acts_.back().output, param(lnf_w_),
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
  linear_forward(logits_, gathered_, param(head_w_), param(head_b_), scored_count_, C,
                 V);  // (V, S)
  return cross_entropy_forward(probs_, logits_, batch.targets ? scored_targets_.data() : nullptr,
                               scored_count_, V, row_loss_);
}

template <class T>
void TransformerDecoder<T>::backward(const DecoderBatch& batch, bool particles) {
  if (!batch.targets) throw std::invalid_argument("backward needs targets");
  if (particles && particles_.empty())
    throw std::invalid_argument("particle gradients need an attention with particles");
  const int B = batch.size, L = batch.length, C = shape_.d_model, F = shape_.d_ff;
  const int N = B * L, R = (shape_.qk_tied ? 2 : 3) * C, V = shape_.vocabulary, m = shape_.features;
  const std::ptrdiff_t NC = static_cast<std::ptrdiff_t>(N) * C;
  const AttentionLayout layout = attention_layout(B, L);

  // lnf, scattered back from the scored columns; zero elsewhere.
  std::fill_n(d_a_, NC, T(0));
  if (scored_count_ > 0) {
    cross_entropy_backward(d_logits_, probs_, scored_targets_.data(), scored_count_, V);
    // logits = W_head gathered + b
    linear_backward(d_gathered_, grad(head_w_), grad(head_b_), d_logits_, gathered_, param(head_w_),
                    scored_count_, C, V, linear_scratch_.data());
    for (int s = 0; s < scored_count_; ++s)
      std::copy_n(d_gathered_ + static_cast<std::ptrdiff_t>(s) * C, C,
                  d_a_ + static_cast<std::ptrdiff_t>(scored_positions_[s]) * C);
  }
  // lnf = LN(top)
  std::fill_n(d_residual_, NC, T(0));
  layer_norm_backward(d_residual_, grad(lnf_w_), grad(lnf_b_), d_a_, layer_acts_.back().output,
                      param(lnf_w_), lnf_mean_, lnf_rstd_, N, C);
  for (int l = shape_.layers - 1; l >= 0; --l) {
    const LayerParameters& w = layer_params_[l];
    const LayerActivations& a = layer_acts_[l];
    if (has_mlp()) {
      // out = residual + fc_proj: d residual = d out (kept in d_residual_), d fc_proj = d out
      // fc_proj = W fc_gelu + b
      linear_backward(d_ff_a_, grad(w.fc_proj_w), grad(w.fc_proj_b), d_residual_, a.fc_gelu,
                      param(w.fc_proj_w), N, F, C, linear_scratch_.data());
      // fc_gelu = gelu(fc)
      gelu_backward(d_ff_b_, a.fc, d_ff_a_, static_cast<std::ptrdiff_t>(N) * F);
      // fc = W ln2 + b
      linear_backward(d_a_, grad(w.fc_w), grad(w.fc_b), d_ff_b_, a.ln2, param(w.fc_w), N, C, F,
                      linear_scratch_.data());
      // ln2 = LN(residual); adds the branch to d residual
      layer_norm_backward(d_residual_, grad(w.ln2_w), grad(w.ln2_b), d_a_, a.residual,
                          param(w.ln2_w), a.ln2_mean, a.ln2_rstd, N, C);
    }
    if (shape_.attention_layer(l)) {
      // residual = input + att_proj;  att_proj = W att + b
      linear_backward(d_b_, grad(w.proj_w), grad(w.proj_b), d_residual_, a.att, param(w.proj_w), N,
                      C, C, linear_scratch_.data());
      // att = causal attention(qkv)
      std::fill_n(d_qkv_, static_cast<std::ptrdiff_t>(N) * R, T(0));
      if (shape_.attention == AttentionKind::linear)
        causal_linear_attention_backward(
            d_qkv_, d_b_, a.att, a.cache, a.qkv, head_particles(l, 0), layout, shape_.feature_map,
            m, attention_scratch_.data(), attention_scratch_double_.data(),
            particles ? particle_gradients_.data() + (head_particles(l, 0) - particles_.data())
                      : nullptr);
      else if (shape_.attention == AttentionKind::uniform)
        causal_uniform_attention_backward(d_qkv_, d_b_, layout);
      else
        softmax_attention_backward(d_qkv_, d_b_, a.att, a.lse, a.qkv, full_lengths_.data(), layout,
                                   attention_scratch_.data(), true);
      // qkv = W ln1 + b
      linear_backward(d_a_, grad(w.qkv_w), grad(w.qkv_b), d_qkv_, a.ln1, param(w.qkv_w), N, C, R,
                      linear_scratch_.data());
    } else {
      // residual = input + conv ⊙ conv_proj + ln1:  d conv = d residual ⊙ conv_proj (in d_b_),
      // d conv_proj = d residual ⊙ conv (in d_qkv_, R ≥ 2C rows)
      for (std::ptrdiff_t i = 0; i < NC; ++i) {
        d_b_[i] = d_residual_[i] * a.conv_proj[i];
        d_qkv_[i] = d_residual_[i] * a.conv[i];
      }
      // conv_proj = W_p ln1 + b_p
      linear_backward(d_a_, grad(w.conv_proj_w), grad(w.conv_proj_b), d_qkv_, a.ln1,
                      param(w.conv_proj_w), N, C, C, linear_scratch_.data());
      // conv = ShortConv(ln1); adds to d ln1
      short_convolution_backward(d_a_, grad(w.conv_w), grad(w.conv_b), d_b_, a.ln1, param(w.conv_w),
                                 B, L, C, shape_.conv_kernel);
      // the skip + ln1 of BaseConv
      for (std::ptrdiff_t i = 0; i < NC; ++i) d_a_[i] += d_residual_[i];
    }
    // ln1 = LN(input); adds the branch to d input
    layer_norm_backward(d_residual_, grad(w.ln1_w), grad(w.ln1_b), d_a_, a.input, param(w.ln1_w),
                        a.ln1_mean, a.ln1_rstd, N, C);
  }
  // input of layer 0 = embedding
  embedding_backward(grad(wte_), shape_.position_embedding ? grad(wpe_) : nullptr, d_residual_,
                     batch.tokens, B, L, C);
}

}  // namespace cpm
