// Random-feature frequencies (frequencies/feature_generator.hpp) and how well they reproduce their
// kernel (experiments/frequencies/kernel_approximation.hpp): the calls of `cpm features`.
#include <cmath>
#include <limits>

#include "config/features_config.hpp"
#include "core/stop_request.hpp"
#include "experiments/frequencies/approximation_points.hpp"
#include "experiments/frequencies/kernel_approximation.hpp"
#include "io/input_error.hpp"
#include "python/bindings.hpp"

namespace cpm::python {

namespace {

FeatureMethod method_of(const std::string& name) {
  if (const auto method = feature_method_from_name(name)) return *method;
  throw InputError("method: unknown generator '" + name +
                   "' (iid, orthogonal, sobol, halton, coulomb)");
}

SpectralLaw law_of(const std::string& name) {
  if (const auto law = spectral_law_from_name(name)) return *law;
  throw InputError("kernel: unknown kernel '" + name + "' (gaussian, laplace)");
}

// The coulomb gas's kernel of Riesz exponent s (0: log, −1: linear), as `cpm features` builds
// it from [coulomb] s.
InteractionKernel repulsion_kernel(double s, int dim) {
  FeaturesStudyConfig config;
  config.exponents = {s};
  config.newtonian = false;
  const std::vector<InteractionKernel> kernels = coulomb_candidates(config, dim);
  if (kernels.empty())
    throw InputError("s: the coulomb features need s < d = " + std::to_string(dim));
  return kernels.front();
}

py::dict errors_dict(const KernelApproximationErrors& e) {
  py::dict out;
  out["frobenius"] = e.frobenius;
  out["max_entry"] = e.max_entry;
  out["spectral"] = e.spectral;
  return out;
}

}  // namespace

void bind_frequencies(py::module_& m) {
  m.def(
      "generate_features",
      [](const std::string& method, Eigen::Index n, int dim, const std::string& kernel,
         double sigma, std::uint64_t seed, std::uint64_t replica, double s, double beta,
         double lambda, double tolerance, int max_iterations, int steps, double step,
         bool diagnostics) -> py::object {
        FeatureRequest r;
        r.method = method_of(method);
        r.n = n;
        r.dim = dim;
        r.sigma = sigma;
        r.law = law_of(kernel);
        r.seed = seed;
        r.replica = replica;
        if (r.method == FeatureMethod::coulomb) {
          // The rules of [coulomb] in `cpm features` that the generator itself leaves to them.
          if (dim < 1) throw InputError("dim: features need d >= 1");
          if (!std::isfinite(s)) throw InputError("s: must be finite");
          if (!(tolerance > 0.0)) throw InputError("tolerance: must be positive");
          if (max_iterations < 1) throw InputError("max_iterations: must be at least 1");
          if (steps < 1) throw InputError("steps: must be at least 1");
          if (!(step > 0.0 && std::isfinite(step)))
            throw InputError("step: must be positive and finite");
          r.repulsion.kernel = repulsion_kernel(s, dim);
        }
        r.repulsion.beta = beta;
        r.repulsion.lambda = lambda;
        r.repulsion.tolerance = tolerance;
        r.repulsion.max_iterations = max_iterations;
        r.repulsion.steps = steps;
        r.repulsion.step = step;
        FeatureDiagnostics done;
        py::array omega = to_numpy(without_gil([&] {
          const StopRequestHandler stop;  // Ctrl-C stops the gas at its next iteration
          Eigen::MatrixXd w = generate_features(r, &done);
          stop_if_requested();
          return w;
        }));
        if (!diagnostics) return omega;
        py::dict d;
        d["iterations"] = done.iterations;
        d["converged"] = done.converged;
        d["gradient_norm"] = done.gradient_norm;
        return py::make_tuple(omega, d);
      },
      py::arg("method"), py::arg("n"), py::arg("dim"), py::arg("kernel") = "gaussian",
      py::arg("sigma") = 1.0, py::arg("seed") = 1, py::arg("replica") = 0, py::arg("s") = -1.0,
      py::arg("beta") = std::numeric_limits<double>::infinity(), py::arg("lambda_") = 1.0,
      py::arg("tolerance") = 1e-6, py::arg("max_iterations") = 100, py::arg("steps") = 2000,
      py::arg("step") = 0.01, py::arg("diagnostics") = false,
      "The (n, dim) frequencies of a generator ('iid', 'orthogonal', 'sobol', 'halton',\n"
      "'coulomb') for the 'gaussian' kernel exp(-sigma^2|x-y|^2/2) or the 'laplace' kernel\n"
      "exp(-sigma|x-y|); they depend on (seed, replica) only. coulomb: the compensated repulsive\n"
      "gas of Riesz exponent s (0: log, -1: the energy distance), minimised at beta = inf\n"
      "(tolerance, max_iterations), a Langevin run of `steps` steps of size `step` otherwise.\n"
      "`cpm features` with [study] seed = seed draws replica r of its seeds the same way.\n"
      "With diagnostics=True, returns (frequencies, {iterations, converged, gradient_norm}).");

  m.def(
      "kernel_errors",
      [](const py::handle& x, const py::handle& omega, double sigma, const std::string& kernel) {
        const Eigen::MatrixXd points = matrix_copy(x, "x");
        const Eigen::MatrixXd w = matrix_copy(omega, "omega", points.cols());
        if (points.rows() < 1 || w.rows() < 1)
          throw InputError("kernel_errors needs at least one point and one frequency");
        const SpectralLaw law = law_of(kernel);
        return errors_dict(without_gil([&] { return kernel_errors(points, w, sigma, law); }));
      },
      py::arg("x"), py::arg("omega"), py::arg("sigma") = 1.0, py::arg("kernel") = "gaussian",
      "The Gram-matrix errors of k_N(x, y) = mean_k cos(omega_k.(x - y)) against the kernel on\n"
      "the points x (n, d): {frobenius, max_entry, spectral}, the first and last relative.");

  m.def(
      "energy_distance_to_gaussian",
      [](const py::handle& omega, double sigma) {
        return energy_distance_to_gaussian(matrix_copy(omega, "omega"), sigma);
      },
      py::arg("omega"), py::arg("sigma") = 1.0,
      "The energy distance of the rows' empirical measure to N(0, sigma^2 I).");

  m.def(
      "approximation_points",
      [](const std::string& text, const std::string& source, int dim, bool selection) {
        if (dim < 1) throw InputError("dim: must be >= 1");
        const ApproximationPoints points(parse_features_config(text, source));
        return to_numpy(points.points(dim, selection));
      },
      py::arg("text"), py::arg("source"), py::arg("dim"), py::arg("selection") = false,
      "The points on which `cpm features` with this configuration (TOML text; source names it\n"
      "in errors) reports its errors in dimension dim (selection=True: those choosing the\n"
      "coulomb setting).");
}

}  // namespace cpm::python
