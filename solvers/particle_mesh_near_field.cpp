#include "solvers/particle_mesh_near_field.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <stdexcept>
#include <type_traits>

#include "solvers/simd_pair_evaluators.hpp"

namespace cpm {

namespace {

int pow_int(int base, int e) {
  return e == 0 ? 1 : base * pow_int(base, e - 1);
}

// K_m; zero beyond the table, which only offsets between a cell of the grid and a cell outside
// it reach (no particle deposits or reads there).
double weight_at(const CellIntegratedKernel& weights, const int* m) {
  for (int a = 0; a < weights.dim(); ++a)
    if (std::abs(m[a]) >= weights.extent()[a]) return 0.0;
  return weights(m);
}

constexpr int kMaxSide = 2 * kMaxNearCells + 2;
constexpr int kMaxBlock = kMaxSide * kMaxSide * kMaxSide;                    // (2R + 2)^d
constexpr int kMaxRuns = (2 * kMaxNearCells + 1) * (2 * kMaxNearCells + 1);  // (2R + 1)^(d−1)
constexpr int kMaxTerms = 4 * 8;                                             // (d + 1) 2^d

// The CIC weights of sorted particle i at the 2^D corners of its stencil.
template <int D>
std::array<double, (1 << D)> corner_weights(const MeshCellList& list, Eigen::Index i) {
  std::array<double, (1 << D)> w;
  w.fill(1.0);
  for (int a = 0; a < D; ++a) {
    const double t = list.fraction(a)[i];
    for (int b = 0; b < (1 << D); ++b) w[b] *= (b >> a) & 1 ? t : 1.0 - t;
  }
  return w;
}

// Σ_b w_b terms[group · 2^D + b]: the energy (group 0) or gradient component a (group 1 + a)
// the mesh terms give at a particle with corner weights w.
template <int D>
double pick(const std::array<double, (1 << D)>& w, const double* terms, int group) {
  double sum = 0.0;
  for (int b = 0; b < (1 << D); ++b) sum += w[b] * terms[group * (1 << D) + b];
  return sum;
}

}  // namespace

LocalMeshResponse::LocalMeshResponse(const CellIntegratedKernel& weights, int radius) {
  const int d = weights.dim();
  const int corners = 1 << d;
  side_ = 2 * radius + 2;
  rows_ = (d + 1) * corners;
  columns_ = pow_int(side_, d);
  map_.assign(static_cast<std::size_t>(rows_ * columns_), 0.0);
  double volume = 1.0;
  for (int a = 0; a < d; ++a) volume *= weights.spacing()[a];
  // K / h^d between the point at offset p from the base cell and block cell j.
  auto kernel = [&](const int* p, int j) {
    int m[3] = {0, 0, 0};
    for (int a = 0; a < d; ++a, j /= side_) m[a] = p[a] - (j % side_ - radius);
    return weight_at(weights, m) / volume;
  };
  for (int b = 0; b < corners; ++b) {
    int p[3] = {0, 0, 0};
    for (int a = 0; a < d; ++a) p[a] = (b >> a) & 1;
    for (int j = 0; j < columns_; ++j) {
      map_[j * rows_ + b] = kernel(p, j);
      for (int a = 0; a < d; ++a) {
        int plus[3] = {p[0], p[1], p[2]}, minus[3] = {p[0], p[1], p[2]};
        ++plus[a];
        --minus[a];
        map_[j * rows_ + (1 + a) * corners + b] =
            (kernel(plus, j) - kernel(minus, j)) / (2.0 * weights.spacing()[a]);
      }
    }
  }
}

void LocalMeshResponse::apply(const double* block, double* terms) const {
  // Column by column, so that the inner loop runs over the terms (vectorised); each term is
  // still summed over j in increasing order.
  std::fill_n(terms, rows_, 0.0);
  for (int j = 0; j < columns_; ++j) {
    const double* column = map_.data() + j * rows_;
    const double v = block[j];
    for (int r = 0; r < rows_; ++r) terms[r] += column[r] * v;
  }
}

NearFieldCorrection::NearFieldCorrection(const InteractionKernel& kernel,
                                         const CellIntegratedKernel& weights,
                                         const Eigen::VectorXi& grid_cells, int near_cells)
    : kernel_(kernel),
      d_(weights.dim()),
      near_cells_(near_cells),
      cells_(grid_cells),
      response_(weights, std::max(near_cells, 0)) {
  if (near_cells < -1 || near_cells > kMaxNearCells)
    throw std::invalid_argument("particle-mesh near range must be -1 (none) to 3 cells");
  for (int a = 1; a < d_; ++a) stride_[a] = stride_[a - 1] * cells_[a - 1];
}

void NearFieldCorrection::apply(const MeshCellList& list, double* gradient, double* energy) const {
  auto dispatch = [&](auto dim) {
    constexpr int D = decltype(dim)::value;
    if (near_cells_ < 0) return remove_self<D>(list, gradient, energy);
    visit_simd(kernel_, [&](auto w) {
      if (energy)
        correct_cells<D, true>(w, list, gradient, energy);
      else
        correct_cells<D, false>(w, list, gradient, energy);
    });
  };
  switch (d_) {
    case 1:
      return dispatch(std::integral_constant<int, 1>{});
    case 2:
      return dispatch(std::integral_constant<int, 2>{});
    case 3:
      return dispatch(std::integral_constant<int, 3>{});
  }
  throw std::invalid_argument("the particle-mesh near field needs d = 1, 2 or 3");
}

template <int D>
void NearFieldCorrection::remove_self(const MeshCellList& list, double* gradient,
                                      double* energy) const {
  const Eigen::Index n = list.size();
#pragma omp parallel for schedule(static)
  for (Eigen::Index i = 0; i < n; ++i) {
    // The particle's own deposit on the 2^D block of its stencil (R = 0: the block side is 2,
    // so block cell b is corner b).
    const auto w = corner_weights<D>(list, i);
    std::array<double, kMaxTerms> terms;
    response_.apply(w.data(), terms.data());
    for (int a = 0; a < D; ++a) gradient[a * n + i] -= pick<D>(w, terms.data(), 1 + a);
    if (energy) energy[i] -= pick<D>(w, terms.data(), 0);
  }
}

template <int D, bool Energy, class SimdEvaluator>
void NearFieldCorrection::correct_cells(const SimdEvaluator& w, const MeshCellList& list,
                                        double* gradient, double* energy) const {
  constexpr int kCorners = 1 << D;
  constexpr int kLanes = static_cast<int>(SimdDouble::size);
  const int R = near_cells_, L = response_.side();
  const int runs_per_cell = pow_int(2 * R + 1, D - 1);
  const Eigen::Index n = list.size();
  Eigen::Index cells = 1;
  for (int a = 0; a < D; ++a) cells *= cells_[a];
  // Offset of corner b's block cell from the particle's base block cell.
  std::array<int, kCorners> corner_offset{};
  for (int b = 0; b < kCorners; ++b)
    for (int a = 0, p = 1; a < D; ++a, p *= L) corner_offset[b] += ((b >> a) & 1) * p;
  alignas(64) double lane_numbers[kLanes];
  for (int v = 0; v < kLanes; ++v) lane_numbers[v] = v;
  const SimdDouble lane_offset = xsimd::load_aligned(lane_numbers);

#pragma omp parallel for schedule(dynamic, 64)
  for (Eigen::Index c = 0; c < cells; ++c) {
    const Eigen::Index first = list.begin(c), last = list.begin(c + 1);
    if (first == last) continue;
    int cc[3] = {0, 0, 0};
    for (int a = 0; a < D; ++a) cc[a] = static_cast<int>((c / stride_[a]) % cells_[a]);

    // S: the cells within R along every axis, as runs along axis 0 (their particles are
    // contiguous in the list); the deposit of S on the block, from the cells' corner masses.
    struct Run {
      Eigen::Index begin, end;  // sorted particles
    };
    std::array<Run, kMaxRuns> runs;
    int run_count = 0;
    std::array<double, kMaxBlock> block;
    std::fill_n(block.begin(), response_.block_size(), 0.0);
    const int lo0 = std::max(cc[0] - R, 0), hi0 = std::min(cc[0] + R, cells_[0] - 1);
    for (int r = 0; r < runs_per_cell; ++r) {
      bool inside = true;
      Eigen::Index cell = c;
      int j = R - cc[0];  // block index of the run's cell with axis-0 index 0
      for (int a = 1, rest = r, p = L; a < D; ++a, rest /= 2 * R + 1, p *= L) {
        const int o = rest % (2 * R + 1) - R;
        inside = inside && cc[a] + o >= 0 && cc[a] + o < cells_[a];
        cell += o * stride_[a];
        j += (o + R) * p;
      }
      if (!inside) continue;
      const Eigen::Index first_cell = cell + lo0 - cc[0], last_cell = cell + hi0 - cc[0];
      const Run run{list.begin(first_cell), list.begin(last_cell + 1)};
      if (run.begin == run.end) continue;
      runs[run_count++] = run;
      for (int i0 = lo0; i0 <= hi0; ++i0) {
        const double* mass = list.corner_mass() + (first_cell + i0 - lo0) * kCorners;
        for (int b = 0; b < kCorners; ++b) block[j + i0 + corner_offset[b]] += mass[b];
      }
    }
    std::array<double, kMaxTerms> terms;
    response_.apply(block.data(), terms.data());

    // Each particle of the cell: exact pair terms over S \ {i}, one register of partners at a
    // time (the list's padding keeps the last load in bounds; lanes past the run's end and the
    // particle itself are masked out), minus the mesh's share.
    for (Eigen::Index i = first; i < last; ++i) {
      std::array<SimdDouble, D> xi, sum;
      for (int a = 0; a < D; ++a) {
        xi[a] = SimdDouble(list.position(a)[i]);
        sum[a] = SimdDouble(0.0);
      }
      SimdDouble sum_energy(0.0);
      const SimdDouble self(static_cast<double>(i));
      for (int r = 0; r < run_count; ++r) {
        const SimdDouble end(static_cast<double>(runs[r].end));
        for (Eigen::Index l = runs[r].begin; l < runs[r].end; l += kLanes) {
          const SimdDouble index = SimdDouble(static_cast<double>(l)) + lane_offset;
          const SimdMask valid = (index < end) && (index != self);
          std::array<SimdDouble, D> z;
          SimdDouble r2(0.0);
          for (int a = 0; a < D; ++a) {
            z[a] = xi[a] - xsimd::load_unaligned(list.position(a) + l);
            r2 = xsimd::fma(z[a], z[a], r2);
          }
          const SimdPairTerms t = w.template evaluate<Energy>(r2);
          // Coincident particles (z = 0, e.g. two projected onto the same boundary point) get
          // the symmetric limit ∇W = 0 rather than ∞ · 0; their energy stays W(0).
          const SimdDouble h =
              xsimd::select(valid && (r2 > SimdDouble(0.0)), t.minus_factor, SimdDouble(0.0));
          for (int a = 0; a < D; ++a) sum[a] = fnma(h, z[a], sum[a]);  // ∇W = −h z
          if constexpr (Energy) sum_energy += xsimd::select(valid, t.value, SimdDouble(0.0));
        }
      }
      const auto wi = corner_weights<D>(list, i);
      for (int a = 0; a < D; ++a)
        gradient[a * n + i] += xsimd::hadd(sum[a]) - pick<D>(wi, terms.data(), 1 + a);
      if constexpr (Energy) energy[i] += xsimd::hadd(sum_energy) - pick<D>(wi, terms.data(), 0);
    }
  }
}

}  // namespace cpm
