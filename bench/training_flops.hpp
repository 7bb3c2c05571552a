#pragma once
// Floating-point operations of one training step (forward, backward), counted from the model's
// shapes as model FLOPs: every matrix product, a multiply-add counting 2, the backward pass as
// twice the forward (the gradients of both operands); elementwise work (exponentials, LayerNorm,
// GELU, AdamW) and recomputation (the softmax backward's scores) not counted. Per token and
// attention layer: projections to q, k, v and back 2·C·(R + C); softmax attention 4·C·K̄ with K̄
// the keys a query attends to on average (L, or (L + 1)/2 causal); linear attention 8·m·C (the
// features of q and k, the key–value sums, the queries' products). Per token and feed-forward
// block 4·C·F; per token and convolution layer 2·C·(k + C). The head: 2·C·classes per sequence
// (classifier) or 2·C·V per scored position.
#include "transformer/model_shape.hpp"

namespace cpm::bench {

// scored_per_sequence: 0 for the classifier, else the decoder's scored positions per sequence.
inline double training_step_flops(const ModelShape& s, int batch, int length,
                                  int scored_per_sequence) {
  const bool decoder = scored_per_sequence > 0;
  const double C = s.d_model, R = (s.qk_tied ? 2 : 3) * C, tokens = double(batch) * length;
  const double attended = decoder ? (length + 1) / 2.0 : length;
  double per_token = 0.0;
  for (int l = 0; l < s.layers; ++l) {
    if (s.attention_layer(l))
      per_token += 2 * C * (R + C) + (s.attention == AttentionKind::softmax ? 4 * C * attended
                                                                            : 8.0 * s.features * C);
    else  // a short convolution of width k and its gate's projection
      per_token += 2 * C * s.conv_kernel + 2 * C * C;
    per_token += 4 * C * s.d_ff;
  }
  const double head = decoder ? 2 * C * s.vocabulary * double(batch) * scored_per_sequence
                              : 2 * C * s.classes * double(batch);
  return 3 * (per_token * tokens + head);
}

}  // namespace cpm::bench
