#pragma once
// A trained classifier as a ModelCheckpoint (io/model_checkpoint.hpp): the shape as described
// attributes (vocabulary, max_length, d_model, heads, layers, d_ff, classes, features,
// attention, feature_map, feature_epsilon, qk_tied, dropout) plus the attention variant and the
// data set, the parameters and the particles.
#include <string>
#include <vector>

#include "io/model_checkpoint.hpp"
#include "transformer/model_shape.hpp"
#include "transformer/transformer_classifier.hpp"

namespace cpm {

ModelCheckpoint classifier_checkpoint(const TransformerClassifier<float>& model,
                                      const std::string& variant, const std::string& dataset,
                                      const std::vector<std::string>& vocabulary);

// The shape a checkpoint describes; InputError naming `path` for a missing or malformed entry.
ModelShape checkpoint_shape(const ModelCheckpoint& checkpoint, const std::string& path);
// A text entry of the description ("variant", "dataset"); InputError naming `path` if absent.
std::string checkpoint_text(const ModelCheckpoint& checkpoint, const std::string& key,
                            const std::string& path);

// Copies the checkpoint's parameters and particles into `model`, whose shape must be the
// checkpoint's; InputError naming `path` otherwise.
void load_weights(TransformerClassifier<float>& model, const ModelCheckpoint& checkpoint,
                  const std::string& path);

// Throws InputError "<path>: checkpoint is for another model size: d_model 32 (model 64), ..."
// unless every size of `found` equals `expected`.
void require_same_shape(const ModelShape& expected, const ModelShape& found,
                        const std::string& path);

}  // namespace cpm
