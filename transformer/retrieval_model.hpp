#pragma once
// The one-layer associative-retrieval model of Schlag, Irie & Schmidhuber (ICML 2021, synthetic
// setting 1; docs/model.md §2, "Recall tasks"). An example holds S (key, value) pairs and one query
// key. With E the learned key embedding (n_keys, e) and one-hot values,
//   k_j = W_k [onehot(v_j); E[key_j]] + b_k,    q = W_q E[query] + b_q          (d_key each)
//   w_j = φ(k_j)ᵀ φ(q)  (linear kinds)   or   exp(k_jᵀq / √d_key)  (softmax),   w_j = 1 (uniform)
//   out = Σ_j w_j onehot(v_j) / (Σ_j w_j + δ)                                  (n_values)
//   loss = (1/B) Σ_b ½ ‖out_b − onehot(target_b)‖²
// The feature maps are those of transformer/attention_feature_maps.hpp with the input scale τ, the
// map's bandwidth (τ = 1: the anchor feeds k and q to φ unscaled). Two learned variants put a
// transform G in front of φ, shared by keys and queries: w_j = φ(τ G k_j)ᵀ φ(τ G q), with
//   temperature   G = t I, a learned scalar t (initially 1);
//   metric        G = M, a learned d_key × d_key matrix (initially I), so that favor estimates
//                 exp(τ² k_jᵀ Σ q) with Σ = MᵀM: its particles are, in the coordinates of k and
//                 q, draws of N(0, Σ) instead of N(0, I).
// With QK normalisation (FeatureMapSpec::qk_normalisation, transformer/key_normalisation.hpp) q
// and k are replaced by s q/‖q‖ and s k_j/‖k_j‖ before φ, s one learned scale (the model has one
// head), started at τ: w_j = φ(s k̂_j)ᵀ φ(s q̂), φ applying no scale of its own, so that τ enters
// once, as the starting value of s.
// Since k_j is linear in the one-hot part, W_k splits into
// the value columns W_v and the embedding columns W_e, and P = W_e Eᵀ (d_key, n_keys) is formed
// once per batch: k_j = W_v[:, v_j] + P[:, key_j] + b_k costs O(d_key) per pair.
//
// T is float for training and double for the finite-difference tests.
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "core/random_stream.hpp"
#include "transformer/attention_feature_maps.hpp"
#include "transformer/model_shape.hpp"
#include "transformer/particle_gradient.hpp"
#include "transformer/tensor_map.hpp"
#include "transformer/thread_index.hpp"

namespace cpm {

// What stands between k, q and the feature map (the transform G above).
enum class FeatureInput { fixed, temperature, metric };

struct RetrievalShape {
  int keys = 20;       // n_keys: the key symbols (E has one row per key symbol)
  int values = 20;     // n_values: the value symbols (the width of the read-out)
  int pairs = 20;      // S: pairs per example
  int embedding = 44;  // e; the anchor uses int(1.1 (n_keys + n_values))
  int key_size = 64;   // d_key
  AttentionKind attention = AttentionKind::linear;
  FeatureMapSpec feature_map;
  int features = 64;    // D_φ, rows of φ (linear attention)
  double delta = 1e-6;  // δ of the normalisation (linear kinds)
  FeatureInput feature_input = FeatureInput::fixed;

  void validate() const {
    if (keys < 1 || values < 1 || pairs < 1 || embedding < 1 || key_size < 1)
      throw std::invalid_argument("retrieval model sizes must be positive");
    if (pairs > keys || pairs > values)
      throw std::invalid_argument("S pairs need at least S key and S value symbols");
    if (attention == AttentionKind::linear && features < 1)
      throw std::invalid_argument("features (D_φ) must be positive");
    if (attention != AttentionKind::linear && feature_input != FeatureInput::fixed)
      throw std::invalid_argument("a learned feature input needs linear attention");
    if (feature_map.qk_normalisation &&
        (attention != AttentionKind::linear || feature_input != FeatureInput::fixed))
      throw std::invalid_argument(
          "QK normalisation needs linear attention without a learned temperature or metric");
  }
  bool transformed_input() const { return feature_input != FeatureInput::fixed; }
  bool qk_normalised() const {
    return attention == AttentionKind::linear && feature_map.qk_normalisation;
  }
  // φ reads k_in, q_in of their own: G k, G q or s k̂, s q̂.
  bool separate_input() const { return transformed_input() || qk_normalised(); }
};

// A batch: keys, values (batch, pairs) row-major, query and target (batch).
struct RetrievalBatch {
  const int* keys = nullptr;
  const int* values = nullptr;
  const int* query = nullptr;
  const int* target = nullptr;
  int size = 0;
};

template <class T>
class RetrievalModel {
 public:
  RetrievalModel(const RetrievalShape& shape, int max_batch)
      : shape_(shape), max_batch_(max_batch) {
    shape_.validate();
    const int d = shape.key_size, e = shape.embedding;
    embedding_ = add(std::size_t(shape.keys) * e);
    w_value_ = add(std::size_t(d) * shape.values);  // (d, n_values) column-major
    w_embed_ = add(std::size_t(d) * e);             // (d, e) column-major
    b_key_ = add(d);
    w_query_ = add(std::size_t(d) * e);  // (d, e) column-major
    b_query_ = add(d);
    if (shape.feature_input == FeatureInput::temperature) transform_ = add(1);
    if (shape.feature_input == FeatureInput::metric) transform_ = add(std::size_t(d) * d);
    if (shape.qk_normalised()) qk_scale_ = add(1);
    parameters_.assign(size_, T(0));
    gradients_.assign(size_, T(0));
    if (shape.attention == AttentionKind::linear) {
      particle_rows_ = cpm::particle_rows(shape.feature_map, shape.features, d);
      particles_.assign(std::size_t(particle_rows_) * d, T(0));
      particle_gradients_.assign(particles_.size(), T(0));
    }
    const std::size_t S = shape.pairs, B = max_batch, D = shape.features;
    projected_.assign(std::size_t(d) * shape.keys, T(0));
    d_projected_.assign(projected_.size(), T(0));
    k_.assign(B * d * S, T(0));
    q_.assign(B * d, T(0));
    phi_k_.assign(B * D * S, T(0));
    phi_q_.assign(B * D, T(0));
    weights_.assign(B * S, T(0));
    den_.assign(B, T(0));
    dw_.assign(B * S, T(0));
    out_.assign(B * shape.values, T(0));
    dk_.assign(B * d * S, T(0));
    dq_.assign(B * d, T(0));
    dphi_k_.assign(B * D * S, T(0));
    dphi_q_.assign(B * D, T(0));
    if (shape.feature_map.key_normalisation != KeyNormalisation::none) {  // ‖φ(k)‖ and φ(k)
      key_norm_.assign(B * S, T(0));
      raw_phi_k_.assign(B * D * S, T(0));
    }
    if (shape.separate_input()) {  // G k, G q or s k̂, s q̂, and their gradients
      k_in_.assign(k_.size(), T(0));
      q_in_.assign(q_.size(), T(0));
      dk_in_.assign(k_.size(), T(0));
      dq_in_.assign(q_.size(), T(0));
    }
    if (shape.qk_normalised()) {  // ‖k_j‖, ‖q‖ and each example's ∂ℓ/∂s
      k_length_.assign(B * S, T(0));
      q_length_.assign(B, T(0));
      d_scale_.assign(B, T(0));
    }
  }

  const RetrievalShape& shape() const { return shape_; }
  std::vector<T>& parameters() { return parameters_; }
  std::vector<T>& gradients() { return gradients_; }
  // (rows, d_key) row-major particles of the feature map (linear attention).
  std::vector<T>& particles() { return particles_; }
  std::vector<T>& particle_gradients() { return particle_gradients_; }
  int particle_rows() const { return particle_rows_; }
  // Weight decay nowhere: the anchor trains with plain Adam.
  std::vector<unsigned char> weight_decay_mask() const {
    return std::vector<unsigned char>(size_, 0);
  }
  // (n_values) read-out of example b of the last forward.
  // Key vectors (d, S) column-major and the query vector (d) of example b of the last forward.
  const T* key_vectors(int b) const {
    return k_.data() + std::size_t(b) * shape_.key_size * shape_.pairs;
  }
  const T* query_vector(int b) const { return q_.data() + std::size_t(b) * shape_.key_size; }
  // φ's inputs of example b in the last forward before the map's scale input_scale(): G k_j and G q
  // with a learned transform, s k̂_j and s q̂ with QK normalisation, else k_j and q themselves.
  const T* key_inputs(int b) const {
    return (shape_.separate_input() ? k_in_ : k_).data() +
           std::size_t(b) * shape_.key_size * shape_.pairs;
  }
  const T* query_input(int b) const {
    return (shape_.separate_input() ? q_in_ : q_).data() + std::size_t(b) * shape_.key_size;
  }
  // The scale φ applies to its input: τ, or 1 with QK normalisation (whose s started at τ).
  T input_scale() const {
    return static_cast<T>(shape_.qk_normalised() ? 1.0 : shape_.feature_map.bandwidth);
  }
  const T* output(int b) const { return out_.data() + std::size_t(b) * shape_.values; }
  // Of example b in the last forward: the unnormalised weights w (S), and for linear attention
  // the key features φ(k_j) (D_φ, S) column-major and the query features φ(q) (D_φ).
  const T* weights(int b) const { return weights_.data() + std::size_t(b) * shape_.pairs; }
  const T* key_features(int b) const {
    return phi_k_.data() + std::size_t(b) * shape_.features * shape_.pairs;
  }
  const T* query_features(int b) const { return phi_q_.data() + std::size_t(b) * shape_.features; }
  int prediction(int b) const {
    const T* o = output(b);
    return static_cast<int>(std::max_element(o, o + shape_.values) - o);
  }
  void zero_gradients() {
    std::fill(gradients_.begin(), gradients_.end(), T(0));
    std::fill(particle_gradients_.begin(), particle_gradients_.end(), T(0));
  }

  // The anchor's initialisation: E ~ N(0, 1); W_k, W_q ~ U(±1/√d_key); biases ~ U(±1/√fan_in)
  // (PyTorch's default for nn.Linear); G = I; the QK scale s = τ.
  void initialise_parameters(std::uint64_t seed) {
    const int d = shape_.key_size, e = shape_.embedding;
    auto fill = [&](std::size_t offset, std::size_t n, std::uint64_t tensor, double bound,
                    bool normal) {
      RandomStream s(seed, RandomPurpose::parameter_init, tensor, 0);
      for (std::size_t i = 0; i < n; ++i)
        parameters_[offset + i] =
            static_cast<T>(normal ? s.normal() : bound * (2.0 * s.uniform() - 1.0));
    };
    const double u = 1.0 / std::sqrt(double(d));
    fill(embedding_, std::size_t(shape_.keys) * e, 0, 0.0, true);
    fill(w_value_, std::size_t(d) * shape_.values, 1, u, false);
    fill(w_embed_, std::size_t(d) * e, 2, u, false);
    fill(b_key_, d, 3, 1.0 / std::sqrt(double(shape_.values + e)), false);
    fill(w_query_, std::size_t(d) * e, 4, u, false);
    fill(b_query_, d, 5, 1.0 / std::sqrt(double(e)), false);
    if (shape_.feature_input == FeatureInput::temperature) parameters_[transform_] = T(1);
    if (shape_.feature_input == FeatureInput::metric)
      MatrixMap<T>(param(transform_), d, d).setIdentity();
    if (shape_.qk_normalised())
      parameters_[qk_scale_] = static_cast<T>(shape_.feature_map.bandwidth);
  }
  // The learned transform G of the feature input: t (temperature, 1 × 1) or M (metric, d × d
  // column-major); null for a fixed input.
  const T* feature_transform() const {
    return shape_.transformed_input() ? param(transform_) : nullptr;
  }
  // The learned scale s of QK normalisation (its offset in parameters()); only with it.
  T qk_scale() const { return parameters_[qk_scale_]; }
  std::size_t qk_scale_offset() const { return qk_scale_; }

  // Returns the mean loss when targets are given, else 0.
  double forward(const RetrievalBatch& batch) {
    if (batch.size < 1 || batch.size > max_batch_)
      throw std::invalid_argument("batch larger than the buffers the model was built for");
    const int d = shape_.key_size, e = shape_.embedding, S = shape_.pairs, V = shape_.values;
    ConstMatrixMap<T> E_t(param(embedding_), e, shape_.keys);  // Eᵀ (e, n_keys)
    MatrixMap<T> P(projected_.data(), d, shape_.keys);
    P.noalias() = ConstMatrixMap<T>(param(w_embed_), d, e) * E_t;  // P = W_e Eᵀ
    double loss = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : loss) if (parallel(batch.size))
    for (int b = 0; b < batch.size; ++b) {
      MatrixMap<T> k(k_.data() + std::size_t(b) * d * S, d, S);
      VectorMap<T> q(q_.data() + std::size_t(b) * d, d);
      const int* keys = batch.keys + std::size_t(b) * S;
      const int* values = batch.values + std::size_t(b) * S;
      for (int j = 0; j < S; ++j)  // k_j = W_v[:, v_j] + P[:, key_j] + b_k
        k.col(j) = ConstMatrixMap<T>(param(w_value_), d, V).col(values[j]) + P.col(keys[j]) +
                   ConstVectorMap<T>(param(b_key_), d);
      q.noalias() = ConstMatrixMap<T>(param(w_query_), d, e) * E_t.col(batch.query[b]) +
                    ConstVectorMap<T>(param(b_query_), d);  // q = W_q E[query] + b_q
      T* w = weights_.data() + std::size_t(b) * S;
      pair_weights(b, w);
      double total = 0.0;
      for (int j = 0; j < S; ++j) total += w[j];
      const double den = total + (shape_.attention == AttentionKind::linear ? shape_.delta : 0.0);
      den_[b] = static_cast<T>(den);
      T* out = out_.data() + std::size_t(b) * V;
      std::fill_n(out, V, T(0));
      for (int j = 0; j < S; ++j) out[values[j]] += static_cast<T>(w[j] / den);
      if (batch.target) {
        double l = 0.0;
        for (int c = 0; c < V; ++c) {
          const double r = out[c] - (c == batch.target[b] ? 1.0 : 0.0);
          l += 0.5 * r * r;
        }
        loss += l;
      }
    }
    return loss / batch.size;
  }

  // Adds d loss / d parameters of the last forward to gradients(), and with `particles`
  // d loss / d particles to particle_gradients() (trainable particles).
  void backward(const RetrievalBatch& batch, bool particles = false) {
    if (!batch.target) throw std::invalid_argument("backward needs targets");
    if (particles && particles_.empty())
      throw std::invalid_argument("particle gradients need an attention with particles");
    const int S = shape_.pairs, V = shape_.values;
    const T inv_b = static_cast<T>(1.0 / batch.size);
    const std::ptrdiff_t block = static_cast<std::ptrdiff_t>(particles_.size());
    T* partial =
        particles ? particle_gradient_partials<T>(std::size_t(batch.size) * block) : nullptr;
#pragma omp parallel for schedule(static) if (parallel(batch.size))
    for (int b = 0; b < batch.size; ++b) {
      const int* values = batch.values + std::size_t(b) * S;
      const T* out = out_.data() + std::size_t(b) * V;
      const T* w = weights_.data() + std::size_t(b) * S;
      // loss = ½ Σ_c (out_c − y_c)² / B:  dout_c = (out_c − y_c) / B
      // out_c = Σ_{j: v_j = c} w_j / den:  dw_j = (dout_{v_j} − Σ_c dout_c out_c) / den
      double dot = 0.0;
      for (int c = 0; c < V; ++c)
        dot += (out[c] - (c == batch.target[b] ? T(1) : T(0))) * inv_b * out[c];
      T* dw = dw_.data() + std::size_t(b) * S;
      for (int j = 0; j < S; ++j) {
        const T dout = (out[values[j]] - (values[j] == batch.target[b] ? T(1) : T(0))) * inv_b;
        dw[j] = static_cast<T>((dout - dot) / den_[b]);
      }
      pair_weights_backward(b, w, dw, particles ? partial + b * block : nullptr);
    }
    accumulate_parameter_gradients(batch);
    if (particles)
      add_particle_gradient_partials(particle_gradients_.data(), partial, batch.size, 1, block);
  }

 private:
  std::size_t add(std::size_t n) {
    const std::size_t offset = size_;
    size_ += n;
    return offset;
  }
  // Threads pay off only when a batch holds enough work: a small example's step takes
  // microseconds, less than an OpenMP barrier on a busy machine.
  bool parallel(int batch) const {
    constexpr double kParallelWork = 1 << 20;  // multiply-adds per batch
    return double(batch) * shape_.pairs * (shape_.features + shape_.key_size) >= kParallelWork;
  }
  T* param(std::size_t offset) {
    return parameters_.data() + offset;
  }
  const T* param(std::size_t offset) const {
    return parameters_.data() + offset;
  }
  T* grad(std::size_t offset) {
    return gradients_.data() + offset;
  }

  // x_in (d, n) = G x for a learned G, or column by column s x/‖x‖ with QK normalisation, whose
  // lengths ‖x‖ go to `lengths`; returns x_in.
  const T* transform(const T* x, T* x_in, int n, T* lengths) const {
    const int d = shape_.key_size;
    if (shape_.qk_normalised()) {
      for (int j = 0; j < n; ++j)
        lengths[j] =
            qk_normalise(x + std::size_t(j) * d, x_in + std::size_t(j) * d, d, param(qk_scale_)[0]);
    } else if (shape_.feature_input == FeatureInput::temperature)
      MatrixMap<T>(x_in, d, n) = param(transform_)[0] * ConstMatrixMap<T>(x, d, n);
    else
      MatrixMap<T>(x_in, d, n).noalias() =
          ConstMatrixMap<T>(param(transform_), d, d) * ConstMatrixMap<T>(x, d, n);
    return x_in;
  }
  // dx (d, n) = Gᵀ d(G x), from d(G x) (d, n); with QK normalisation dx from d(s x̂) column by
  // column, returning Σ_j x̂_jᵀ d(s x̂_j), the columns' ∂ℓ/∂s (0 otherwise).
  T transform_backward(const T* x, const T* lengths, const T* dx_in, T* dx, int n) const {
    const int d = shape_.key_size;
    T d_scale = T(0);
    if (shape_.qk_normalised()) {
      for (int j = 0; j < n; ++j) {
        const std::size_t at = std::size_t(j) * d;
        d_scale +=
            qk_normalise_backward(x + at, lengths[j], param(qk_scale_)[0], dx_in + at, dx + at, d);
      }
    } else if (shape_.feature_input == FeatureInput::temperature)
      MatrixMap<T>(dx, d, n) = param(transform_)[0] * ConstMatrixMap<T>(dx_in, d, n);
    else
      MatrixMap<T>(dx, d, n).noalias() =
          ConstMatrixMap<T>(param(transform_), d, d).transpose() * ConstMatrixMap<T>(dx_in, d, n);
    return d_scale;
  }

  // w (S) = the unnormalised weights of example b, from its k (d, S) and q (d).
  void pair_weights(int b, T* w) {
    const int d = shape_.key_size, S = shape_.pairs, D = shape_.features;
    ConstMatrixMap<T> k(k_.data() + std::size_t(b) * d * S, d, S);
    ConstVectorMap<T> q(q_.data() + std::size_t(b) * d, d);
    switch (shape_.attention) {
      case AttentionKind::uniform:
        std::fill_n(w, S, T(1));
        break;
      case AttentionKind::softmax: {  // w_j = exp(s_j − max s),  s_j = k_jᵀq / √d
        VectorMap<T> s(w, S);
        s.noalias() = k.transpose() * q / static_cast<T>(std::sqrt(double(d)));
        s.array() = (s.array() - s.maxCoeff()).exp();
        break;
      }
      case AttentionKind::linear: {  // w_j = φ(G k_j)ᵀ φ(G q), or φ(s k̂_j)ᵀ φ(s q̂)
        T* fk = phi_k_.data() + std::size_t(b) * D * S;
        T* fq = phi_q_.data() + std::size_t(b) * D;
        const bool g = shape_.separate_input();
        const bool qk = shape_.qk_normalised();
        const T* k_in = g ? transform(k.data(), k_in_.data() + std::size_t(b) * d * S, S,
                                      qk ? k_length_.data() + std::size_t(b) * S : nullptr)
                          : k.data();
        const T* q_in = g ? transform(q.data(), q_in_.data() + std::size_t(b) * d, 1,
                                      qk ? q_length_.data() + b : nullptr)
                          : q.data();
        const T tau = input_scale();
        feature_map_forward(shape_.feature_map, fk, ConstStridedMap<T>(k_in, d, S, {d}),
                            particles_.data(), D, tau, FeatureShift::shared);
        if (!key_norm_.empty())  // φ(k_j) / ‖φ(k_j)‖
          normalise_key_columns(shape_.feature_map.key_normalisation, fk, D, S,
                                key_norm_.data() + std::size_t(b) * S);
        feature_map_forward(shape_.feature_map, fq, ConstStridedMap<T>(q_in, d, 1, {d}),
                            particles_.data(), D, tau, FeatureShift::per_column);
        VectorMap<T>(w, S).noalias() =
            ConstMatrixMap<T>(fk, D, S).transpose() * ConstVectorMap<T>(fq, D);
        break;
      }
    }
  }

  // From dw (S) to dk (d, S) and dq (d) of example b; dw is overwritten. A non-null domega
  // accumulates the example's ∂ℓ/∂Ω.
  void pair_weights_backward(int b, const T* w, T* dw_data, T* domega) {
    const int d = shape_.key_size, S = shape_.pairs, D = shape_.features;
    T* dk_data = dk_.data() + std::size_t(b) * d * S;
    ConstMatrixMap<T> k(k_.data() + std::size_t(b) * d * S, d, S);
    ConstVectorMap<T> q(q_.data() + std::size_t(b) * d, d);
    VectorMap<T> dq(dq_.data() + std::size_t(b) * d, d);
    switch (shape_.attention) {
      case AttentionKind::uniform:
        std::fill_n(dk_data, std::size_t(d) * S, T(0));
        dq.setZero();
        break;
      case AttentionKind::softmax: {
        // w_j = exp(s_j − c): ds_j = w_j dw_j (c is constant: the normalisation removes it);
        // s_j = k_jᵀq/√d: dk_j = ds_j q/√d, dq = Σ_j ds_j k_j/√d
        VectorMap<T> ds(dw_data, S);
        for (int j = 0; j < S; ++j) ds[j] *= w[j];
        const T r = static_cast<T>(1.0 / std::sqrt(double(d)));
        dq.noalias() = r * (k * ds);
        MatrixMap<T>(dk_data, d, S).noalias() = r * (q * ds.transpose());
        break;
      }
      case AttentionKind::linear: {
        // w_j = φk_jᵀ φq:  dφk_j = dw_j φq,  dφq = Σ_j dw_j φk_j
        const T* fk = phi_k_.data() + std::size_t(b) * D * S;
        const T* fq = phi_q_.data() + std::size_t(b) * D;
        T* dfk = dphi_k_.data() + std::size_t(b) * D * S;
        T* dfq = dphi_q_.data() + std::size_t(b) * D;
        ConstVectorMap<T> dw(dw_data, S);
        VectorMap<T>(dfq, D).noalias() = ConstMatrixMap<T>(fk, D, S) * dw;
        MatrixMap<T>(dfk, D, S).noalias() = ConstVectorMap<T>(fq, D) * dw.transpose();
        // With a learned G or QK normalisation the map's gradient lands in d(G k), d(G q) (or
        // d(s k̂), d(s q̂)) first.
        const bool g = shape_.separate_input();
        T* dk_in_data = g ? dk_in_.data() + std::size_t(b) * d * S : dk_data;
        T* dq_in_data = g ? dq_in_.data() + std::size_t(b) * d : dq.data();
        const T* k_in = g ? k_in_.data() + std::size_t(b) * d * S : k.data();
        const T* q_in = g ? q_in_.data() + std::size_t(b) * d : q.data();
        const T tau = input_scale();
        StridedMap<T> dk_in(dk_in_data, d, S, {d});
        dk_in.setZero();
        StridedMap<T> dq_in(dq_in_data, d, 1, {d});
        dq_in.setZero();
        const T* phi_k = fk;
        if (!key_norm_.empty()) {  // dφ̃ → dφ, and φ itself for the map's backward
          T* raw = raw_phi_k_.data() + std::size_t(b) * D * S;
          key_normalisation_backward(shape_.feature_map.key_normalisation, dfk, fk,
                                     key_norm_.data() + std::size_t(b) * S, D, S, raw);
          phi_k = raw;
        }
        feature_map_backward(shape_.feature_map, dk_in, dfk, phi_k,
                             ConstStridedMap<T>(k_in, d, S, {d}), particles_.data(), D, tau,
                             domega);
        feature_map_backward(shape_.feature_map, dq_in, dfq, fq,
                             ConstStridedMap<T>(q_in, d, 1, {d}), particles_.data(), D, tau,
                             domega);
        if (g) {  // G k = t k or M k:  dk = Gᵀ d(G k), and the same for q; or y = s k̂
          const bool qk = shape_.qk_normalised();
          const T ds =
              transform_backward(k.data(), qk ? k_length_.data() + std::size_t(b) * S : nullptr,
                                 dk_in_data, dk_data, S) +
              transform_backward(q.data(), qk ? q_length_.data() + b : nullptr, dq_in_data,
                                 dq.data(), 1);
          if (qk) d_scale_[b] = ds;
        }
        break;
      }
    }
  }

  // Sums the examples' dk, dq into the parameter gradients in example order (independent of the
  // thread count):  dW_v[:, v_j] += dk_j,  dP[:, key_j] += dk_j,  db_k += Σ dk_j,
  // dW_q += dq E[query]ᵀ,  db_q += dq,  dE[query] += W_qᵀ dq;  then P = W_e Eᵀ:
  // dW_e += dP E,  dE += dPᵀ W_e.  A learned G: G k = t k gives dt += Σ d(G k) · k,
  // G k = M k gives dM += d(G k) kᵀ (the same for q). QK normalisation: ds += the example's
  // Σ_j k̂_jᵀ d(s k̂_j) + q̂ᵀ d(s q̂).
  void accumulate_parameter_gradients(const RetrievalBatch& batch) {
    const int d = shape_.key_size, e = shape_.embedding, S = shape_.pairs, V = shape_.values;
    MatrixMap<T> dP(d_projected_.data(), d, shape_.keys);
    dP.setZero();
    MatrixMap<T> dWv(grad(w_value_), d, V), dWe(grad(w_embed_), d, e), dWq(grad(w_query_), d, e);
    VectorMap<T> dbk(grad(b_key_), d), dbq(grad(b_query_), d);
    MatrixMap<T> dE_t(grad(embedding_), e, shape_.keys);
    ConstMatrixMap<T> E_t(param(embedding_), e, shape_.keys);
    ConstMatrixMap<T> Wq(param(w_query_), d, e), We(param(w_embed_), d, e);
    for (int b = 0; b < batch.size; ++b) {
      ConstMatrixMap<T> dk(dk_.data() + std::size_t(b) * d * S, d, S);
      ConstVectorMap<T> dq(dq_.data() + std::size_t(b) * d, d);
      const int* keys = batch.keys + std::size_t(b) * S;
      const int* values = batch.values + std::size_t(b) * S;
      for (int j = 0; j < S; ++j) {
        dWv.col(values[j]) += dk.col(j);
        dP.col(keys[j]) += dk.col(j);
        dbk += dk.col(j);
      }
      const int query = batch.query[b];
      dWq.noalias() += dq * E_t.col(query).transpose();
      dbq += dq;
      dE_t.col(query).noalias() += Wq.transpose() * dq;
      if (shape_.qk_normalised()) grad(qk_scale_)[0] += d_scale_[b];
      if (shape_.transformed_input()) {
        ConstMatrixMap<T> k(k_.data() + std::size_t(b) * d * S, d, S);
        ConstVectorMap<T> q(q_.data() + std::size_t(b) * d, d);
        ConstMatrixMap<T> dk_in(dk_in_.data() + std::size_t(b) * d * S, d, S);
        ConstVectorMap<T> dq_in(dq_in_.data() + std::size_t(b) * d, d);
        if (shape_.feature_input == FeatureInput::temperature) {
          grad(transform_)[0] += (dk_in.array() * k.array()).sum() + dq_in.dot(q);
        } else {
          MatrixMap<T> dM(grad(transform_), d, d);
          dM.noalias() += dk_in * k.transpose();
          dM.noalias() += dq_in * q.transpose();
        }
      }
    }
    dWe.noalias() += dP * E_t.transpose();
    dE_t.noalias() += We.transpose() * dP;
  }

  RetrievalShape shape_;
  int max_batch_, particle_rows_ = 0;
  std::size_t size_ = 0, embedding_, w_value_, w_embed_, b_key_, w_query_, b_query_, transform_ = 0,
              qk_scale_ = 0;
  std::vector<T> parameters_, gradients_, particles_, particle_gradients_;
  std::vector<T> projected_, d_projected_, k_, q_, phi_k_, phi_q_, weights_, den_, out_;
  std::vector<T> dw_, dk_, dq_, dphi_k_, dphi_q_;
  std::vector<T> key_norm_, raw_phi_k_;  // with normalised keys: ‖φ(k_j)‖ (B, S), φ (B, D, S)
  std::vector<T> k_in_, q_in_, dk_in_, dq_in_;  // G k, G q (or s k̂, s q̂) and their gradients
  std::vector<T> k_length_, q_length_, d_scale_;  // QK normalisation: ‖k_j‖ (B, S), ‖q‖, ∂ℓ/∂s (B)
};

}  // namespace cpm
