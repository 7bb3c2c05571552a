// Linear attention on arrays: one batch of sequences through the forward and backward passes of
// transformer/linear_attention.hpp and transformer/causal_linear_attention.hpp, in double, on a
// q | k | v buffer laid out as the models lay it out (transformer/attention_layout.hpp). It is the
// reference cpm.torch.KernelAttention is tested against.
//   q, k, v, out (B, T, H, d_head) in C order  ≡  the library's (C, N) columns, N = B·T tokens,
//   C = H·d_head channels: token (b, t) is column b·T + t, head h its rows h·d_head …
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include "io/input_error.hpp"
#include "python/bindings.hpp"
#include "transformer/causal_linear_attention.hpp"
#include "transformer/linear_attention.hpp"

namespace cpm::python {

namespace {

using CArray = py::array_t<double, py::array::c_style | py::array::forcecast>;

std::string shape_text(const py::array& a) {
  std::string text = "(";
  for (py::ssize_t i = 0; i < a.ndim(); ++i) text += (i ? ", " : "") + std::to_string(a.shape(i));
  return text + (a.ndim() == 1 ? ",)" : ")");
}

// A float64 array in C order (converted if it is not) of the given rank and finite entries;
// InputError naming the argument otherwise.
CArray array_argument(const py::handle& value, const std::string& name, py::ssize_t rank,
                      const std::string& layout) {
  CArray a = CArray::ensure(value);
  if (!a) throw InputError(name + ": expected an array of numbers");
  if (a.ndim() != rank)
    throw InputError(name + ": expected a " + std::to_string(rank) + "-D array " + layout +
                     ", got shape " + shape_text(a));
  if (!std::all_of(a.data(), a.data() + a.size(), [](double x) { return std::isfinite(x); }))
    throw InputError(name + ": has a NaN or infinite entry");
  return a;
}

void check_same_shape(const CArray& a, const CArray& like, const std::string& name) {
  if (!std::equal(a.shape(), a.shape() + 4, like.shape()))
    throw InputError(name + ": expected the shape of q " + shape_text(like) + ", got " +
                     shape_text(a));
}

FeatureMapSpec spec_of(const std::string& map, int dpfp_nu, bool projected, double epsilon,
                       double bandwidth, const py::object& normalise_keys) {
  FeatureMapSpec spec;
  try {
    spec.key_normalisation = key_normalisation(
        normalise_keys.is_none() ? std::string("none") : py::cast<std::string>(normalise_keys));
  } catch (const std::exception& e) {
    throw InputError(std::string("normalise_keys: ") + e.what());
  }
  try {
    spec.kind = feature_map_kind(map);
  } catch (const std::invalid_argument& e) {
    throw InputError(std::string("map: ") + e.what());
  }
  if (spec.kind == FeatureMapKind::rff)
    throw InputError("map: rff features can be negative: not usable in linear attention");
  if (!(epsilon >= 0.0 && std::isfinite(epsilon)))
    throw InputError("epsilon: must be >= 0 and finite");
  if (!(bandwidth > 0.0 && std::isfinite(bandwidth)))
    throw InputError("bandwidth: must be > 0 and finite");
  spec.dpfp_nu = dpfp_nu;
  spec.projected = projected;
  spec.epsilon = epsilon;
  spec.bandwidth = bandwidth;
  return spec;
}

bool needs_particles(const FeatureMapSpec& spec) {
  return spec.kind != FeatureMapKind::elu &&
         !(spec.kind == FeatureMapKind::dpfp && !spec.projected);
}

// The sequences' lengths (B), 1 ≤ len ≤ T; every sequence full when lengths is None.
std::vector<int> lengths_of(const py::object& lengths, int batch, int length) {
  if (lengths.is_none()) return std::vector<int>(static_cast<std::size_t>(batch), length);
  const auto a = py::array_t<int, py::array::c_style | py::array::forcecast>::ensure(lengths);
  if (!a || a.ndim() != 1 || a.shape(0) != batch)
    throw InputError("lengths: expected " + std::to_string(batch) + " lengths, one per sequence");
  std::vector<int> out(a.data(), a.data() + batch);
  for (int len : out)
    if (len < 1 || len > length)
      throw InputError("lengths: each must be in 1.." + std::to_string(length) + ", not " +
                       std::to_string(len));
  return out;
}

// The attention's shapes and arrays, checked: C = H·d_head channels of N = B·T tokens; m = D_φ.
struct AttentionCall {
  AttentionLayout layout;
  FeatureMapSpec spec;
  int m = 0, rows = 0;
  bool causal = false;
  std::vector<int> lengths;
  std::vector<double> qkv, omega;  // (3C, N), (H, rows, d_head)
};

// The cache and per-thread scratch of one forward pass, kept for its backward pass.
struct AttentionBuffers {
  std::vector<double> phi_q, phi_k, kv, z, inverse_denominator, key_norm, scratch, scratch_double;

  explicit AttentionBuffers(const AttentionCall& c) {
    const AttentionLayout& a = c.layout;
    const std::size_t pairs = std::size_t(a.batch) * a.heads, L = a.length, m = c.m;
    phi_q.resize(pairs * m * L);
    phi_k.resize(pairs * m * L);
    kv.resize(pairs * m * a.head_size);
    z.resize(pairs * m);
    inverse_denominator.resize(pairs * L);
    key_norm.resize(pairs * L);
    const std::size_t threads = static_cast<std::size_t>(max_threads());
    scratch.resize(threads * (c.causal ? causal_linear_attention_scratch(c.m, a.length, a.head_size)
                                       : linear_attention_scratch(c.m, a.length, a.head_size)));
    scratch_double.resize(threads * (c.causal
                                         ? causal_linear_attention_scratch_double(c.m, a.head_size)
                                         : linear_attention_scratch_double(c.m, a.head_size)));
  }
  LinearAttentionCache<double> cache() {
    return {phi_q.data(),   phi_k.data(), kv.data(), z.data(), inverse_denominator.data(),
            key_norm.data()};
  }
};

// qkv's column n = [q_n; k_n; v_n] from the C-ordered (B, T, H, d_head) arrays (rows n of C).
std::vector<double> qkv_buffer(const CArray& q, const CArray& k, const CArray& v, std::size_t C) {
  const std::size_t N = static_cast<std::size_t>(q.size()) / C;
  std::vector<double> qkv(3 * C * N);
  const CArray* parts[] = {&q, &k, &v};
  for (std::size_t n = 0; n < N; ++n)
    for (std::size_t part = 0; part < 3; ++part)
      std::copy_n(parts[part]->data() + n * C, C, qkv.data() + (3 * n + part) * C);
  return qkv;
}

void forward(const AttentionCall& c, AttentionBuffers& b, double* out) {
  const double* omega = c.rows > 0 ? c.omega.data() : nullptr;
  if (c.causal)
    causal_linear_attention_forward<double>(out, b.cache(), c.qkv.data(), omega, c.layout, c.spec,
                                            c.m, b.scratch.data(), b.scratch_double.data());
  else
    linear_attention_forward<double>(out, b.cache(), c.qkv.data(), omega, c.lengths.data(),
                                     c.layout, c.spec, c.m, b.scratch.data(),
                                     b.scratch_double.data());
}

// dqkv (3C, N) and domega (as omega, when the map has particles) of ℓ = Σ grad_output ⊙ out.
void backward(const AttentionCall& c, AttentionBuffers& b, const double* out,
              const double* grad_output, double* dqkv, double* domega) {
  const double* omega = c.rows > 0 ? c.omega.data() : nullptr;
  if (c.causal)
    causal_linear_attention_backward<double>(dqkv, grad_output, out, b.cache(), c.qkv.data(), omega,
                                             c.layout, c.spec, c.m, b.scratch.data(),
                                             b.scratch_double.data(), domega);
  else
    linear_attention_backward<double>(dqkv, grad_output, out, b.cache(), c.qkv.data(), omega,
                                      c.lengths.data(), c.layout, c.spec, c.m, b.scratch.data(),
                                      b.scratch_double.data(), domega);
}

AttentionCall attention_call(const CArray& q, const CArray& k, const CArray& v,
                             const py::object& omega, const FeatureMapSpec& spec, bool causal,
                             const py::object& lengths) {
  AttentionCall c;
  c.spec = spec;
  c.causal = causal;
  c.layout.batch = static_cast<int>(q.shape(0));
  c.layout.length = static_cast<int>(q.shape(1));
  c.layout.heads = static_cast<int>(q.shape(2));
  c.layout.head_size = static_cast<int>(q.shape(3));
  const AttentionLayout& a = c.layout;
  if (q.size() == 0) throw InputError("q: every dimension must be >= 1");
  if (needs_particles(spec)) {
    if (omega.is_none())
      throw InputError("omega: the map '" + feature_map_name(spec.kind) +
                       "' needs particles (heads, rows, d_head)");
    const CArray w = array_argument(omega, "omega", 3, "(heads, rows, d_head)");
    if (w.shape(0) != a.heads || w.shape(2) != a.head_size)
      throw InputError("omega: expected (" + std::to_string(a.heads) + ", rows, " +
                       std::to_string(a.head_size) + "), got " + shape_text(w));
    c.rows = static_cast<int>(w.shape(1));
    c.omega.assign(w.data(), w.data() + w.size());
  } else if (!omega.is_none()) {
    throw InputError("omega: the map '" + feature_map_name(spec.kind) + "' takes no particles");
  }
  c.m = feature_dimension(spec, c.rows, a.head_size);
  particle_rows(spec, c.m, a.head_size);  // refuses what the map cannot take, before any work
  if (causal && !lengths.is_none())
    throw InputError("lengths: the causal attention has no padding (every sequence is T long)");
  c.lengths = lengths_of(lengths, a.batch, a.length);
  c.qkv = qkv_buffer(q, k, v, static_cast<std::size_t>(a.channels()));
  return c;
}

}  // namespace

void bind_attention(py::module_& m) {
  m.def(
      "linear_attention",
      [](const py::handle& q_in, const py::handle& k_in, const py::handle& v_in,
         const py::object& omega, const std::string& map, bool causal, double bandwidth,
         double epsilon, int dpfp_nu, bool projected, const py::object& lengths,
         const py::object& grad_output, const py::object& normalise_keys) -> py::object {
        const std::string layout = "(B, T, heads, d_head)";
        const CArray q = array_argument(q_in, "q", 4, layout);
        const CArray k = array_argument(k_in, "k", 4, layout);
        const CArray v = array_argument(v_in, "v", 4, layout);
        check_same_shape(k, q, "k");
        check_same_shape(v, q, "v");
        const AttentionCall c = attention_call(
            q, k, v, omega, spec_of(map, dpfp_nu, projected, epsilon, bandwidth, normalise_keys),
            causal, lengths);
        std::vector<py::ssize_t> shape(q.shape(), q.shape() + 4);
        CArray out(shape);
        double* out_data = out.mutable_data();
        if (grad_output.is_none()) {
          without_gil([&] {
            AttentionBuffers buffers(c);
            forward(c, buffers, out_data);
          });
          return out;
        }
        const CArray dout = array_argument(grad_output, "grad_output", 4, layout);
        check_same_shape(dout, q, "grad_output");
        const std::size_t C = static_cast<std::size_t>(c.layout.channels());
        const std::size_t N = static_cast<std::size_t>(q.size()) / C;
        CArray dq(shape), dk(shape), dv(shape);
        py::object domega = py::none();
        double* domega_data = nullptr;
        if (c.rows > 0) {
          CArray d(
              {py::ssize_t{c.layout.heads}, py::ssize_t{c.rows}, py::ssize_t{c.layout.head_size}});
          domega_data = d.mutable_data();
          std::fill_n(domega_data, d.size(), 0.0);
          domega = std::move(d);
        }
        double *dq_data = dq.mutable_data(), *dk_data = dk.mutable_data(),
               *dv_data = dv.mutable_data();
        without_gil([&] {
          AttentionBuffers buffers(c);
          forward(c, buffers, out_data);
          std::vector<double> dqkv(3 * C * N, 0.0);
          backward(c, buffers, out_data, dout.data(), dqkv.data(), domega_data);
          double* parts[] = {dq_data, dk_data, dv_data};
          for (std::size_t n = 0; n < N; ++n)  // column n = [dq_n; dk_n; dv_n]
            for (std::size_t part = 0; part < 3; ++part)
              std::copy_n(dqkv.data() + (3 * n + part) * C, C, parts[part] + n * C);
        });
        py::dict grads;
        grads["q"] = std::move(dq);
        grads["k"] = std::move(dk);
        grads["v"] = std::move(dv);
        grads["omega"] = domega;
        return py::make_tuple(std::move(out), grads);
      },
      py::arg("q"), py::arg("k"), py::arg("v"), py::arg("omega") = py::none(),
      py::arg("map") = "favor", py::arg("causal") = false, py::arg("bandwidth") = 1.0,
      py::arg("epsilon") = 1e-6, py::arg("dpfp_nu") = 1, py::arg("projected") = false,
      py::arg("lengths") = py::none(), py::arg("grad_output") = py::none(),
      py::arg("normalise_keys") = py::none(),
      "The C++ linear attention of one batch in double: q, k, v (B, T, heads, d_head) -> out of\n"
      "the same shape, out_i = phi(q_i).sum_j phi(k_j) v_j / (phi(q_i).sum_j phi(k_j) + 1e-12)\n"
      "over j < lengths[b] (None: every token), or j <= i when causal (no lengths). omega\n"
      "(heads, rows, d_head): each head's particles (projection for taylor and the projected\n"
      "dpfp; None for elu and dpfp). With grad_output (B, T, heads, d_head): (out, grads),\n"
      "grads {'q', 'k', 'v', 'omega'} the gradients of sum(grad_output * out) by the C++\n"
      "backward pass (transformer/linear_attention.hpp, causal_linear_attention.hpp).\n"
      "normalise_keys 'l2' or 'l1': the keys' features divided by their length\n"
      "(transformer/key_normalisation.hpp).");
}

}  // namespace cpm::python
