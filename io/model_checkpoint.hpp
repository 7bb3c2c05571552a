#pragma once
// A trained classifier in one HDF5 file: the model shape (attributes), the flat parameter vector,
// the frozen particles, the tokenizer's vocabulary and the attention variant. Loading checks the
// shape against the model it is meant for; a mismatch or a damaged file throws InputError with
// one line naming the file.
#include <string>
#include <vector>

#include "transformer/model_shape.hpp"

namespace cpm {

struct ModelCheckpoint {
  ModelShape shape;
  std::string variant;  // e.g. "kernel-favor"
  std::string dataset;
  std::vector<float> parameters, particles;
  std::vector<std::string> vocabulary;  // empty for pixel data
};

void save_model_checkpoint(const std::string& path, const ModelCheckpoint& checkpoint);
ModelCheckpoint load_model_checkpoint(const std::string& path);

// Throws InputError "<path>: checkpoint is for another model size: d_model 32 (model 64), ..."
// unless every size of `found` equals `expected`.
void require_same_shape(const ModelShape& expected, const ModelShape& found,
                        const std::string& path);

}  // namespace cpm
