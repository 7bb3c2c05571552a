#pragma once
// The named tensors inside a model's flat parameter vector, and what the classifier and the
// decoder do with them alike: append a tensor, find it by name, the weight-decay mask, and the
// GPT-2 style initialisation.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/random_stream.hpp"

namespace cpm {

// One named tensor inside the flat parameter vector; shape is row-major (rows, cols) as PyTorch.
struct ParameterTensor {
  std::string name;
  std::size_t offset = 0;
  int rows = 1, cols = 1;
  bool decay = false;  // weight decay applies to matrices only
  std::size_t size() const { return static_cast<std::size_t>(rows) * cols; }
};

// Appends a tensor after the last one; returns its offset.
inline std::size_t append_tensor(std::vector<ParameterTensor>& tensors, const std::string& name,
                                 int rows, int cols, bool decay) {
  const std::size_t offset = tensors.empty() ? 0 : tensors.back().offset + tensors.back().size();
  tensors.push_back({name, offset, rows, cols, decay});
  return offset;
}

inline const ParameterTensor& find_tensor(const std::vector<ParameterTensor>& tensors,
                                          const std::string& name) {
  for (const auto& t : tensors)
    if (t.name == name) return t;
  throw std::invalid_argument("no parameter tensor named " + name);
}

// One flag per parameter: 1 where weight decay applies.
inline std::vector<unsigned char> weight_decay_mask(const std::vector<ParameterTensor>& tensors,
                                                    std::size_t parameters) {
  std::vector<unsigned char> mask(parameters, 0);
  for (const auto& t : tensors)
    if (t.decay) std::fill_n(mask.begin() + t.offset, t.size(), 1);
  return mask;
}

// GPT-2 style initialisation: N(0, 0.02) matrices, zero biases, unit LayerNorm weights; tensor t
// draws from its own stream.
template <class T>
void initialise_gpt2_parameters(std::vector<T>& parameters,
                                const std::vector<ParameterTensor>& tensors, std::uint64_t seed) {
  std::fill(parameters.begin(), parameters.end(), T(0));
  for (std::size_t t = 0; t < tensors.size(); ++t) {
    const ParameterTensor& p = tensors[t];
    const bool layer_norm_weight =
        p.name.find("ln") != std::string::npos && p.name.find(".weight") != std::string::npos;
    if (layer_norm_weight) {
      std::fill_n(parameters.begin() + p.offset, p.size(), T(1));
    } else if (p.decay) {
      RandomStream stream(seed, RandomPurpose::parameter_init, t, 0);
      for (std::size_t i = 0; i < p.size(); ++i)
        parameters[p.offset + i] = static_cast<T>(0.02 * stream.normal());
    }
  }
}

}  // namespace cpm
