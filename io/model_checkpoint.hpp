#pragma once
// A trained model in one HDF5 file: under the group `model`, its description as attributes (a
// ParameterSet: sizes, kinds, what it was trained on), the flat parameter vector, the frozen
// particles and the tokenizer's word list. This file knows the layout only; the classifier's
// mapping onto it is transformer/classifier_checkpoint.hpp. A damaged file throws InputError with
// one line naming it.
#include <H5Cpp.h>

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

// The group `model` of such a file, for files that hold more (io/training_checkpoint.hpp).
// HDF5 errors surface as H5::Exception, a malformed entry as std::runtime_error.
void write_model_group(H5::Group& model, const ModelCheckpoint& checkpoint);
ModelCheckpoint read_model_group(const H5::Group& model);

}  // namespace cpm
