// Feature maps on arrays: the maps φ(x; ω) of kernel learning and their kernel
// (physics/random_feature_maps.hpp, physics/alignment.hpp), and the feature maps of linear
// attention (transformer/attention_feature_maps.hpp), dpfp, elu, hedgehog and taylor among them.
#include "io/input_error.hpp"
#include "physics/alignment.hpp"
#include "physics/random_feature_maps.hpp"
#include "python/bindings.hpp"
#include "transformer/attention_feature_maps.hpp"

namespace cpm::python {

namespace {

using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// The rows of φ for the particle block: D_φ of each attention map (attention_features.hpp).
int feature_rows(const FeatureMapSpec& spec, Eigen::Index particles, int head_size) {
  switch (spec.kind) {
    case FeatureMapKind::hedgehog:
      return static_cast<int>(2 * particles);
    case FeatureMapKind::elu:
      return head_size;
    case FeatureMapKind::dpfp:
      return 2 * spec.dpfp_nu * (spec.projected ? static_cast<int>(particles) : head_size);
    case FeatureMapKind::taylor:
      return static_cast<int>(taylor_feature_dimension(static_cast<int>(particles)));
    case FeatureMapKind::rebased:  // the block: P, γ and β
      return feature_dimension(spec, static_cast<int>(particles), head_size);
    default:
      return static_cast<int>(particles);
  }
}

bool needs_particles(const FeatureMapSpec& spec) {
  return spec.kind != FeatureMapKind::elu &&
         !(spec.kind == FeatureMapKind::dpfp && !spec.projected);
}

}  // namespace

void bind_feature_maps(py::module_& m) {
  m.def(
      "feature_map",
      [](const std::string& map, const py::handle& x, const py::handle& omega, std::uint64_t seed,
         std::uint64_t replica) {
        const Eigen::MatrixXd data = matrix_copy(x, "x");
        const Eigen::MatrixXd w = matrix_copy(omega, "omega", data.cols());
        const FeatureMap f = FeatureMap::by_name(map, w.rows(), seed, replica);
        return to_numpy(without_gil([&] { return f.features(data, w); }));
      },
      py::arg("map"), py::arg("x"), py::arg("omega"), py::arg("seed") = 1, py::arg("replica") = 0,
      "Phi (n, N), Phi[i, k] = phi(x_i; omega_k), for x (n, d) and omega (N, d): 'rff'\n"
      "sqrt(2) cos(omega.x + b) (phases b from (seed, replica)), 'rff-pairs' [cos, sin] (n, 2N),\n"
      "'favor' exp(omega.x - |x|^2/2), 'porf-softplus', 'softmaxfeat' "
      "(physics/random_feature_maps.hpp).");

  m.def(
      "rff_phases",
      [](Eigen::Index n, std::uint64_t seed, std::uint64_t replica) {
        if (n < 0) throw InputError("n: must be >= 0");
        Eigen::VectorXd phases =
            FeatureMap::with_random_phases(FeatureMapKind::rff, n, seed, replica).phases();
        return to_numpy(std::move(phases));
      },
      py::arg("n"), py::arg("seed") = 1, py::arg("replica") = 0,
      "The phases b (n,) of the 'rff' map of n particles for (seed, replica).");

  m.def(
      "empirical_kernel",
      [](const std::string& map, const py::handle& xa, const py::handle& xb,
         const py::handle& omega, std::uint64_t seed, std::uint64_t replica) {
        const Eigen::MatrixXd a = matrix_copy(xa, "xa");
        const Eigen::MatrixXd b = matrix_copy(xb, "xb", a.cols());
        const Eigen::MatrixXd w = matrix_copy(omega, "omega", a.cols());
        const FeatureMap f = FeatureMap::by_name(map, w.rows(), seed, replica);
        return to_numpy(without_gil([&] { return empirical_kernel(f, a, b, w); }));
      },
      py::arg("map"), py::arg("xa"), py::arg("xb"), py::arg("omega"), py::arg("seed") = 1,
      py::arg("replica") = 0,
      "The learned kernel K(x, x') = (1/N) sum_k phi(x; omega_k) phi(x'; omega_k) between\n"
      "xa (na, d) and xb (nb, d): (na, nb).");

  m.def(
      "attention_features",
      [](const std::string& map, const py::handle& x, const py::object& omega, int dpfp_nu,
         bool projected, double epsilon, double bandwidth) {
        FeatureMapSpec spec;
        spec.kind = feature_map_kind(map);
        spec.dpfp_nu = dpfp_nu;
        spec.projected = projected;
        spec.epsilon = epsilon;
        spec.bandwidth = bandwidth;
        const Eigen::MatrixXd xt = matrix_copy(x, "x").transpose();  // (d_head, n)
        const int head_size = static_cast<int>(xt.rows());
        RowMajor w;  // Ω (rows, d_head) row-major
        if (needs_particles(spec)) {
          if (omega.is_none()) throw InputError("omega: the map '" + map + "' needs particles");
          w = matrix_copy(omega, "omega", head_size);
        }
        const int rows = feature_rows(spec, w.rows(), head_size);
        particle_rows(spec, rows, head_size);  // refuses what the map cannot take
        Eigen::MatrixXd phi(rows, xt.cols());
        without_gil([&] {
          feature_map_forward<double>(
              spec, phi.data(), {xt.data(), xt.rows(), xt.cols(), Eigen::OuterStride<>(xt.rows())},
              w.data(), rows, feature_input_scale<double>(spec, head_size),
              FeatureShift::per_column);
        });
        return to_numpy(Eigen::MatrixXd(phi.transpose()));
      },
      py::arg("map"), py::arg("x"), py::arg("omega") = py::none(), py::arg("dpfp_nu") = 1,
      py::arg("projected") = false, py::arg("epsilon") = 1e-6, py::arg("bandwidth") = 1.0,
      "Linear attention's features of the rows of x (n, d_head): (n, D_phi), inputs scaled by\n"
      "bandwidth * d_head^(-1/4). 'favor' (max-shifted per row), 'porf-softplus', 'softmaxfeat'\n"
      "and 'hedgehog' read the particles omega (r, d_head); 'taylor' and the projected 'dpfp' a\n"
      "projection (d', d_head), 'rebased' a projection with its LayerNorm's gamma and beta\n"
      "(d' + 2 ceil(d'/d_head), d_head); 'elu' and 'dpfp' none\n"
      "(transformer/attention_feature_maps.hpp).\n"
      "The attention kernel of queries q and keys k is phi(q) @ phi(k).T.");
}

}  // namespace cpm::python
