#include "parallel/spread_distances.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <stdexcept>
#include <vector>

#include "parallel/ring_pass.hpp"

namespace cpm {

DensitySlab::DensitySlab(const Grid& grid, long first_plane, long planes, const double* values)
    : grid_(&grid),
      first_plane_(first_plane),
      planes_(planes),
      plane_size_(grid.stride(grid.dim() - 1)),
      values_(values) {
  if (first_plane < 0 || planes < 0 || first_plane + planes > grid.cells(grid.dim() - 1))
    throw std::invalid_argument("a density slab must lie inside the grid's planes");
}

namespace {

using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// The number N of particles (this rank's `rows` summed over the ranks), and the slab's cell
// masses divided by the whole density's (unit_masses of the one-process code): one reduction.
struct Normalised {
  double n;
  std::vector<double> m;
};
Normalised normalise(Eigen::Index rows, const DensitySlab& slab, const RankGroup& ranks) {
  const double* v = slab.values();
  double totals[2] = {static_cast<double>(rows), 0.0};
  for (Eigen::Index c = 0; c < slab.size(); ++c) totals[1] += v[c];
  ranks.sum(totals, 2);
  if (!(totals[1] > 0.0)) throw std::invalid_argument("density has zero mass");
  Normalised out{totals[0], std::vector<double>(v, v + slab.size())};
  for (double& value : out.m) value /= totals[1];
  return out;
}

// The sum of `value` over the ranks before this one (MPI_Exscan; 0 on the first rank).
double sum_before(double value, const RankGroup& ranks) {
  double before = 0.0;
  if (ranks.spread()) MPI_Exscan(&value, &before, 1, MPI_DOUBLE, MPI_SUM, ranks.communicator());
  return ranks.first() ? 0.0 : before;
}

// Where each of this rank's keys falls among every rank's. `sorted` holds rows (key, weight) in
// lexicographic order; the global order is (key, weight), then the rank, then the place on the
// rank (std::sort's order of the one-process code, ties broken so that every key has one place).
// Returns, per row, the number of keys before it and their total weight. The other ranks' keys
// come round the ring in sorted blocks: the own keys below a block's first row gain nothing, those
// above its last row the whole block (added to a suffix, summed at the end), and only those in
// between are merged with it, so that a visit costs O(block + log n + the own keys in the block's
// range).
struct Places {
  std::vector<std::uint64_t> count;
  std::vector<double> weight;
};

Places places_among_ranks(const std::vector<double>& sorted, const RankGroup& ranks) {
  const Eigen::Index n = static_cast<Eigen::Index>(sorted.size() / 2);
  Places places{std::vector<std::uint64_t>(n, 0), std::vector<double>(n, 0.0)};
  std::vector<std::uint64_t> suffix_count(n + 1, 0);
  std::vector<double> suffix_weight(n + 1, 0.0);
  ring_pass(ranks, sorted.data(), n, 2, [&](int origin, const double* rows, Eigen::Index count) {
    if (origin == ranks.rank() || count == 0) return;
    const bool ties_first = origin < ranks.rank();
    // Whether the block's row j comes before own key i.
    auto before = [&](Eigen::Index j, Eigen::Index i) {
      const double k = rows[2 * j], w = rows[2 * j + 1], key = sorted[2 * i],
                   weight = sorted[2 * i + 1];
      return k < key || (k == key && (w < weight || (w == weight && ties_first)));
    };
    // The first own key that row j comes before (own keys are sorted: a suffix).
    auto first_after = [&](Eigen::Index j) {
      Eigen::Index lo = 0, hi = n;
      while (lo < hi) {
        const Eigen::Index mid = lo + (hi - lo) / 2;
        if (before(j, mid))
          hi = mid;
        else
          lo = mid + 1;
      }
      return lo;
    };
    const Eigen::Index merged_from = first_after(0), merged_to = first_after(count - 1);
    Eigen::Index j = 0;
    double below = 0.0;
    for (Eigen::Index i = merged_from; i < merged_to; ++i) {
      for (; j < count && before(j, i); ++j) below += rows[2 * j + 1];
      places.count[i] += static_cast<std::uint64_t>(j);
      places.weight[i] += below;
    }
    double total = 0.0;
    for (Eigen::Index l = 0; l < count; ++l) total += rows[2 * l + 1];
    suffix_count[merged_to] += static_cast<std::uint64_t>(count);
    suffix_weight[merged_to] += total;
  });
  double own = 0.0, whole_blocks = 0.0;
  std::uint64_t whole_count = 0;
  for (Eigen::Index i = 0; i < n; ++i) {
    whole_count += suffix_count[i];
    whole_blocks += suffix_weight[i];
    places.count[i] += whole_count + static_cast<std::uint64_t>(i);
    places.weight[i] += whole_blocks + own;
    own += sorted[2 * i + 1];
  }
  return places;
}

// This rank's values as rows (value, 0), sorted.
std::vector<double> sorted_keys(const Eigen::VectorXd& values) {
  std::vector<double> v(values.data(), values.data() + values.size());
  std::sort(v.begin(), v.end());
  std::vector<double> rows(2 * v.size(), 0.0);
  for (std::size_t i = 0; i < v.size(); ++i) rows[2 * i] = v[i];
  return rows;
}

// The particles as rows (value, k), k their place among all N particles, in the order of k, from
// sorted rows (value, 0).
std::vector<double> particles_with_places(std::vector<double> sorted, const RankGroup& ranks) {
  const Places places = places_among_ranks(sorted, ranks);
  for (std::size_t i = 0; i < places.count.size(); ++i)
    sorted[2 * i + 1] = static_cast<double>(places.count[i]);
  return sorted;
}

// Particle k's stretch [k/N, (k+1)/N) of the quantile axis, ended at 1 for the last (as in the
// one-process sweeps).
struct Stretch {
  double start, end;
};
Stretch particle_stretch(double k, double n) {
  return {k / n, k + 1.0 == n ? 1.0 : (k + 1.0) / n};
}

// Calls piece(value, own stretch, start, end) for every non-empty overlap [start, end) of the
// stretch of a visiting particle (rows (value, k) in the order of k, of N = n particles) with one
// of `own` (disjoint stretches, sorted, each with .start and .end). Only the own stretches that
// meet the visitors' range are reached (found by bisection), so a visit costs O(count + those).
template <class OwnStretch, class Piece>
void sweep_overlaps(const double* rows, Eigen::Index count, double n,
                    const std::vector<OwnStretch>& own, Piece&& piece) {
  if (count == 0 || own.empty()) return;
  const double from = particle_stretch(rows[1], n).start;
  std::size_t q = std::partition_point(own.begin(), own.end(),
                                       [&](const OwnStretch& o) { return o.end <= from; }) -
                  own.begin();
  Eigen::Index p = 0;
  while (p < count && q < own.size()) {
    const Stretch s = particle_stretch(rows[2 * p + 1], n);
    const OwnStretch& o = own[q];
    const double start = std::max(s.start, o.start), end = std::min(s.end, o.end);
    if (end > start) piece(rows[2 * p], o, start, end);
    if (s.end < o.end)
      ++p;
    else
      ++q;
  }
}

}  // namespace

// W_p^p = ∫_0^1 |F_N^{-1}(u) − G^{-1}(u)|^p du. The one-process sweep cuts [0, 1] at the
// particles' breakpoints k/N and the cells' cumulative masses and integrates each piece in closed
// form (add_linear_piece); F_N^{-1} is x_(k) on particle k's stretch [k/N, (k+1)/N) and G^{-1} is
// linear on cell c's stretch [below_c, below_c + m_c), so the pieces are exactly the non-empty
// intersections of a particle's stretch with a cell's, and
//     W_p^p = Σ_k Σ_c ∫_{stretch_k ∩ stretch_c} |x_(k) − G^{-1}(u)|^p du,
// a sum over pairs that any rank may evaluate. So: the particles' places k in the global order
// by counting (places_among_ranks: the keys below, over the ring), the cells' stretches from the
// slab's masses and the mass of the slabs before it (MPI_Exscan: in 1D the slabs are the cells
// in order), then the particles (x_(k), k) go round the ring and each rank sweeps them against
// its own cells; the sums of the ranks add up to W_p^p. Ties (equal positions) take their places
// in either order: their pieces have the same integrand.
Wasserstein1D wasserstein_1d(const Eigen::VectorXd& samples, const DensitySlab& slab,
                             const RankGroup& ranks) {
  const Grid& grid = slab.grid();
  if (grid.dim() != 1) throw std::invalid_argument("wasserstein_1d needs a 1D grid");
  const Normalised normalised = normalise(samples.size(), slab, ranks);
  const double n = normalised.n;
  const std::vector<double>& m = normalised.m;
  if (n == 0.0) throw std::invalid_argument("wasserstein_1d needs at least one sample");
  const std::vector<double> particles = particles_with_places(sorted_keys(samples), ranks);

  // The stretches of this rank's cells of positive mass; the last such cell of all ends at 1.
  struct CellStretch {
    double start, end, lower, mass;
  };
  std::vector<CellStretch> cells;
  const double h = grid.spacing(0);
  double own_mass = 0.0;
  for (double v : m) own_mass += v;
  double below = sum_before(own_mass, ranks);
  for (Eigen::Index c = 0; c < slab.size(); ++c) {
    if (!(m[c] > 0.0)) continue;
    const double lower = grid.lower()[0] + static_cast<double>(slab.first_cell() + c) * h;
    cells.push_back({below, below + m[c], lower, m[c]});
    below += m[c];
  }
  const int last = static_cast<int>(ranks.max(cells.empty() ? -1.0 : ranks.rank()));
  if (last == ranks.rank()) cells.back().end = 1.0;

  Wasserstein1D sum;
  ring_pass(ranks, particles.data(), static_cast<Eigen::Index>(particles.size() / 2), 2,
            [&](int, const double* rows, Eigen::Index count) {
              sweep_overlaps(
                  rows, count, n, cells,
                  [&](double x, const CellStretch& cell, double start, double end) {
                    // G^{-1}(u) = lower edge + (u − below)/m_c · h on the cell
                    const double g0 =
                        cell.lower + std::clamp((start - cell.start) / cell.mass, 0.0, 1.0) * h;
                    const double g1 =
                        cell.lower + std::clamp((end - cell.start) / cell.mass, 0.0, 1.0) * h;
                    add_linear_piece(end - start, x - g0, x - g1, sum);
                  });
            });
  double sums[2] = {sum.w1, sum.w2};
  ranks.sum(sums, 2);
  return {sums[0], std::sqrt(sums[1])};
}

// SW2² = mean over θ of W2²(θ·μ_N, θ·ρ_atoms), each W2² the sum over overlapping (particle,
// atom) stretches of |overlap| (θ·x − θ·y)² as in wasserstein_1d above, with the atoms' stretches
// [below, below + weight) from their places among every rank's atoms in the order (θ·y, weight).
// Per direction: the particles' places and the atoms' places (two ring passes), then the particles
// (θ·x, k) round the ring against each rank's own atoms.
double sliced_wasserstein2(const Eigen::MatrixXd& x, const DensitySlab& slab,
                           const Eigen::MatrixXd& directions, const RankGroup& ranks, int q) {
  const Grid& grid = slab.grid();
  const int d = grid.dim();
  if (x.cols() != d || directions.cols() != d)
    throw std::invalid_argument("particles, grid and directions differ in dimension");
  if (d == 1) return wasserstein_1d(x.col(0), slab, ranks).w2;
  const Normalised normalised = normalise(x.rows(), slab, ranks);
  const double n = normalised.n;
  const std::vector<double>& m = normalised.m;
  if (n == 0.0) throw std::invalid_argument("the sliced W2 needs at least one particle");
  Eigen::Index per_cell = 1;
  for (int a = 0; a < d; ++a) per_cell *= q;
  std::vector<Eigen::Index> cells;  // this rank's cells of positive mass, as grid indices
  for (Eigen::Index c = 0; c < slab.size(); ++c)
    if (m[c] > 0.0) cells.push_back(slab.first_cell() + c);
  const Eigen::MatrixXd atoms = sub_cell_atoms(grid, cells, q);
  const double atom_count = ranks.sum(static_cast<double>(atoms.rows()));

  std::vector<double> w2(static_cast<std::size_t>(directions.rows()), 0.0);
  std::vector<std::pair<double, double>> own(static_cast<std::size_t>(atoms.rows()));
  std::vector<double> keyed(2 * own.size());
  struct AtomStretch {
    double start, end, y;
  };
  std::vector<AtomStretch> stretches(own.size());
  for (Eigen::Index k = 0; k < directions.rows(); ++k) {
    const Eigen::VectorXd theta = directions.row(k).transpose();
    const Eigen::VectorXd projected_x = x * theta, projected_atoms = atoms * theta;
    for (Eigen::Index i = 0; i < atoms.rows(); ++i)
      own[i] = {projected_atoms[i],
                m[cells[i / per_cell] - slab.first_cell()] / static_cast<double>(per_cell)};
    std::sort(own.begin(), own.end());
    for (std::size_t i = 0; i < own.size(); ++i) {
      keyed[2 * i] = own[i].first;
      keyed[2 * i + 1] = own[i].second;
    }
    const Places places = places_among_ranks(keyed, ranks);
    for (std::size_t i = 0; i < own.size(); ++i) {
      const bool last = static_cast<double>(places.count[i]) + 1.0 == atom_count;
      stretches[i] = {places.weight[i], last ? 1.0 : places.weight[i] + own[i].second,
                      own[i].first};
    }
    const std::vector<double> particles = particles_with_places(sorted_keys(projected_x), ranks);
    double sum = 0.0;
    ring_pass(ranks, particles.data(), static_cast<Eigen::Index>(particles.size() / 2), 2,
              [&](int, const double* rows, Eigen::Index count) {
                sweep_overlaps(rows, count, n, stretches,
                               [&](double x, const AtomStretch& atom, double start, double end) {
                                 const double diff = x - atom.y;
                                 sum += (end - start) * diff * diff;
                               });
              });
    w2[k] = sum;
  }
  ranks.sum(w2.data(), static_cast<int>(w2.size()));
  double total = 0.0;
  for (double v : w2) total += v;
  return std::sqrt(total / static_cast<double>(directions.rows()));
}

namespace {

// The particle–grid term of the MMD for one particle y against this rank's cells:
// Σ_c Π_a K_a(y_a, c_a) m_c over the cells within the kernel's window of y (clipped to the grid
// and, along the last axis, to the slab's planes), K_a the kernel averaged over the cell's
// extent along axis a (gaussian_cell_average), summed in mmd_gaussian's order.
class SlabKernelSum {
 public:
  SlabKernelSum(const DensitySlab& slab, const std::vector<double>& masses, double sigma)
      : slab_(slab), m_(masses), sigma_(sigma), erf_scale_(1.0 / (sigma * std::numbers::sqrt2)) {
    const Grid& grid = slab.grid();
    for (int a = 0; a < grid.dim(); ++a) window_[a] = gaussian_window(grid.spacing(a), sigma);
  }

  double operator()(const double* y) {
    const Grid& grid = slab_.grid();
    const int d = grid.dim();
    for (int a = d - 1; a >= 0; --a) {  // the last axis first: most particles miss a slab
      const double h = grid.spacing(a), lower = grid.lower()[a];
      const int centre = static_cast<int>(std::floor((y[a] - lower) / h));
      int first = std::max(0, centre - window_[a]);
      int last = std::min(grid.cells(a) - 1, centre + window_[a]);
      if (a == d - 1) {
        first = std::max(first, static_cast<int>(slab_.first_plane()));
        last = std::min(last, static_cast<int>(slab_.first_plane() + slab_.planes()) - 1);
      }
      first_[a] = first;
      count_[a] = last - first + 1;
      if (count_[a] <= 0) return 0.0;
      factor_[a].resize(count_[a]);
      for (int i = 0; i < count_[a]; ++i)
        factor_[a][i] = gaussian_cell_average(y[a], lower + (first + i) * h, h, sigma_, erf_scale_);
    }
    for (int a = d; a < 3; ++a) {
      factor_[a].assign(1, 1.0);
      first_[a] = 0;
      count_[a] = 1;
    }
    const Eigen::Index offset = slab_.first_cell();
    double s = 0.0;
    for (int i2 = 0; i2 < count_[2]; ++i2)
      for (int i1 = 0; i1 < count_[1]; ++i1) {
        const double f12 = factor_[1][i1] * factor_[2][i2];
        const Eigen::Index base = (d > 1 ? (first_[1] + i1) * grid.stride(1) : 0) +
                                  (d > 2 ? (first_[2] + i2) * grid.stride(2) : 0) - offset;
        for (int i0 = 0; i0 < count_[0]; ++i0)
          s += f12 * factor_[0][i0] * m_[base + first_[0] + i0];
      }
    return s;
  }

 private:
  const DensitySlab& slab_;
  const std::vector<double>& m_;
  double sigma_, erf_scale_;
  int window_[3] = {0, 0, 0}, first_[3] = {0, 0, 0}, count_[3] = {1, 1, 1};
  std::vector<double> factor_[3];
};

// The slabs of every rank: (first plane, planes), rank after rank.
std::vector<long> slab_layout(const DensitySlab& slab, const RankGroup& ranks) {
  std::vector<long> layout = {slab.first_plane(), slab.planes()};
  if (!ranks.spread()) return layout;
  layout.resize(2 * static_cast<std::size_t>(ranks.size()));
  const long own[2] = {slab.first_plane(), slab.planes()};
  MPI_Allgather(own, 2, MPI_LONG, layout.data(), 2, MPI_LONG, ranks.communicator());
  return layout;
}

// The grid–grid term Σ_{c,c'} m_c m_c' Π_a G_a(i_a − i'_a) of mmd_gaussian, this rank's part
// Σ_{c own} m_c (G ∗ m)_c. The convolutions along the axes inside a plane run on the slab
// (S = G_0 ∗ … ∗ G_{d−2} ∗ m); along the last axis (G_{d−1} ∗ S)_c needs the planes of S within
// w = min(window, n − 1) of c's, which the ranks exchange pairwise: at distance k = 1, 2, …, rank
// r sends its S to r + k and receives that of r − k, then the other way, wherever the two slabs
// come within w planes (every rank decides from the same layout, so the exchanges pair up).
double grid_grid_term(const DensitySlab& slab, const std::vector<double>& m, double sigma,
                      const RankGroup& ranks) {
  const Grid& grid = slab.grid();
  const int d = grid.dim(), s_axis = d - 1;
  const Eigen::Index size = slab.size(), plane = slab.plane_size();
  std::vector<double> smoothed(m), next(m.size());
  for (int a = 0; a < s_axis; ++a) {
    const int w = std::min(gaussian_window(grid.spacing(a), sigma), grid.cells(a) - 1);
    std::vector<double> g(static_cast<std::size_t>(w) + 1);
    for (int delta = 0; delta <= w; ++delta)
      g[delta] = cell_pair_kernel(delta, grid.spacing(a), sigma);
    const Eigen::Index stride = grid.stride(a);
#pragma omp parallel for schedule(static)
    for (Eigen::Index c = 0; c < size; ++c) {
      const int i = grid.coordinate(slab.first_cell() + c, a);
      const int lo = std::max(0, i - w), hi = std::min(grid.cells(a) - 1, i + w);
      double s = 0.0;
      for (int j = lo; j <= hi; ++j) s += g[std::abs(j - i)] * smoothed[c + (j - i) * stride];
      next[c] = s;
    }
    smoothed.swap(next);
  }

  const long w =
      std::min<long>(gaussian_window(grid.spacing(s_axis), sigma), grid.cells(s_axis) - 1);
  std::vector<double> g(static_cast<std::size_t>(w) + 1);
  for (long delta = 0; delta <= w; ++delta)
    g[delta] = cell_pair_kernel(static_cast<int>(delta), grid.spacing(s_axis), sigma);
  std::vector<double> convolved(m.size(), 0.0);  // (G_{d−1} ∗ S) on the own planes
  // Adds the planes [first, first + planes) of S (`values`) to `convolved`.
  auto add_planes = [&](const double* values, long first, long planes) {
    for (long i = 0; i < slab.planes(); ++i) {
      const long own_plane = slab.first_plane() + i;
      const long lo = std::max(first, own_plane - w),
                 hi = std::min(first + planes, own_plane + w + 1);
      for (long j = lo; j < hi; ++j) {
        const double weight = g[std::abs(j - own_plane)];
        const double* from = values + (j - first) * plane;
        double* to = convolved.data() + i * plane;
        for (Eigen::Index c = 0; c < plane; ++c) to[c] += weight * from[c];
      }
    }
  };
  add_planes(smoothed.data(), slab.first_plane(), slab.planes());
  if (ranks.spread()) {
    const std::vector<long> layout = slab_layout(slab, ranks);
    const int p = ranks.size(), r = ranks.rank();
    auto within_reach = [&](int lower, int upper) {  // rank lower < rank upper
      if (lower < 0 || upper >= p) return false;
      const long lower_planes = layout[2 * lower + 1], upper_planes = layout[2 * upper + 1];
      if (lower_planes == 0 || upper_planes == 0) return false;
      return layout[2 * upper] - (layout[2 * lower] + lower_planes - 1) <= w;
    };
    std::vector<double> visitor;
    constexpr int kTag = 2918;
    for (int k = 1; k < p; ++k) {
      for (const int direction : {1, -1}) {  // send to r + k (r − k), receive from r − k (r + k)
        const int to = r + direction * k, from = r - direction * k;
        const bool sending = direction > 0 ? within_reach(r, to) : within_reach(to, r);
        const bool receiving = direction > 0 ? within_reach(from, r) : within_reach(r, from);
        if (!sending && !receiving) continue;
        const long from_planes = receiving ? layout[2 * from + 1] : 0;
        visitor.resize(static_cast<std::size_t>(from_planes * plane));
        MPI_Sendrecv(smoothed.data(), sending ? static_cast<int>(size) : 0, MPI_DOUBLE,
                     sending ? to : MPI_PROC_NULL, kTag, visitor.data(),
                     static_cast<int>(visitor.size()), MPI_DOUBLE, receiving ? from : MPI_PROC_NULL,
                     kTag, ranks.communicator(), MPI_STATUS_IGNORE);
        if (receiving) add_planes(visitor.data(), layout[2 * from], from_planes);
      }
    }
  }
  double sum = 0.0;
  for (Eigen::Index c = 0; c < size; ++c) sum += m[c] * convolved[c];
  return sum;
}

}  // namespace

// MMD² = (1/N²) Σ_k Σ_l k(x_k, x_l) − (2/N) Σ_k Σ_c K(x_k, c) m_c + Σ_{c,c'} m_c m_c' K(c, c'),
// the three sums of mmd_gaussian split over ranks: the particles go round the ring, and at each
// visit a rank adds the visitors' kernel values to its own particles' row sums (particle–particle,
// N²/P pairs per rank) and the visitors' kernel sums over its own cells (particle–grid); the
// grid–grid term by grid_grid_term. Row sums and per-visitor sums are kept per row, so the result
// does not depend on the thread count.
double mmd_gaussian(const Eigen::MatrixXd& x, const DensitySlab& slab, double sigma,
                    const RankGroup& ranks) {
  const Grid& grid = slab.grid();
  const int d = grid.dim();
  if (x.cols() != d) throw std::invalid_argument("particles and grid differ in dimension");
  if (!(sigma > 0.0)) throw std::invalid_argument("MMD bandwidth must be positive");
  const Normalised normalised = normalise(x.rows(), slab, ranks);
  const double n = normalised.n;
  const std::vector<double>& m = normalised.m;
  const double two_s2 = 2.0 * sigma * sigma;
  const RowMajor own = x;
  const Eigen::Index rows = own.rows();
  std::vector<double> row_sums(static_cast<std::size_t>(rows), 0.0), visitor_sums;
  double cross = 0.0;
  ring_pass(ranks, own.data(), rows, d, [&](int, const double* block, Eigen::Index count) {
#pragma omp parallel for schedule(static)
    for (Eigen::Index k = 0; k < rows; ++k) {
      const double* xk = own.data() + k * d;
      double s = 0.0;
      for (Eigen::Index l = 0; l < count; ++l) {
        double r2 = 0.0;
        for (int a = 0; a < d; ++a) {
          const double z = xk[a] - block[l * d + a];
          r2 += z * z;
        }
        s += std::exp(-r2 / two_s2);
      }
      row_sums[k] += s;
    }
    visitor_sums.assign(static_cast<std::size_t>(count), 0.0);
#pragma omp parallel
    {
      SlabKernelSum kernel_sum(slab, m, sigma);
#pragma omp for schedule(static)
      for (Eigen::Index l = 0; l < count; ++l) visitor_sums[l] = kernel_sum(block + l * d);
    }
    for (double v : visitor_sums) cross += v;
  });
  double sums[3] = {0.0, cross, grid_grid_term(slab, m, sigma, ranks)};
  for (double v : row_sums) sums[0] += v;
  ranks.sum(sums, 3);
  const double particle_particle = sums[0] / (n * n), particle_grid = sums[1] / n;
  return std::sqrt(std::max(0.0, particle_particle - 2.0 * particle_grid + sums[2]));
}

// Σ_c |n_c/N − m_c| + (outside)/N: each rank counts the visitors of the ring in its own cells
// (grid.locate, the cell of one process), and its own particles outside the grid.
double histogram_l1(const Eigen::MatrixXd& x, const DensitySlab& slab, const RankGroup& ranks) {
  const Grid& grid = slab.grid();
  const int d = grid.dim();
  if (x.cols() != d) throw std::invalid_argument("particles and grid differ in dimension");
  const Normalised normalised = normalise(x.rows(), slab, ranks);
  const double n = normalised.n;
  const std::vector<double>& m = normalised.m;
  const RowMajor own = x;
  std::vector<double> counts(m.size(), 0.0);
  double outside = 0.0;
  const Eigen::Index first = slab.first_cell(), end = first + slab.size();
  ring_pass(ranks, own.data(), own.rows(), d,
            [&](int origin, const double* block, Eigen::Index count) {
              for (Eigen::Index l = 0; l < count; ++l) {
                const Eigen::Index c = grid.locate(block + l * d);
                if (c < 0) {
                  if (origin == ranks.rank()) outside += 1.0;
                } else if (c >= first && c < end) {
                  counts[c - first] += 1.0;
                }
              }
            });
  double sums[2] = {outside, 0.0};
  for (std::size_t c = 0; c < m.size(); ++c) sums[1] += std::abs(counts[c] / n - m[c]);
  ranks.sum(sums, 2);
  return sums[0] / n + sums[1];
}

Eigen::VectorXd density_mean(const DensitySlab& slab, const RankGroup& ranks) {
  const Grid& grid = slab.grid();
  const int d = grid.dim();
  Eigen::VectorXd sums = Eigen::VectorXd::Zero(d + 1);  // Σ ρ x_a, then Σ ρ
  for (Eigen::Index c = 0; c < slab.size(); ++c) {
    const double r = slab.values()[c];
    sums[d] += r;
    for (int a = 0; a < d; ++a) sums[a] += r * grid.centre(slab.first_cell() + c, a);
  }
  ranks.sum(sums.data(), d + 1);
  return sums.head(d) / sums[d];
}

Eigen::MatrixXd density_covariance(const DensitySlab& slab, const RankGroup& ranks) {
  const Grid& grid = slab.grid();
  const int d = grid.dim();
  const Eigen::VectorXd mean = density_mean(slab, ranks);
  Eigen::MatrixXd sums = Eigen::MatrixXd::Zero(d, d + 1);  // Σ ρ (x − mean)(x − mean)ᵀ, then Σ ρ
  Eigen::VectorXd z(d);
  for (Eigen::Index c = 0; c < slab.size(); ++c) {
    const double r = slab.values()[c];
    if (r == 0.0) continue;
    sums(0, d) += r;
    for (int a = 0; a < d; ++a) z[a] = grid.centre(slab.first_cell() + c, a) - mean[a];
    sums.leftCols(d).noalias() += r * z * z.transpose();
  }
  ranks.sum(sums.data(), static_cast<int>(sums.size()));
  Eigen::MatrixXd cov = sums.leftCols(d) / sums(0, d);
  for (int a = 0; a < d; ++a) cov(a, a) += grid.spacing(a) * grid.spacing(a) / 12.0;
  return cov;
}

}  // namespace cpm
