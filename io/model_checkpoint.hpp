#pragma once
// A trained model in one HDF5 file: under the group `model`, its description as attributes (a
// ParameterSet: sizes, kinds, what it was trained on), the flat parameter vector, the frozen
// particles and the tokenizer's word list. This file knows the layout only; the classifier's
// mapping onto it is transformer/classifier_checkpoint.hpp. A damaged file throws InputError with
// one line naming it.
#include <string>
#include <vector>

#include "io/parameter_set.hpp"

namespace cpm {

struct ModelCheckpoint {
  ParameterSet description;
  std::vector<float> parameters, particles;
  std::vector<std::string> vocabulary;  // empty for pixel data
};

void save_model_checkpoint(const std::string& path, const ModelCheckpoint& checkpoint);
ModelCheckpoint load_model_checkpoint(const std::string& path);

}  // namespace cpm
