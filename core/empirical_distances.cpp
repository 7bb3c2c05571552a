#include "core/empirical_distances.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <numeric>
#include <stdexcept>

#include "core/quadrature.hpp"
#include "core/random_stream.hpp"

namespace cpm {

namespace {

// Cell masses h^d ρ_c normalised to sum 1.
std::vector<double> unit_masses(const Grid& grid, const std::vector<double>& density) {
  if (static_cast<Eigen::Index>(density.size()) != grid.size())
    throw std::invalid_argument("density size does not match the grid");
  std::vector<double> m(density);
  const double total = std::accumulate(m.begin(), m.end(), 0.0);
  if (!(total > 0.0)) throw std::invalid_argument("density has zero mass");
  for (double& v : m) v /= total;
  return m;
}

// W2² between the equal-weight atoms `sorted_x` and the weighted atoms (position, weight) sorted
// by position, in 1D: both quantile functions are step functions, summed on the common breakpoints.
double w2_squared_atoms(const std::vector<double>& sorted_x,
                        const std::vector<std::pair<double, double>>& atoms) {
  const std::size_t n = sorted_x.size(), count = atoms.size();
  double u = 0.0, below = 0.0, sum = 0.0;
  std::size_t k = 0, j = 0;
  while (k < n && j < count) {
    const double x_end = k + 1 == n ? 1.0 : static_cast<double>(k + 1) / static_cast<double>(n);
    const double y_end = j + 1 == count ? 1.0 : below + atoms[j].second;
    const double end = std::min(x_end, y_end);
    if (end > u) {
      const double diff = sorted_x[k] - atoms[j].first;
      sum += (end - u) * diff * diff;
      u = end;
    }
    if (x_end <= end) ++k;
    if (y_end <= end) {
      below += atoms[j].second;
      ++j;
    }
  }
  return sum;
}

// F(t) = t σ√(π/2) erf(t/(σ√2)) + σ² e^{−t²/(2σ²)}, with F'' = e^{−t²/(2σ²)}.
double second_antiderivative(double t, double sigma) {
  return t * sigma * std::sqrt(std::numbers::pi / 2.0) *
             std::erf(t / (sigma * std::numbers::sqrt2)) +
         sigma * sigma * std::exp(-t * t / (2.0 * sigma * sigma));
}

}  // namespace

// ∫_0^L |x − g(u)|^p du for g linear from g0 to g1 over [0, L], p = 1 and 2.
void add_linear_piece(double length, double a, double b, Wasserstein1D& sum) {
  // a = x − g0, b = x − g1.
  sum.w2 += length * (a * a + a * b + b * b) / 3.0;
  if (a * b >= 0.0) {
    sum.w1 += length * 0.5 * (std::abs(a) + std::abs(b));
  } else {
    sum.w1 += length * 0.5 * (a * a + b * b) / (std::abs(a) + std::abs(b));
  }
}

Eigen::MatrixXd sub_cell_atoms(const Grid& grid, const std::vector<Eigen::Index>& cells, int q) {
  const int d = grid.dim();
  Eigen::Index per_cell = 1;
  for (int a = 0; a < d; ++a) per_cell *= q;
  Eigen::MatrixXd atoms(static_cast<Eigen::Index>(cells.size()) * per_cell, d);
  for (std::size_t j = 0; j < cells.size(); ++j)
    for (Eigen::Index s = 0; s < per_cell; ++s) {
      const Eigen::Index row = static_cast<Eigen::Index>(j) * per_cell + s;
      Eigen::Index rest = s;
      for (int a = 0; a < d; ++a) {
        const int i = static_cast<int>(rest % q);
        rest /= q;
        atoms(row, a) = grid.centre(cells[j], a) + ((i + 0.5) / q - 0.5) * grid.spacing(a);
      }
    }
  return atoms;
}

double gaussian_cell_average(double x, double lo, double h, double sigma, double erf_scale) {
  return sigma * std::sqrt(std::numbers::pi / 2.0) / h *
         (std::erf((lo + h - x) * erf_scale) - std::erf((lo - x) * erf_scale));
}

// (1/h²) ∫∫ k(y − y') over y in cell i + Δ, y' in cell i: closed form for |Δ| ≤ 1; the
// triangle-weighted form ∫_{−1}^{1} (1 − |t|) k((Δ + t) h) dt by 10-point Gauss–Legendre on
// each half for |Δ| ≥ 2 (no cancellation when h ≪ σ).
double cell_pair_kernel(int delta, double h, double sigma) {
  if (std::abs(delta) <= 1) {
    auto f = [&](double t) { return second_antiderivative(t, sigma); };
    return (f((delta + 1) * h) - 2.0 * f(delta * h) + f((delta - 1) * h)) / (h * h);
  }
  static const GaussLegendreRule rule = gauss_legendre(10);
  double sum = 0.0;
  for (int half = 0; half < 2; ++half)
    for (std::size_t i = 0; i < rule.nodes.size(); ++i) {
      const double t = 0.5 * (rule.nodes[i] + (half == 0 ? -1.0 : 1.0));  // in (−1, 0) or (0, 1)
      const double z = (delta + t) * h;
      sum += 0.5 * rule.weights[i] * (1.0 - std::abs(t)) * std::exp(-z * z / (2.0 * sigma * sigma));
    }
  return sum;
}

int gaussian_window(double h, double sigma) {
  return static_cast<int>(std::ceil(9.0 * sigma / h)) + 1;
}

Wasserstein1D wasserstein_1d(const Eigen::VectorXd& samples, const Grid& grid,
                             const std::vector<double>& density) {
  if (grid.dim() != 1) throw std::invalid_argument("wasserstein_1d needs a 1D grid");
  if (samples.size() == 0) throw std::invalid_argument("wasserstein_1d needs at least one sample");
  std::vector<double> x(samples.data(), samples.data() + samples.size());
  std::sort(x.begin(), x.end());
  const std::vector<double> m = unit_masses(grid, density);
  std::vector<Eigen::Index> cells;  // cells of positive mass, in order
  for (Eigen::Index c = 0; c < grid.size(); ++c)
    if (m[c] > 0.0) cells.push_back(c);
  const double n = static_cast<double>(x.size()), h = grid.spacing(0);

  Wasserstein1D sum;
  double u = 0.0, below = 0.0;  // below: mass of the cells before the current one
  std::size_t k = 0, j = 0;
  while (k < x.size() && j < cells.size()) {
    const Eigen::Index c = cells[j];
    const bool last_cell = j + 1 == cells.size();
    const double cell_end = last_cell ? 1.0 : below + m[c];
    const double particle_end = k + 1 == x.size() ? 1.0 : static_cast<double>(k + 1) / n;
    const double end = std::min(cell_end, particle_end);
    if (end > u) {
      // G^{-1}(u) = lower edge + (u − below)/m_c · h on this cell.
      const double lo = grid.lower()[0] + static_cast<double>(c) * h;
      const double g0 = lo + std::clamp((u - below) / m[c], 0.0, 1.0) * h;
      const double g1 = lo + std::clamp((end - below) / m[c], 0.0, 1.0) * h;
      add_linear_piece(end - u, x[k] - g0, x[k] - g1, sum);
      u = end;
    }
    if (particle_end <= end) ++k;
    if (cell_end <= end) {
      below += m[c];
      ++j;
    }
  }
  return {sum.w1, std::sqrt(sum.w2)};
}

Eigen::MatrixXd slicing_directions(int d, int count) {
  if (d < 1 || count < 1)
    throw std::invalid_argument("slicing directions need d >= 1 and count >= 1");
  Eigen::MatrixXd theta(count, d);
  for (int k = 0; k < count; ++k) {
    if (d == 1) {
      theta(k, 0) = 1.0;
    } else if (d == 2) {
      const double angle = std::numbers::pi * (k + 0.5) / count;
      theta(k, 0) = std::cos(angle);
      theta(k, 1) = std::sin(angle);
    } else {
      RandomStream s(20240601, RandomPurpose::sliced_directions, 0, static_cast<std::uint64_t>(k));
      for (int a = 0; a < d; ++a) theta(k, a) = s.normal();
      theta.row(k).normalize();
    }
  }
  return theta;
}

double sliced_wasserstein2(const Eigen::MatrixXd& x, const Grid& grid,
                           const std::vector<double>& density, const Eigen::MatrixXd& directions,
                           int q) {
  const int d = grid.dim();
  if (x.cols() != d || directions.cols() != d)
    throw std::invalid_argument("particles, grid and directions differ in dimension");
  if (d == 1) return wasserstein_1d(x.col(0), grid, density).w2;
  const std::vector<double> m = unit_masses(grid, density);
  // Atoms at the centres of the q^d sub-cells of every cell of positive mass.
  Eigen::Index per_cell = 1;
  for (int a = 0; a < d; ++a) per_cell *= q;
  std::vector<Eigen::Index> cells;
  for (Eigen::Index c = 0; c < grid.size(); ++c)
    if (m[c] > 0.0) cells.push_back(c);
  const Eigen::MatrixXd atoms = sub_cell_atoms(grid, cells, q);
  std::vector<double> atom_weight(static_cast<std::size_t>(atoms.rows()));
  for (std::size_t j = 0; j < cells.size(); ++j)
    for (Eigen::Index s = 0; s < per_cell; ++s)
      atom_weight[static_cast<Eigen::Index>(j) * per_cell + s] =
          m[cells[j]] / static_cast<double>(per_cell);

  double total = 0.0;
  std::vector<double> px(static_cast<std::size_t>(x.rows()));
  std::vector<std::pair<double, double>> py(static_cast<std::size_t>(atoms.rows()));
  for (Eigen::Index k = 0; k < directions.rows(); ++k) {
    const Eigen::VectorXd theta = directions.row(k).transpose();
    const Eigen::VectorXd projected_x = x * theta, projected_atoms = atoms * theta;
    for (Eigen::Index i = 0; i < x.rows(); ++i) px[i] = projected_x[i];
    for (Eigen::Index i = 0; i < atoms.rows(); ++i) py[i] = {projected_atoms[i], atom_weight[i]};
    std::sort(px.begin(), px.end());
    std::sort(py.begin(), py.end());
    total += w2_squared_atoms(px, py);
  }
  return std::sqrt(total / static_cast<double>(directions.rows()));
}

double mmd_gaussian(const Eigen::MatrixXd& x, const Grid& grid, const std::vector<double>& density,
                    double sigma) {
  const int d = grid.dim();
  if (x.cols() != d) throw std::invalid_argument("particles and grid differ in dimension");
  if (!(sigma > 0.0)) throw std::invalid_argument("MMD bandwidth must be positive");
  const std::vector<double> m = unit_masses(grid, density);
  const Eigen::Index n = x.rows();
  const double two_s2 = 2.0 * sigma * sigma;

  // Particle–particle, row sums first so the total does not depend on the thread count.
  std::vector<double> rows(static_cast<std::size_t>(n), 0.0),
      cross(static_cast<std::size_t>(n), 0.0);
#pragma omp parallel for schedule(static)
  for (Eigen::Index k = 0; k < n; ++k) {
    double s = 0.0;
    for (Eigen::Index l = 0; l < n; ++l)
      s += std::exp(-(x.row(k) - x.row(l)).squaredNorm() / two_s2);
    rows[k] = s;
  }

  // Particle–grid: the kernel averaged over a cell factorises into 1D erf differences.
  Eigen::VectorXi window(d);
  for (int a = 0; a < d; ++a) window[a] = gaussian_window(grid.spacing(a), sigma);
  const double erf_scale = 1.0 / (sigma * std::numbers::sqrt2);
#pragma omp parallel
  {
    std::vector<double> factor[3];
    int first[3] = {0, 0, 0}, count[3] = {1, 1, 1};
#pragma omp for schedule(static)
    for (Eigen::Index k = 0; k < n; ++k) {
      for (int a = 0; a < 3; ++a) {
        factor[a].assign(1, 1.0);
        first[a] = 0;
        count[a] = 1;
        if (a >= d) continue;
        const double h = grid.spacing(a), lower = grid.lower()[a];
        const int centre = static_cast<int>(std::floor((x(k, a) - lower) / h));
        first[a] = std::max(0, centre - window[a]);
        const int last = std::min(grid.cells(a) - 1, centre + window[a]);
        count[a] = std::max(0, last - first[a] + 1);
        factor[a].resize(std::max(count[a], 1));
        for (int i = 0; i < count[a]; ++i) {
          const double lo = lower + (first[a] + i) * h;
          factor[a][i] = gaussian_cell_average(x(k, a), lo, h, sigma, erf_scale);
        }
      }
      double s = 0.0;
      for (int i2 = 0; i2 < count[2]; ++i2)
        for (int i1 = 0; i1 < count[1]; ++i1) {
          const double f12 = factor[1][i1] * factor[2][i2];
          const Eigen::Index base = (d > 1 ? (first[1] + i1) * grid.stride(1) : 0) +
                                    (d > 2 ? (first[2] + i2) * grid.stride(2) : 0);
          for (int i0 = 0; i0 < count[0]; ++i0) s += f12 * factor[0][i0] * m[base + first[0] + i0];
        }
      cross[k] = s;
    }
  }

  // Grid–grid: Σ_{c,c'} m_c m_c' Π_a G_a(i_a − i'_a), one 1D discrete convolution per axis.
  std::vector<double> smoothed(m), next(m.size());
  for (int a = 0; a < d; ++a) {
    const int w = std::min(window[a], grid.cells(a) - 1);
    std::vector<double> g(static_cast<std::size_t>(w) + 1);
    for (int delta = 0; delta <= w; ++delta)
      g[delta] = cell_pair_kernel(delta, grid.spacing(a), sigma);
    const Eigen::Index stride = grid.stride(a);
#pragma omp parallel for schedule(static)
    for (Eigen::Index c = 0; c < grid.size(); ++c) {
      const int i = grid.coordinate(c, a);
      const int lo = std::max(0, i - w), hi = std::min(grid.cells(a) - 1, i + w);
      double s = 0.0;
      for (int j = lo; j <= hi; ++j) s += g[std::abs(j - i)] * smoothed[c + (j - i) * stride];
      next[c] = s;
    }
    smoothed.swap(next);
  }

  const double nn = static_cast<double>(n);
  const double particle_particle = std::accumulate(rows.begin(), rows.end(), 0.0) / (nn * nn);
  const double particle_grid = std::accumulate(cross.begin(), cross.end(), 0.0) / nn;
  double grid_grid = 0.0;
  for (std::size_t c = 0; c < m.size(); ++c) grid_grid += m[c] * smoothed[c];
  return std::sqrt(std::max(0.0, particle_particle - 2.0 * particle_grid + grid_grid));
}

double histogram_l1(const Eigen::MatrixXd& x, const Grid& grid,
                    const std::vector<double>& density) {
  if (x.cols() != grid.dim()) throw std::invalid_argument("particles and grid differ in dimension");
  const std::vector<double> m = unit_masses(grid, density);
  std::vector<double> counts(m.size(), 0.0);
  double outside = 0.0;
  Eigen::VectorXd point(grid.dim());
  for (Eigen::Index k = 0; k < x.rows(); ++k) {
    point = x.row(k).transpose();
    const Eigen::Index c = grid.locate(point.data());
    if (c < 0)
      outside += 1.0;
    else
      counts[c] += 1.0;
  }
  const double n = static_cast<double>(x.rows());
  double l1 = outside / n;
  for (std::size_t c = 0; c < m.size(); ++c) l1 += std::abs(counts[c] / n - m[c]);
  return l1;
}

}  // namespace cpm
