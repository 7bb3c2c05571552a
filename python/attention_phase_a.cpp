// Phase A of one attention head on arrays (docs/guide/python.md, "The two phases on your PyTorch
// model"): the head's queries and keys, its particles, and a target; the dynamics are those of
// `cpm train` (target "labels": experiments/attention/attention_phase_a.hpp, align_head_tokens)
// and of `cpm recall` (targets "softmax" and "capacity": experiments/recall/recall_phase_a.hpp,
// align_head_particles), with their defaults. φ reads τ s x, s = d_head^{-1/4}, as the attention's
// feature maps do.
#include <cmath>
#include <map>
#include <memory>
#include <set>

#include "config/recall_config.hpp"
#include "config/train_config.hpp"
#include "experiments/attention/attention_phase_a.hpp"
#include "experiments/recall/recall_phase_a.hpp"
#include "io/input_error.hpp"
#include "physics/alignment.hpp"
#include "python/bindings.hpp"
#include "transformer/attention_feature_maps.hpp"

namespace cpm::python {

namespace {

// The keyword options of the dynamics, read by name and type; unknown() names what was not read.
class Options {
 public:
  explicit Options(const py::kwargs& kwargs) {
    for (const auto& [key, value] : kwargs)
      values_[py::cast<std::string>(key)] = py::reinterpret_borrow<py::object>(value);
  }
  double number(const std::string& key, double fallback) {
    if (!take(key)) return fallback;
    const py::handle v = values_[key];
    if ((!PyFloat_Check(v.ptr()) && !PyLong_Check(v.ptr())) || PyBool_Check(v.ptr()))
      throw InputError(key + ": expected a number");
    return py::cast<double>(v);
  }
  int integer(const std::string& key, int fallback) {
    if (!take(key)) return fallback;
    const py::handle v = values_[key];
    if (!PyLong_Check(v.ptr()) || PyBool_Check(v.ptr()))
      throw InputError(key + ": expected an integer");
    const long long x = py::cast<long long>(v);
    if (x < 0 || x > 1'000'000'000) throw InputError(key + ": must lie in [0, 1e9]");
    return static_cast<int>(x);
  }
  bool boolean(const std::string& key, bool fallback) {
    if (!take(key)) return fallback;
    if (!PyBool_Check(values_[key].ptr())) throw InputError(key + ": expected True or False");
    return py::cast<bool>(values_[key]);
  }
  std::string text(const std::string& key, const std::string& fallback) {
    if (!take(key)) return fallback;
    if (!PyUnicode_Check(values_[key].ptr())) throw InputError(key + ": expected a string");
    return py::cast<std::string>(values_[key]);
  }
  bool has(const std::string& key) const { return values_.count(key) != 0; }
  // InputError for the first option nobody read, naming the target it does not apply to.
  void finish(const std::string& target) const {
    for (const auto& [key, value] : values_)
      if (!read_.count(key))
        throw InputError(key + ": not an option of attention_phase_a with target '" + target + "'");
  }

 private:
  bool take(const std::string& key) {
    read_.insert(key);
    return values_.count(key) && !values_[key].is_none();
  }
  std::map<std::string, py::object> values_;
  std::set<std::string> read_;
};

// The first row of every sequence and the end: sequence[i] numbers row i's sequence, 0 for the
// first and each next sequence one more, so that a sequence's rows are contiguous.
std::vector<Eigen::Index> sequence_bounds(const py::object& sequence, Eigen::Index rows) {
  std::vector<Eigen::Index> bounds = {0};
  if (!sequence.is_none()) {
    const auto ids =
        py::array_t<long long, py::array::c_style | py::array::forcecast>::ensure(sequence);
    if (!ids || ids.ndim() != 1 || ids.shape(0) != rows)
      throw InputError("sequence: expected one sequence number per row (" + std::to_string(rows) +
                       ")");
    const long long* id = ids.data();
    if (rows > 0 && id[0] != 0) throw InputError("sequence: the first row's number must be 0");
    for (Eigen::Index i = 1; i < rows; ++i) {
      if (id[i] != id[i - 1] && id[i] != id[i - 1] + 1)
        throw InputError("sequence: row " + std::to_string(i) + " has number " +
                         std::to_string(id[i]) + " after " + std::to_string(id[i - 1]) +
                         " (rows of a sequence contiguous, numbered 0, 1, 2, ...)");
      if (id[i] != id[i - 1]) bounds.push_back(i);
    }
  }
  bounds.push_back(rows);
  return bounds;
}

py::dict report_of(const HeadAlignment& a) {
  py::dict r;
  r["alignment_before"] = a.before;
  r["alignment_after"] = a.after;
  r["gamma_effective"] = a.gamma;
  r["lambda"] = a.lambda;
  r["repulsion_ratio_start"] = a.repulsion_ratio_start;
  r["repulsion_ratio_end"] = a.repulsion_ratio_end;
  r["steps"] = a.steps;
  r["converged"] = a.converged;
  r["particle_norm"] = a.norm;
  r["displacement"] = a.displacement;
  r["linear_fit_residual"] = a.fit_residual;
  r["seconds"] = a.seconds;
  return r;
}

py::dict report_of(const RecallHeadAlignment& a) {
  py::dict r;
  r["alignment_before"] = a.before;  // mean KL(p ‖ â)
  r["alignment_after"] = a.after;
  r["gamma_effective"] = a.gamma;
  r["lambda"] = a.lambda;
  r["steps"] = a.iterations;
  r["converged"] = a.converged;
  r["particle_norm"] = a.norm;
  r["displacement"] = a.displacement;
  r["seconds"] = a.seconds;
  return r;
}

void read_radius(Options& o, std::optional<double>& radius) {
  if (!o.has("radius")) return;
  radius = o.number("radius", 0.0);
  if (!(*radius >= 0.0) || !std::isfinite(*radius))
    throw InputError("radius: must be >= 0 (0: the whole space)");
}

KeyNormalisation read_normalise_keys(Options& o) {
  try {
    return key_normalisation(o.text("normalise_keys", "none"));
  } catch (const std::invalid_argument& e) {
    throw InputError(std::string("normalise_keys: ") + e.what());
  }
}

// The labels target (cpm train's Phase A): the keys (and queries) of each sequence align with
// its class label.
py::tuple labels_phase_a(Eigen::MatrixXd omega, const Eigen::MatrixXd& q, const Eigen::MatrixXd& k,
                         const std::vector<Eigen::Index>& bounds, const py::object& labels,
                         FeatureMapKind kind, double scale, std::uint64_t seed,
                         std::uint64_t replica, Options& o) {
  const std::size_t n = bounds.size() - 1;
  if (labels.is_none()) throw InputError("labels: target 'labels' needs one label per sequence");
  const auto l = py::array_t<long long, py::array::c_style | py::array::forcecast>::ensure(labels);
  if (!l || l.ndim() != 1 || static_cast<std::size_t>(l.shape(0)) != n)
    throw InputError("labels: expected one class label per sequence (" + std::to_string(n) + ")");
  Eigen::VectorXi classes_of(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (l.data()[i] < 0 || l.data()[i] > 1'000'000)
      throw InputError("labels: class labels are 0, 1, 2, ..., not " + std::to_string(l.data()[i]));
    classes_of[static_cast<Eigen::Index>(i)] = static_cast<int>(l.data()[i]);
  }
  PhaseAConfig c;
  c.gamma = o.number("gamma", c.gamma);
  if (!(c.gamma > 0.0) || !std::isfinite(c.gamma)) throw InputError("gamma: must be positive");
  c.relative_gamma = o.boolean("relative_gamma", c.relative_gamma);
  read_radius(o, c.radius);
  c.centred = o.boolean("centred", c.centred);
  c.normalised = o.boolean("normalised", c.normalised);
  const KeyNormalisation keys = read_normalise_keys(o);
  if (c.normalised && keys != KeyNormalisation::none)
    throw InputError("normalised: the keys' own normalisation (normalise_keys) is aligned");
  c.queries_and_keys = o.boolean("queries_and_keys", c.queries_and_keys);
  c.dynamics.steps = o.integer("steps", c.dynamics.steps);
  c.dynamics.step = o.number("step", c.dynamics.step);
  c.dynamics.beta = o.number("beta", c.dynamics.beta);
  if (!(c.dynamics.step > 0.0)) throw InputError("step: must be > 0");
  if (!(c.dynamics.beta > 0.0)) throw InputError("beta: must be > 0 (inf: no noise)");
  c.tolerance = o.number("tolerance", c.tolerance);
  if (!(c.tolerance >= 0.0 && c.tolerance < 1.0)) throw InputError("tolerance: must lie in [0, 1)");
  c.check_every = std::max(1, o.integer("check_every", c.check_every));
  c.interaction.kernel = riesz_kernel(o.number("s", c.interaction.kernel.s));
  c.interaction.lambda = o.number("lambda_", c.interaction.lambda);
  if (!(c.interaction.lambda >= 0.0)) throw InputError("lambda_: must be >= 0");
  if (o.has("repulsion_fraction")) {
    if (o.has("lambda_")) throw InputError("repulsion_fraction: give it or lambda_, not both");
    c.repulsion_fraction = o.number("repulsion_fraction", 0.0);
    if (!(*c.repulsion_fraction >= 0.0)) throw InputError("repulsion_fraction: must be >= 0");
  }
  c.source = "attention_phase_a";
  o.finish("labels");

  Eigen::MatrixXd sequence_targets =
      alignment_targets(classes_of, std::max(2, classes_of.size() ? classes_of.maxCoeff() + 1 : 2));
  if (c.centred) centre_targets(sequence_targets);
  std::vector<std::size_t> lengths(n);
  for (std::size_t i = 0; i < n; ++i) lengths[i] = bounds[i + 1] - bounds[i];
  const Eigen::MatrixXd targets =
      spread_token_targets(sequence_targets, lengths, c.queries_and_keys);
  Eigen::MatrixXd rows(targets.rows(), k.cols());
  rows.topRows(k.rows()) = scale * k;
  if (c.queries_and_keys) rows.bottomRows(q.rows()) = scale * q;
  auto x = std::make_shared<const Eigen::MatrixXd>(std::move(rows));
  const HeadAlignment a = without_gil([&] {
    return align_head_tokens(omega, x, targets, FeatureMap(kind), keys, c, seed, replica,
                             [](int) { raise_pending_signal(); });
  });
  return py::make_tuple(to_numpy(std::move(omega)), report_of(a));
}

// The targets "softmax" (the head's own softmax weights, softmax_i(qᵀk_i / (temperature √d)))
// and "capacity" (each key attending to itself alone among its sequence's keys), aligned by
// cpm recall's Phase A on favor's weights.
py::tuple weights_phase_a(Eigen::MatrixXd omega, const Eigen::MatrixXd& q, const Eigen::MatrixXd& k,
                          const std::vector<Eigen::Index>& bounds, bool causal, bool capacity,
                          double bandwidth, double scale, std::uint64_t seed, std::uint64_t replica,
                          Options& o) {
  const std::string target = capacity ? "capacity" : "softmax";
  const double temperature = capacity ? 1.0 : o.number("temperature", 1.0);
  const KeyNormalisation keys = read_normalise_keys(o);
  if (!(temperature > 0.0) || !std::isfinite(temperature))
    throw InputError("temperature: must be a positive number");
  RecallPhaseAConfig c;
  const int d = static_cast<int>(k.cols());
  c.interaction = {.kernel = InteractionKernel::power(std::max(d - 1.0, 0.5)), .lambda = 1.0};
  c.gamma = o.number("gamma", c.gamma);
  if (!(c.gamma > 0.0) || !std::isfinite(c.gamma)) throw InputError("gamma: must be positive");
  read_radius(o, c.radius);
  c.interaction.kernel = riesz_kernel(o.number("s", c.interaction.kernel.s));
  c.repulsion_fraction = o.number("repulsion_fraction", c.repulsion_fraction);
  if (!(c.repulsion_fraction >= 0.0)) throw InputError("repulsion_fraction: must be >= 0");
  const std::string integrator = o.text("integrator", "minimize");
  if (integrator == "langevin") {
    c.dynamics.integrator = Integrator::langevin;
  } else if (integrator != "minimize") {
    throw InputError("integrator: 'minimize' (FIRE) or 'langevin', not '" + integrator + "'");
  }
  c.dynamics.steps = o.integer("steps", c.dynamics.steps);
  c.dynamics.step = o.number("step", c.dynamics.step);
  c.dynamics.beta = o.number("beta", c.dynamics.beta);
  c.dynamics.max_iterations = o.integer("max_iterations", c.dynamics.max_iterations);
  c.dynamics.tolerance = o.number("tolerance", c.dynamics.tolerance);
  if (!(c.dynamics.step > 0.0)) throw InputError("step: must be > 0");
  if (!(c.dynamics.beta > 0.0)) throw InputError("beta: must be > 0 (inf: no noise)");
  if (integrator == "minimize" && std::isfinite(c.dynamics.beta))
    throw InputError("beta: the minimiser needs beta = inf (integrator 'langevin' for noise)");
  o.finish(target);

  AttentionTargets t;
  t.queries = scale * (capacity ? k : q);
  t.keys = scale * k;
  for (std::size_t i = 0; i + 1 < bounds.size(); ++i)
    for (Eigen::Index a = bounds[i]; a < bounds[i + 1]; ++a) {
      t.key_begin.push_back(bounds[i]);
      t.key_end.push_back(causal ? a + 1 : bounds[i + 1]);
    }
  if (capacity) {  // p = 1 on the key itself
    Eigen::Index pairs = 0;
    for (std::size_t a = 0; a < t.key_begin.size(); ++a) pairs += t.key_end[a] - t.key_begin[a];
    t.target = Eigen::VectorXd::Zero(pairs);
    for (Eigen::Index a = 0, p = 0; a < static_cast<Eigen::Index>(t.key_begin.size()); ++a) {
      t.target[p + a - t.key_begin[a]] = 1.0;
      p += t.key_end[a] - t.key_begin[a];
    }
  } else {  // c x_aᵀy_i = qᵀk_i / (temperature √d) with x = τ s q, y = τ s k
    set_softmax_targets(t, 1.0 / (temperature * bandwidth * bandwidth));
  }
  const RecallHeadAlignment a = without_gil([&] {
    return align_head_particles(omega, std::move(t), c, seed, replica, "attention_phase_a", keys,
                                [] { raise_pending_signal(); });
  });
  return py::make_tuple(to_numpy(std::move(omega)), report_of(a));
}

}  // namespace

void bind_attention_phase_a(py::module_& m) {
  m.def(
      "attention_phase_a",
      [](const py::handle& queries, const py::handle& keys, const py::handle& particles,
         const py::object& sequence, bool causal, const std::string& target,
         const py::object& labels, const std::string& map, double bandwidth, std::uint64_t seed,
         std::uint64_t replica, const py::kwargs& dynamics) {
        const MatrixArgument k = matrix_argument(keys, "keys");
        const MatrixArgument q = matrix_argument(queries, "queries", k.map.cols());
        if (q.map.rows() != k.map.rows())
          throw InputError("queries: expected one row per key row (" +
                           std::to_string(k.map.rows()) + "), got " + std::to_string(q.map.rows()));
        if (k.map.rows() == 0) throw InputError("keys: no rows");
        Eigen::MatrixXd omega = matrix_copy(particles, "particles", k.map.cols());
        if (omega.rows() == 0) throw InputError("particles: no rows");
        if (!(bandwidth > 0.0) || !std::isfinite(bandwidth))
          throw InputError("bandwidth: must be a positive number");
        const FeatureMapKind kind = feature_map_kind(map);
        const std::vector<Eigen::Index> bounds = sequence_bounds(sequence, k.map.rows());
        FeatureMapSpec spec;
        spec.kind = kind;
        spec.bandwidth = bandwidth;
        const double scale = feature_input_scale<double>(spec, static_cast<int>(k.map.cols()));
        Options options(dynamics);
        if (target == "labels") {
          if (kind != FeatureMapKind::favor && kind != FeatureMapKind::porf_softplus &&
              kind != FeatureMapKind::softmaxfeat)
            throw InputError(
                "map: target 'labels' aligns 'favor', 'porf-softplus' or "
                "'softmaxfeat', not '" +
                map + "'");
          return labels_phase_a(std::move(omega), q.map, k.map, bounds, labels, kind, scale, seed,
                                replica, options);
        }
        if (target != "softmax" && target != "capacity")
          throw InputError("target: 'softmax', 'labels' or 'capacity', not '" + target + "'");
        if (kind != FeatureMapKind::favor)
          throw InputError("map: target '" + target + "' aligns favor's attention weights, not '" +
                           map + "'");
        if (!labels.is_none()) throw InputError("labels: only target 'labels' reads labels");
        return weights_phase_a(std::move(omega), q.map, k.map, bounds, causal, target == "capacity",
                               bandwidth, scale, seed, replica, options);
      },
      py::arg("queries"), py::arg("keys"), py::arg("particles"), py::arg("sequence") = py::none(),
      py::arg("causal") = false, py::arg("target") = "softmax", py::arg("labels") = py::none(),
      py::arg("map") = "favor", py::arg("bandwidth") = 1.0, py::arg("seed") = 1,
      py::arg("replica") = 0,
      "Phase A of one attention head: its particles (m, d) move on the alignment of the head's\n"
      "queries and keys (n, d), rows of a sequence contiguous (sequence: each row's sequence\n"
      "number 0, 1, ...; None: one sequence). target 'softmax': favor's weights align with the\n"
      "head's softmax_i(q.k_i / (temperature sqrt(d))) over the keys of the query's sequence (up\n"
      "to its own row when causal), cpm recall's Phase A and defaults; 'capacity': each key\n"
      "attending to itself alone; 'labels': the keys' features align with their sequence's class\n"
      "label (labels: one per sequence), cpm train's Phase A and defaults. phi reads\n"
      "bandwidth * d^(-1/4) * x. Options (**dynamics): gamma, radius, s, repulsion_fraction,\n"
      "steps, step, beta, tolerance, normalise_keys ('l2', 'l1': align the normalised key\n"
      "features the attention reads); 'labels' also lambda_, relative_gamma, centred, normalised,\n"
      "queries_and_keys, check_every; 'softmax'/'capacity' also temperature, integrator,\n"
      "max_iterations. seed "
      "and replica key the noise. Returns (particles (m, d), report dict).");
}

}  // namespace cpm::python
