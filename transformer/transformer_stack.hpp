#pragma once
// What every model of stacked blocks (transformer/transformer_block.hpp) has, whatever its
// embedding and head: the shape, the named parameter tensors in one flat vector with their
// gradients, the particles of every head with theirs, the blocks and the memory they run in
// (transformer/model_buffers.hpp). The classifier and the decoder derive from it.
//
// T is float for training and double for the finite-difference tests.
#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "transformer/attention_feature_maps.hpp"
#include "transformer/attention_layout.hpp"
#include "transformer/elementwise.hpp"
#include "transformer/model_buffers.hpp"
#include "transformer/model_shape.hpp"
#include "transformer/parameter_tensors.hpp"
#include "transformer/transformer_block.hpp"

namespace cpm {

template <class T>
class TransformerStack {
 public:
  const ModelShape& shape() const { return shape_; }
  const std::vector<ParameterTensor>& tensors() const { return tensors_; }
  const ParameterTensor& tensor(const std::string& name) const {
    return find_tensor(tensors_, name);
  }

  std::vector<T>& parameters() { return parameters_; }
  const std::vector<T>& parameters() const { return parameters_; }
  std::vector<T>& gradients() { return gradients_; }
  // Particles of every head, (layers, heads, rows, d_head) row-major, rows = particle_rows();
  // frozen unless their gradient is asked for.
  std::vector<T>& particles() { return particles_; }
  const std::vector<T>& particles() const { return particles_; }
  std::vector<T>& particle_gradients() { return particle_gradients_; }
  T* head_particles(int layer, int head) {
    return particles_.data() + (static_cast<std::size_t>(layer) * shape_.heads + head) * block();
  }
  // particle_rows(feature map, features, d_head) with linear attention, else 0.
  int particle_rows() const { return particle_rows_; }
  // One flag per parameter: 1 where weight decay applies.
  std::vector<unsigned char> weight_decay_mask() const {
    return cpm::weight_decay_mask(tensors_, parameters_.size());
  }
  void zero_gradients() {
    parallel_zero(gradients_.data(), static_cast<std::ptrdiff_t>(gradients_.size()));
    parallel_zero(particle_gradients_.data(),
                  static_cast<std::ptrdiff_t>(particle_gradients_.size()));
  }

  AttentionLayout attention_layout(int batch, int length) const {
    return {batch, length, shape_.heads, shape_.head_size(), shape_.qk_tied};
  }
  // The fused q | k | v projections of layer `layer` in the last forward (attention_layout says
  // where each head's block sits); null for a BaseConv layer. Linear attention reads
  // φ(scale · q), φ(scale · k) with the scale feature_input_scale() (τ d_head^{-1/4}); with QK
  // normalisation these are s_h q/‖q‖ | s_h k/‖k‖ | v, and the scale 1.
  const T* qkv(int layer) const { return blocks_[layer].qkv(); }
  T feature_input_scale() const {
    return cpm::feature_input_scale<T>(shape_.feature_map, shape_.head_size());
  }

 protected:
  explicit TransformerStack(const ModelShape& shape) : shape_(shape) {}

  std::size_t add_tensor(const std::string& name, int rows, int cols, bool decay) {
    return append_tensor(tensors_, name, rows, cols, decay);
  }
  // Appends the tensors below the model's head: the token embedding, the position embedding
  // (with shape.position_embedding), one block per layer and the final LayerNorm.
  void add_body(bool causal) {
    const int C = shape_.d_model;
    wte_ = add_tensor("embedding.token", shape_.vocabulary, C, true);
    if (shape_.position_embedding)
      wpe_ = add_tensor("embedding.position", shape_.max_length, C, true);
    for (int l = 0; l < shape_.layers; ++l) {
      blocks_.emplace_back(shape_, l, causal);
      blocks_.back().add_parameters(tensors_);
    }
    lnf_w_ = add_tensor("final_ln.weight", 1, C, false);
    lnf_b_ = add_tensor("final_ln.bias", 1, C, false);
  }
  // Sizes the parameters, the particles and their gradients once every tensor is added.
  void allocate_parameters() {
    const std::size_t total = tensors_.back().offset + tensors_.back().size();
    parameters_.assign(total, T(0));
    gradients_.assign(total, T(0));
    if (shape_.attention != AttentionKind::linear) return;
    particle_rows_ = cpm::particle_rows(shape_.feature_map, shape_.features, shape_.head_size());
    particles_.assign(static_cast<std::size_t>(shape_.layers) * shape_.heads * block(), T(0));
    particle_gradients_.assign(particles_.size(), T(0));
  }

  // QK normalisation's scales s_h (layers.<l>.attention.qk_scale) start at τ, the bandwidth: φ
  // then reads τ q/‖q‖ at the first step (FeatureMapSpec::qk_normalisation).
  void initialise_qk_scales() {
    const std::string tail = ".attention.qk_scale";
    for (const ParameterTensor& p : tensors_)
      if (p.name.size() > tail.size() &&
          p.name.compare(p.name.size() - tail.size(), tail.size(), tail) == 0)
        std::fill_n(parameters_.begin() + p.offset, p.size(),
                    static_cast<T>(shape_.feature_map.bandwidth));
  }

  T* param(std::size_t offset) { return parameters_.data() + offset; }
  T* grad(std::size_t offset) { return gradients_.data() + offset; }
  // Layer `layer`'s particles and their gradients, null without linear attention.
  const T* block_particles(int layer) const {
    return particles_.empty() ? nullptr : particles_.data() + layer * shape_.heads * block();
  }
  T* block_particle_gradients(int layer) {
    return particles_.empty() ? nullptr
                              : particle_gradients_.data() + layer * shape_.heads * block();
  }

  ModelShape shape_;
  std::vector<ParameterTensor> tensors_;
  std::vector<TransformerBlock<T>> blocks_;
  std::vector<T> parameters_, gradients_, particles_, particle_gradients_;
  ModelBuffers<T> buffers_;
  std::size_t wte_ = 0, wpe_ = 0, lnf_w_ = 0, lnf_b_ = 0;  // wpe_: with position_embedding

 private:
  std::size_t block() const {
    return static_cast<std::size_t>(particle_rows_) * shape_.head_size();
  }

  int particle_rows_ = 0;
};

}  // namespace cpm
