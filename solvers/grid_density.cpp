#include "solvers/grid_density.hpp"

#include <algorithm>
#include <stdexcept>

#include "core/quadrature.hpp"
#include "core/random_stream.hpp"

namespace cpm {

std::vector<double> cell_averages(const Grid& grid,
                                  const std::function<double(const Eigen::VectorXd&)>& f,
                                  int points_per_axis) {
  const GaussLegendreRule rule = gauss_legendre(points_per_axis);
  const int d = grid.dim(), q = points_per_axis;
  Eigen::Index nodes = 1;
  for (int a = 0; a < d; ++a) nodes *= q;
  std::vector<double> average(static_cast<std::size_t>(grid.size()), 0.0);
  Eigen::VectorXd x(d);
  for (Eigen::Index c = 0; c < grid.size(); ++c) {
    if (!grid.active(c)) continue;
    double sum = 0.0;
    for (Eigen::Index node = 0; node < nodes; ++node) {
      Eigen::Index rest = node;
      double weight = 1.0;
      for (int a = 0; a < d; ++a) {
        const int i = static_cast<int>(rest % q);
        rest /= q;
        x[a] = grid.centre(c, a) + 0.5 * grid.spacing(a) * rule.nodes[i];
        weight *= 0.5 * rule.weights[i];
      }
      sum += weight * f(x);
    }
    average[c] = sum;
  }
  return average;
}

double density_mass(const Grid& grid, const std::vector<double>& density) {
  double total = 0.0;
  for (double r : density) total += r;
  return total * grid.cell_volume();
}

Eigen::VectorXd density_mean(const Grid& grid, const std::vector<double>& density) {
  Eigen::VectorXd mean = Eigen::VectorXd::Zero(grid.dim());
  double total = 0.0;
  for (Eigen::Index c = 0; c < grid.size(); ++c) {
    total += density[c];
    for (int a = 0; a < grid.dim(); ++a) mean[a] += density[c] * grid.centre(c, a);
  }
  return mean / total;
}

Eigen::MatrixXd density_covariance(const Grid& grid, const std::vector<double>& density) {
  const int d = grid.dim();
  const Eigen::VectorXd mean = density_mean(grid, density);
  Eigen::MatrixXd cov = Eigen::MatrixXd::Zero(d, d);
  double total = 0.0;
  Eigen::VectorXd x(d);
  for (Eigen::Index c = 0; c < grid.size(); ++c) {
    if (density[c] == 0.0) continue;
    total += density[c];
    for (int a = 0; a < d; ++a) x[a] = grid.centre(c, a) - mean[a];
    cov.noalias() += density[c] * x * x.transpose();
  }
  cov /= total;
  for (int a = 0; a < d; ++a) cov(a, a) += grid.spacing(a) * grid.spacing(a) / 12.0;
  return cov;
}

Particles sample_from_density(const Grid& grid, const std::vector<double>& density, Eigen::Index n,
                              std::uint64_t seed, std::uint64_t replica) {
  Particles p = sample_ids_from_density(grid, density, 0, n, seed, replica);
  p.ids = {};  // row k is particle k
  return p;
}

Particles sample_ids_from_density(const Grid& grid, const std::vector<double>& density,
                                  std::uint64_t first_id, Eigen::Index n, std::uint64_t seed,
                                  std::uint64_t replica) {
  std::vector<double> cumulative(density.size());
  double running = 0.0;
  for (std::size_t c = 0; c < density.size(); ++c) cumulative[c] = running += density[c];
  if (!(running > 0.0)) throw std::invalid_argument("cannot sample from a density of zero mass");
  const int d = grid.dim();
  Particles p(n, d);
  p.ids.resize(static_cast<std::size_t>(n));
#pragma omp parallel for schedule(static)
  for (Eigen::Index k = 0; k < n; ++k) {
    p.ids[static_cast<std::size_t>(k)] = first_id + static_cast<std::uint64_t>(k);
    RandomStream s(seed, RandomPurpose::initial_positions, replica,
                   p.ids[static_cast<std::size_t>(k)]);
    const double u = s.uniform() * running;
    const auto at = std::upper_bound(cumulative.begin(), cumulative.end(), u);
    Eigen::Index c = std::min<Eigen::Index>(at - cumulative.begin(), grid.size() - 1);
    while (density[c] == 0.0 && c > 0) --c;  // u at a plateau's right end: step back
    for (int a = 0; a < d; ++a)
      p.positions(k, a) = grid.centre(c, a) + (s.uniform() - 0.5) * grid.spacing(a);
  }
  return p;
}

}  // namespace cpm
