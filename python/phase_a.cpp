// Particles learned from a user's data (X, y): projected Langevin dynamics on the alignment
// Hamiltonian with Riesz repulsion, E_N(Ω) = −γ A(Ω) + (λ/(2N²)) Σ_{k≠l} W(ω_k − ω_l)
// (docs/model.md §1; Phase A of §2 runs the same dynamics on tokens), through the learning
// function of `cpm kernel` (experiments/kernel/kernel_learning.hpp) with its defaults.
#include <cmath>
#include <limits>
#include <memory>

#include "experiments/kernel/kernel_learning.hpp"
#include "frequencies/feature_generator.hpp"
#include "io/input_error.hpp"
#include "python/bindings.hpp"

namespace cpm::python {

namespace {

// Alignment targets T (n, C): a 2-D array as given; 1-D class labels 0..C−1 (or ±1 for two
// classes) through alignment_targets (±1 for two classes, one-hot otherwise).
Eigen::MatrixXd targets_of(const py::handle& y, Eigen::Index rows) {
  py::array a = py::array::ensure(y);
  if (a && a.ndim() == 2) {
    Eigen::MatrixXd t = matrix_copy(y, "y");
    if (t.rows() != rows)
      throw InputError("y: expected " + std::to_string(rows) + " rows (one per row of x), got " +
                       std::to_string(t.rows()));
    return t;
  }
  if (!a || a.ndim() != 1) throw InputError("y: expected 1-D class labels or 2-D targets");
  const Eigen::MatrixXd column = matrix_copy(a.reshape({a.shape(0), py::ssize_t{1}}), "y");
  if (column.rows() != rows)
    throw InputError("y: expected " + std::to_string(rows) + " labels (one per row of x), got " +
                     std::to_string(column.rows()));
  const bool signs = (column.array() == -1.0 || column.array() == 1.0).all();
  Eigen::VectorXi labels(rows);
  for (Eigen::Index i = 0; i < rows; ++i) {
    const double v = signs ? (column(i, 0) + 1.0) / 2.0 : column(i, 0);
    if (v < 0.0 || v != std::floor(v) || v > 1e6)
      throw InputError("y: labels must be class numbers 0, 1, ... (or -1/+1), not " +
                       std::to_string(column(i, 0)));
    labels[i] = static_cast<int>(v);
  }
  const int classes = std::max(2, labels.size() ? labels.maxCoeff() + 1 : 2);
  return alignment_targets(labels, classes);
}

py::dict history_dict(const std::vector<TrainingRecord>& trace) {
  Eigen::VectorXd step(trace.size()), alignment(trace.size()), min(trace.size()),
      mean(trace.size());
  for (std::size_t i = 0; i < trace.size(); ++i) {
    const auto k = static_cast<Eigen::Index>(i);
    step[k] = trace[i].step;
    alignment[k] = trace[i].alignment;
    min[k] = trace[i].distances.min;
    mean[k] = trace[i].distances.mean;
  }
  py::dict out;
  out["step"] = to_numpy(std::move(step));
  out["alignment"] = to_numpy(std::move(alignment));
  out["min_distance"] = to_numpy(std::move(min));
  out["mean_distance"] = to_numpy(std::move(mean));
  return out;
}

py::dict report_dict(const LearningReport& r) {
  py::dict out;
  out["gamma"] = r.gamma;
  out["lambda"] = r.lambda;
  out["alignment_drift"] = r.alignment_drift;
  out["anchor_precision"] = r.anchor_precision;
  out["repulsion_ratio_initial"] = r.repulsion_ratio_initial;
  out["repulsion_ratio_final"] = r.repulsion_ratio_final;
  out["anchor_ratio_initial"] = r.anchor_ratio_initial;
  return out;
}

}  // namespace

InteractionKernel riesz_kernel(double s) {
  return s == 0.0    ? InteractionKernel::log()
         : s == -1.0 ? InteractionKernel::linear()
                     : InteractionKernel::power(s);
}

void bind_phase_a(py::module_& m) {
  m.def(
      "learn_particles",
      [](const py::handle& x, const py::handle& y, Eigen::Index n, const std::string& map,
         const py::object& initial, const std::string& init, double scale, double gamma,
         bool relative_gamma, bool centred, Eigen::Index batch_size, const std::string& objective,
         double alpha, bool anchor, double s, double lambda, double drift_fraction, double beta,
         double step, int steps, double radius, int record_every, std::uint64_t seed) {
        auto data = std::make_shared<const Eigen::MatrixXd>(matrix_copy(x, "x"));
        const auto dim = static_cast<int>(data->cols());
        const Eigen::MatrixXd targets = targets_of(y, data->rows());
        if (steps < 0) throw InputError("steps: must be >= 0");
        if (record_every < 1) throw InputError("record_every: must be >= 1");
        auto finite = [](double value, const char* name) {
          if (!std::isfinite(value)) throw InputError(std::string(name) + ": must be finite");
        };
        finite(step, "step");
        finite(gamma, "gamma");
        finite(alpha, "alpha");
        finite(s, "s");
        finite(lambda, "lambda_");
        finite(drift_fraction, "drift_fraction");
        if (!(step > 0.0)) throw InputError("step: must be > 0");
        if (!(beta > 0.0)) throw InputError("beta: must be > 0");
        if (!(scale > 0.0 && std::isfinite(scale))) throw InputError("scale: must be > 0");
        if (lambda < 0.0) throw InputError("lambda_: must be >= 0");
        Eigen::MatrixXd start =
            initial.is_none() ? Eigen::MatrixXd(scale * initial_features(init, n, dim, seed, 0))
                              : matrix_copy(initial, "initial", dim);
        LearningSettings settings;
        settings.alignment = {gamma, centred, batch_size, seed, alignment_objective_kind(objective),
                              alpha, 0.0};
        settings.relative_gamma = relative_gamma;
        settings.anchor = anchor;
        settings.prior_scale = scale;
        settings.repulsion.kernel =
            lambda == 0.0 && drift_fraction < 0.0 ? InteractionKernel::none() : riesz_kernel(s);
        settings.repulsion.lambda = lambda;
        settings.drift_fraction = drift_fraction;
        settings.dynamics.beta = beta;
        settings.dynamics.step = step;
        settings.dynamics.steps = steps;
        settings.radius = radius;
        settings.record_every = record_every;
        settings.seed = seed;
        settings.source = "learn_particles";
        const FeatureMap f = FeatureMap::by_name(map, start.rows(), seed);
        std::vector<TrainingRecord> trace;
        LearningReport report;
        Eigen::MatrixXd particles = without_gil([&] {
          return learn_particles(
              data, targets, f, std::move(start), settings, &trace,
              [](const TrainingRecord&) { raise_pending_signal(); }, &report);
        });
        return py::make_tuple(to_numpy(std::move(particles)), history_dict(trace),
                              report_dict(report));
      },
      py::arg("x"), py::arg("y"), py::arg("n") = 64, py::arg("map") = "rff",
      py::arg("initial") = py::none(), py::arg("init") = "orthogonal", py::arg("scale") = 1.0,
      py::arg("gamma") = 1.0, py::arg("relative_gamma") = true, py::arg("centred") = true,
      py::arg("batch_size") = 0, py::arg("objective") = "alignment", py::arg("alpha") = 1.0,
      py::arg("anchor") = true, py::arg("s") = 1.0, py::arg("lambda_") = 1.0,
      py::arg("drift_fraction") = -1.0, py::arg("beta") = std::numeric_limits<double>::infinity(),
      py::arg("step") = 0.05, py::arg("steps") = 200,
      py::arg("radius") = std::numeric_limits<double>::infinity(), py::arg("record_every") = 10,
      py::arg("seed") = 1,
      "Learns n particles (frequencies) for the feature map from x (rows, d) and y (class\n"
      "labels, or 2-D targets): Langevin dynamics on -gamma A(Omega) plus the Riesz repulsion\n"
      "of exponent s and strength lambda_ (or drift_fraction >= 0: the repulsive drift that\n"
      "fraction of the alignment drift at the start), the defaults of `cpm kernel`. The start\n"
      "is `initial`, or scale * the `init` generator ('orthogonal', 'gaussian', 'sobol', ...).\n"
      "Returns (particles (n, d), history {step, alignment, min_distance, mean_distance},\n"
      "report {gamma, lambda, ...}). Ctrl-C stops it at the next record (record_every steps).");
}

}  // namespace cpm::python
