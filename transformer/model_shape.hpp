#pragma once
// The sizes and choices that fix a classifier's parameter layout. A checkpoint records them, and
// loading into a model of another shape is refused.
#include <stdexcept>
#include <string>

#include "transformer/attention_feature_maps.hpp"

namespace cpm {

// softmax: exact; linear: kernel attention with particle features; uniform: φ ≡ 1, every
// position receives the mean of the sequence's values (the no-information control).
enum class AttentionKind { softmax, linear, uniform };

struct ModelShape {
  int vocabulary = 0;
  int max_length = 128;  // positions with a learned embedding
  int d_model = 64;
  int heads = 4;
  int layers = 2;
  int d_ff = 128;  // 0: no feed-forward block (the decoder only)
  int classes = 2;
  int features = 64;  // m, particles per head (linear attention)
  AttentionKind attention = AttentionKind::linear;
  FeatureMapSpec feature_map;
  bool qk_tied = false;
  double dropout = 0.1;
  // The decoder only. conv_kernel = 0: every layer's sequence mixer is attention. k ≥ 1: the
  // hybrid of Zoology's MQAR anchor (Arora et al. 2023), layers alternating between BaseConv, a
  // gated short causal convolution of k taps (even layers 0, 2, …), and attention (odd layers).
  int conv_kernel = 0;
  // The decoder only. false: no learned position embedding (the anchor's
  // max_position_embeddings = 0); the convolution and causal attention order the tokens.
  bool position_embedding = true;

  int head_size() const { return d_model / heads; }
  // Whether layer l mixes the sequence with attention (else with BaseConv).
  bool attention_layer(int l) const { return conv_kernel == 0 || l % 2 == 1; }

  // Throws std::invalid_argument naming the first impossible size.
  void validate() const {
    auto need = [](bool ok, const std::string& what) {
      if (!ok) throw std::invalid_argument(what);
    };
    need(vocabulary >= 2, "vocabulary must hold at least the padding and unknown tokens");
    need(max_length >= 1 && d_model >= 1 && heads >= 1 && layers >= 1 && d_ff >= 0,
         "model sizes must be positive");
    need(d_model % heads == 0, "d_model = " + std::to_string(d_model) +
                                   " is not divisible by heads = " + std::to_string(heads));
    need(classes >= 2, "at least two classes are needed");
    need(attention != AttentionKind::linear || features >= 1, "features (m) must be positive");
    need(dropout >= 0.0 && dropout < 1.0, "dropout must lie in [0, 1)");
    need(conv_kernel >= 0, "conv_kernel must be 0 (attention only) or positive");
    need(conv_kernel == 0 || layers >= 2,
         "conv_kernel > 0 alternates convolution and attention layers: at least 2 layers");
  }
};

}  // namespace cpm
