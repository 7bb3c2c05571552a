#pragma once
// One pre-LayerNorm block of the Transformer (docs/model.md §2), the layer every model of cpm
// stacks under its own embedding and head (the classifier, the decoder):
//   h = LN1(x)
//   r = x + drop(Proj(Attention(h)))          attention over each sequence's length, or causal
//                                             (with QK normalisation, φ reads s_h q/‖q‖ and
//                                             s_h k/‖k‖ of each head h: key_normalisation.hpp)
//   r = x + ShortConv_k(h) ⊙ (W_p h + b_p) + h  the BaseConv mixer of Zoology's MQAR anchor
//                                               (transformer/short_convolution.hpp)
//   y = r + drop(FC2(GELU(FC1(LN2(r)))))      y = r without an MLP (d_ff = 0)
// Activations are (C, N) columns of N = B·L tokens. Dropout masks are drawn from (seed, site,
// step), site 1 + 2l for the mixer of layer l and 2 + 2l for its MLP (0 is the embedding's).
// The block owns no memory: its parameters are offsets into the model's flat vector, its
// activations pointers into the model's one allocation, and its backward pass shares the model's
// scratch with every other block. T is float for training and double for the gradient checks.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "transformer/attention_layout.hpp"
#include "transformer/causal_linear_attention.hpp"
#include "transformer/dropout.hpp"
#include "transformer/elementwise.hpp"
#include "transformer/gelu.hpp"
#include "transformer/layer_norm.hpp"
#include "transformer/linear_attention.hpp"
#include "transformer/linear_layer.hpp"
#include "transformer/model_shape.hpp"
#include "transformer/parameter_tensors.hpp"
#include "transformer/short_convolution.hpp"
#include "transformer/softmax_attention.hpp"
#include "transformer/uniform_attention.hpp"

namespace cpm {

// Dropout of one forward pass: p = 0 keeps every activation.
struct DropoutDraw {
  double p = 0.0;
  std::uint64_t seed = 0, step = 0;
};

// What the blocks of one model share: the gradients of the backward pass, reused block after
// block ((C, N) each, d_ff_* (F, N), d_qkv (R, N) with R the q|k|v rows), the per-chunk partial
// gradients of the linear layers and layer norms, and the attention's per-thread scratch.
template <class T>
struct BlockScratch {
  T *d_residual, *d_a, *d_b, *d_ff_a, *d_ff_b, *d_qkv;
  T* linear;
  T* attention;
  double* attention_double;
};

template <class T>
class TransformerBlock {
 public:
  // Layer `layer` of a model of this shape: a BaseConv mixer where !shape.attention_layer(layer),
  // attention (causal or over each sequence's length) elsewhere; an MLP when shape.d_ff > 0.
  TransformerBlock(const ModelShape& shape, int layer, bool causal)
      : shape_(shape),
        layer_(layer),
        causal_(causal),
        attention_(shape.attention_layer(layer)),
        mlp_(shape.d_ff > 0),
        qk_(attention_ && shape.attention == AttentionKind::linear &&
            shape.feature_map.qk_normalisation) {}

  // The parameter tensors layers.<l>.*, appended to the model's.
  void add_parameters(std::vector<ParameterTensor>& tensors) {
    const int C = shape_.d_model, F = shape_.d_ff, R = qkv_rows();
    const std::string p = "layers." + std::to_string(layer_) + ".";
    auto add = [&](const std::string& name, int rows, int cols, bool decay) {
      return append_tensor(tensors, p + name, rows, cols, decay);
    };
    w_.ln1_w = add("ln1.weight", 1, C, false);
    w_.ln1_b = add("ln1.bias", 1, C, false);
    if (attention_) {
      w_.qkv_w = add("attention.qkv.weight", R, C, true);
      w_.qkv_b = add("attention.qkv.bias", 1, R, false);
      w_.proj_w = add("attention.proj.weight", C, C, true);
      w_.proj_b = add("attention.proj.bias", 1, C, false);
      // QK normalisation's scale s_h of each head (initialised to τ by the model).
      if (qk_) w_.qk_scale = add("attention.qk_scale", 1, shape_.heads, false);
    } else {
      // Conv1d's weight (C, 1, k) without its middle axis; it decays as the other weights.
      w_.conv_w = add("conv.weight", C, shape_.conv_kernel, true);
      w_.conv_b = add("conv.bias", 1, C, false);
      w_.conv_proj_w = add("conv.proj.weight", C, C, true);
      w_.conv_proj_b = add("conv.proj.bias", 1, C, false);
    }
    if (mlp_) {
      w_.ln2_w = add("ln2.weight", 1, C, false);
      w_.ln2_b = add("ln2.bias", 1, C, false);
      w_.fc_w = add("mlp.fc.weight", F, C, true);
      w_.fc_b = add("mlp.fc.bias", 1, F, false);
      w_.fc_proj_w = add("mlp.proj.weight", C, F, true);
      w_.fc_proj_b = add("mlp.proj.bias", 1, C, false);
    }
  }

  // Hands out the activations for batches of up to `tokens` = B·L tokens, `sequences` = B·heads
  // head rows and `length` = L: take(n) and take_double(n) return the next n elements of the
  // model's allocations (null while it counts). With `masks`, room for dropout masks.
  template <class Take, class TakeDouble>
  void plan(T* input, Take&& take, TakeDouble&& take_double, std::size_t tokens,
            std::size_t sequences, std::size_t length, bool masks) {
    const std::size_t N = tokens, C = shape_.d_model, F = shape_.d_ff, R = qkv_rows();
    const std::size_t m = shape_.features, hs = shape_.head_size(), BH = sequences, L = length;
    a_ = {};
    a_.input = input;
    a_.ln1 = take(C * N);
    a_.ln1_mean = take(N);
    a_.ln1_rstd = take(N);
    if (attention_) {
      a_.qkv = take(R * N);
      if (qk_) {
        a_.qkv_in = take(R * N);
        a_.qk_length = take(qk_blocks() * shape_.heads * N);
      }
      a_.att = take(C * N);
      a_.att_proj = take(C * N);
    } else {
      a_.conv = take(C * N);
      a_.conv_proj = take(C * N);
    }
    if (masks) a_.att_mask = take(C * N);
    a_.residual = take(C * N);
    if (mlp_) {
      a_.ln2 = take(C * N);
      a_.ln2_mean = take(N);
      a_.ln2_rstd = take(N);
      a_.fc = take(F * N);
      a_.fc_gelu = take(F * N);
      a_.fc_proj = take(C * N);
      if (masks) a_.fc_mask = take(C * N);
      a_.output = take(C * N);
    } else {
      a_.output = a_.residual;
    }
    if (attention_ && shape_.attention == AttentionKind::linear) {
      a_.cache.phi_q = take(BH * m * L);
      a_.cache.phi_k = take(BH * m * L);
      a_.cache.inverse_denominator = take(BH * L);
      if (shape_.feature_map.key_normalisation != KeyNormalisation::none)
        a_.cache.key_norm = take(BH * L);
      a_.cache.kv = take_double(BH * m * hs);
      a_.cache.z = take_double(BH * m);
    } else if (attention_ && shape_.attention == AttentionKind::softmax) {
      a_.lse = take(BH * L);
    }
  }

  // The attention's per-thread scratch for sequences of up to max_length tokens.
  static std::size_t attention_scratch(const ModelShape& s, int max_length, bool causal) {
    const int m = s.features, hs = s.head_size();
    if (s.attention == AttentionKind::linear)
      return causal ? causal_linear_attention_scratch(m, max_length, hs)
                    : linear_attention_scratch(m, max_length, hs);
    return s.attention == AttentionKind::softmax ? softmax_attention_scratch(hs, max_length) : 0;
  }
  static std::size_t attention_scratch_double(const ModelShape& s, bool causal) {
    if (s.attention != AttentionKind::linear) return 0;
    return causal ? causal_linear_attention_scratch_double(s.features, s.head_size())
                  : linear_attention_scratch_double(s.features, s.head_size());
  }

  // output = block(input) for the batch `layout`; lengths: each sequence's tokens (bidirectional
  // attention and softmax), particles: this layer's (heads, rows, d_head) particles.
  void forward(const T* parameters, const T* particles, const int* lengths,
               const AttentionLayout& layout, const DropoutDraw& dropout,
               const BlockScratch<T>& s) {
    const int B = layout.batch, L = layout.length, C = shape_.d_model, F = shape_.d_ff;
    const int N = B * L, R = qkv_rows();
    const std::ptrdiff_t NC = static_cast<std::ptrdiff_t>(N) * C;
    auto w = [&](std::size_t offset) { return parameters + offset; };
    Activations& a = a_;
    layer_norm_forward(a.ln1, a.ln1_mean, a.ln1_rstd, a.input, w(w_.ln1_w), w(w_.ln1_b), N, C);
    if (attention_) {
      linear_forward(a.qkv, a.ln1, w(w_.qkv_w), w(w_.qkv_b), N, C, R, s.linear);  // (R, N)
      if (qk_) normalise_queries_and_keys(w(w_.qk_scale), N);  // qkv_in = [s_h q̂; s_h k̂; v]
      attention_forward(particles, lengths, layout, s);
      // residual = input + dropout(att_proj), att_proj = W att + b
      if (dropout.p > 0.0) {
        linear_forward(a.att_proj, a.att, w(w_.proj_w), w(w_.proj_b), N, C, C, s.linear);
        dropout_mask(a.att_mask, dropout.p, dropout.seed, 1 + 2 * std::uint64_t(layer_),
                     dropout.step, N, C);
        parallel_masked_sum(a.residual, a.input, a.att_proj, a.att_mask, NC);
      } else {
        linear_forward(a.residual, a.att, w(w_.proj_w), w(w_.proj_b), N, C, C, s.linear, a.input);
      }
    } else {
      short_convolution_forward(a.conv, a.ln1, w(w_.conv_w), w(w_.conv_b), B, L, C,
                                shape_.conv_kernel);
      linear_forward(a.conv_proj, a.ln1, w(w_.conv_proj_w), w(w_.conv_proj_b), N, C, C, s.linear);
      for (std::ptrdiff_t i = 0; i < NC; ++i)
        a.residual[i] = a.input[i] + (a.conv[i] * a.conv_proj[i] + a.ln1[i]);
    }
    if (!mlp_) return;
    layer_norm_forward(a.ln2, a.ln2_mean, a.ln2_rstd, a.residual, w(w_.ln2_w), w(w_.ln2_b), N, C);
    linear_forward(a.fc, a.ln2, w(w_.fc_w), w(w_.fc_b), N, C, F, s.linear);  // (F, N)
    gelu_forward(a.fc_gelu, a.fc, static_cast<std::ptrdiff_t>(N) * F);
    // output = residual + dropout(fc_proj), fc_proj = W fc_gelu + b
    if (dropout.p > 0.0) {
      linear_forward(a.fc_proj, a.fc_gelu, w(w_.fc_proj_w), w(w_.fc_proj_b), N, F, C, s.linear);
      dropout_mask(a.fc_mask, dropout.p, dropout.seed, 2 + 2 * std::uint64_t(layer_), dropout.step,
                   N, C);
      parallel_masked_sum(a.output, a.residual, a.fc_proj, a.fc_mask, NC);
    } else {
      linear_forward(a.output, a.fc_gelu, w(w_.fc_proj_w), w(w_.fc_proj_b), N, F, C, s.linear,
                     a.residual);
    }
  }

  // On entry s.d_residual holds d loss / d output, on return d loss / d input; adds the
  // parameters' gradients to `gradients` and, when particle_gradients is not null, the
  // particles'. `dropout`: whether the forward pass dropped.
  void backward(T* gradients, const T* parameters, const T* particles, T* particle_gradients,
                const int* lengths, const AttentionLayout& layout, bool dropout,
                const BlockScratch<T>& s) {
    const int B = layout.batch, L = layout.length, C = shape_.d_model, F = shape_.d_ff;
    const int N = B * L, R = qkv_rows();
    const std::ptrdiff_t NC = static_cast<std::ptrdiff_t>(N) * C;
    auto w = [&](std::size_t offset) { return parameters + offset; };
    auto g = [&](std::size_t offset) { return gradients + offset; };
    const Activations& a = a_;
    if (mlp_) {
      // output = residual + dropout(fc_proj): d residual = d output (kept in d_residual), d fc_proj
      // = d output ⊙ mask
      const T* d_fc_proj = s.d_residual;
      if (dropout) {
        dropout_backward(s.d_a, s.d_residual, a.fc_mask, NC);
        d_fc_proj = s.d_a;
      }
      // fc_proj = W fc_gelu + b
      linear_backward(s.d_ff_a, g(w_.fc_proj_w), g(w_.fc_proj_b), d_fc_proj, a.fc_gelu,
                      w(w_.fc_proj_w), N, F, C, s.linear);
      // fc_gelu = gelu(fc)
      gelu_backward(s.d_ff_b, a.fc, s.d_ff_a, static_cast<std::ptrdiff_t>(N) * F);
      // fc = W ln2 + b
      linear_backward(s.d_a, g(w_.fc_w), g(w_.fc_b), s.d_ff_b, a.ln2, w(w_.fc_w), N, C, F,
                      s.linear);
      // ln2 = LN(residual); adds the branch to d residual
      layer_norm_backward(s.d_residual, g(w_.ln2_w), g(w_.ln2_b), s.d_a, a.residual, w(w_.ln2_w),
                          a.ln2_mean, a.ln2_rstd, N, C, s.linear);
    }
    if (attention_) {
      // residual = input + dropout(att_proj)
      const T* d_att_proj = s.d_residual;
      if (dropout) {
        dropout_backward(s.d_a, s.d_residual, a.att_mask, NC);
        d_att_proj = s.d_a;
      }
      // att_proj = W att + b
      linear_backward(s.d_b, g(w_.proj_w), g(w_.proj_b), d_att_proj, a.att, w(w_.proj_w), N, C, C,
                      s.linear);
      // att = attention(qkv), or attention(qkv_in) with QK normalisation
      parallel_zero(s.d_qkv, static_cast<std::ptrdiff_t>(N) * R);
      attention_backward(particles, particle_gradients, lengths, layout, s);
      // qkv_in = [s_h q̂; s_h k̂; v]: d qkv from d qkv_in in place, and ds_h
      if (qk_) normalise_queries_and_keys_backward(g(w_.qk_scale), w(w_.qk_scale), s.d_qkv, N);
      // qkv = W ln1 + b
      linear_backward(s.d_a, g(w_.qkv_w), g(w_.qkv_b), s.d_qkv, a.ln1, w(w_.qkv_w), N, C, R,
                      s.linear);
    } else {
      // residual = input + conv ⊙ conv_proj + ln1:  d conv = d residual ⊙ conv_proj (in d_b),
      // d conv_proj = d residual ⊙ conv (in d_qkv, R ≥ 2C rows)
      for (std::ptrdiff_t i = 0; i < NC; ++i) {
        s.d_b[i] = s.d_residual[i] * a.conv_proj[i];
        s.d_qkv[i] = s.d_residual[i] * a.conv[i];
      }
      // conv_proj = W_p ln1 + b_p
      linear_backward(s.d_a, g(w_.conv_proj_w), g(w_.conv_proj_b), s.d_qkv, a.ln1,
                      w(w_.conv_proj_w), N, C, C, s.linear);
      // conv = ShortConv(ln1); adds to d ln1
      short_convolution_backward(s.d_a, g(w_.conv_w), g(w_.conv_b), s.d_b, a.ln1, w(w_.conv_w), B,
                                 L, C, shape_.conv_kernel);
      // the skip + ln1 of BaseConv
      parallel_sum(s.d_a, s.d_a, s.d_residual, NC);
    }
    // ln1 = LN(input); adds the branch to d input
    layer_norm_backward(s.d_residual, g(w_.ln1_w), g(w_.ln1_b), s.d_a, a.input, w(w_.ln1_w),
                        a.ln1_mean, a.ln1_rstd, N, C, s.linear);
  }

  const T* input() const { return a_.input; }
  T* output() const { return a_.output; }
  // The fused q | k | v the attention read in the last forward: the projections, or with QK
  // normalisation s_h q/‖q‖ | s_h k/‖k‖ | v; null for a BaseConv block.
  const T* qkv() const { return qk_ ? a_.qkv_in : a_.qkv; }
  bool attention() const { return attention_; }

 private:
  // An attention block has qkv and proj, a BaseConv block conv and conv_proj.
  struct Parameters {
    std::size_t ln1_w, ln1_b, qkv_w, qkv_b, proj_w, proj_b, qk_scale, conv_w, conv_b, conv_proj_w,
        conv_proj_b, ln2_w, ln2_b, fc_w, fc_b, fc_proj_w, fc_proj_b;
  };
  // Attention: residual = input + dropout(att_proj). BaseConv: residual = input + conv ⊙ conv_proj
  // + ln1 (conv = ShortConv(ln1), conv_proj = W_p ln1 + b_p). output = residual + dropout(fc_proj)
  // (residual itself without an MLP). Masks hold the dropout multipliers; the pointers of the
  // other mixer are null. With QK normalisation qkv_in (R, N) holds what the attention reads and
  // qk_length the lengths ‖q‖ (and ‖k‖), (blocks, heads, N).
  struct Activations {
    T *input, *ln1, *ln1_mean, *ln1_rstd, *qkv, *qkv_in, *qk_length, *att, *att_proj, *att_mask,
        *conv, *conv_proj, *residual, *ln2, *ln2_mean, *ln2_rstd, *fc, *fc_gelu, *fc_proj, *fc_mask,
        *output, *lse;
    LinearAttentionCache<T> cache;
  };

  int qkv_rows() const { return (shape_.qk_tied ? 2 : 3) * shape_.d_model; }
  // The normalised blocks of qkv: q and k, or q alone with tied W_Q = W_K (keys read q's rows).
  int qk_blocks() const { return shape_.qk_tied ? 1 : 2; }
  // What the attention reads: qkv, or qkv_in with QK normalisation.
  const T* attention_input() const { return qk_ ? a_.qkv_in : a_.qkv; }

  // qkv_in = [s_h q/‖q‖; s_h k/‖k‖; v] token by token and head by head (scale: s_h of each head).
  void normalise_queries_and_keys(const T* scale, int N) {
    const int R = qkv_rows(), C = shape_.d_model, hs = shape_.head_size(), H = shape_.heads;
    const int blocks = qk_blocks();
#pragma omp parallel for schedule(static) if (N >= 256)
    for (int n = 0; n < N; ++n) {
      const T* x = a_.qkv + static_cast<std::ptrdiff_t>(n) * R;
      T* y = a_.qkv_in + static_cast<std::ptrdiff_t>(n) * R;
      for (int b = 0; b < blocks; ++b)
        for (int h = 0; h < H; ++h) {
          const int at = b * C + h * hs;
          a_.qk_length[(static_cast<std::ptrdiff_t>(b) * H + h) * N + n] =
              qk_normalise(x + at, y + at, hs, scale[h]);
        }
      std::copy(x + blocks * C, x + R, y + blocks * C);  // v
    }
  }
  // d qkv from d qkv_in in place (v's rows pass unchanged); d_scale[h] += Σ_n q̂ᵀ d(s_h q̂) (and the
  // keys'), summed token by token in order so that it does not depend on the threads.
  void normalise_queries_and_keys_backward(T* d_scale, const T* scale, T* d_qkv, int N) const {
    const int R = qkv_rows(), C = shape_.d_model, hs = shape_.head_size(), H = shape_.heads;
    for (int b = 0; b < qk_blocks(); ++b)
      for (int h = 0; h < H; ++h) {
        const int at = b * C + h * hs;
        const T* length = a_.qk_length + (static_cast<std::ptrdiff_t>(b) * H + h) * N;
        T sum = T(0);
        for (int n = 0; n < N; ++n) {
          T* dy = d_qkv + static_cast<std::ptrdiff_t>(n) * R + at;
          sum += qk_normalise_backward(a_.qkv + static_cast<std::ptrdiff_t>(n) * R + at, length[n],
                                       scale[h], dy, dy, hs);
        }
        d_scale[h] += sum;
      }
  }

  void attention_forward(const T* particles, const int* lengths, const AttentionLayout& layout,
                         const BlockScratch<T>& s) {
    Activations& a = a_;
    const FeatureMapSpec& spec = shape_.feature_map;
    const int m = shape_.features;
    if (shape_.attention == AttentionKind::linear) {
      if (causal_)
        causal_linear_attention_forward(a.att, a.cache, attention_input(), particles, layout, spec,
                                        m, s.attention, s.attention_double);
      else
        linear_attention_forward(a.att, a.cache, attention_input(), particles, lengths, layout,
                                 spec, m, s.attention, s.attention_double);
    } else if (shape_.attention == AttentionKind::uniform) {
      if (causal_)
        causal_uniform_attention_forward(a.att, a.qkv, layout);
      else
        uniform_attention_forward(a.att, a.qkv, lengths, layout);
    } else {
      softmax_attention_forward(a.att, a.lse, a.qkv, lengths, layout, s.attention, causal_);
    }
  }

  void attention_backward(const T* particles, T* particle_gradients, const int* lengths,
                          const AttentionLayout& layout, const BlockScratch<T>& s) {
    const Activations& a = a_;
    const FeatureMapSpec& spec = shape_.feature_map;
    const int m = shape_.features;
    if (shape_.attention == AttentionKind::linear) {
      if (causal_)
        causal_linear_attention_backward(s.d_qkv, s.d_b, a.att, a.cache, attention_input(),
                                         particles, layout, spec, m, s.attention,
                                         s.attention_double, particle_gradients);
      else
        linear_attention_backward(s.d_qkv, s.d_b, a.att, a.cache, attention_input(), particles,
                                  lengths, layout, spec, m, s.attention, s.attention_double,
                                  particle_gradients);
    } else if (shape_.attention == AttentionKind::uniform) {
      if (causal_)
        causal_uniform_attention_backward(s.d_qkv, s.d_b, layout);
      else
        uniform_attention_backward(s.d_qkv, s.d_b, lengths, layout);
    } else {
      softmax_attention_backward(s.d_qkv, s.d_b, a.att, a.lse, a.qkv, lengths, layout, s.attention,
                                 causal_);
    }
  }

  ModelShape shape_;
  int layer_;
  bool causal_, attention_, mlp_, qk_;
  Parameters w_{};
  Activations a_{};
};

}  // namespace cpm
