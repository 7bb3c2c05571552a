#include "solvers/mckean_vlasov.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "parallel/slab_decomposition.hpp"
#include "solvers/simd_math.hpp"

namespace cpm {

const std::vector<std::string>& names(Reconstruction) {
  static const std::vector<std::string> all{"first_order", "second_order"};
  return all;
}

namespace {

namespace odeint = boost::numeric::odeint;

// Shu–Osher SSP-RK3 in Butcher form: c = (0, 1, 1/2), a21 = 1, a31 = a32 = 1/4,
// b = (1/6, 1/6, 2/3).
template <class Stepper>
Stepper make_ssp_rk3() {
  const boost::array<double, 1> a1 = {{1.0}};
  const boost::array<double, 2> a2 = {{0.25, 0.25}};
  const boost::array<double, 3> b = {{1.0 / 6.0, 1.0 / 6.0, 2.0 / 3.0}};
  const boost::array<double, 3> c = {{0.0, 1.0, 0.5}};
  return Stepper(boost::fusion::make_vector(a1, a2), b, c);
}

// B(a) and B(−a) = B(a) + a for a ≥ 0, B(x) = x/(eˣ − 1): no cancellation on either side.
inline void bernoulli_pair(double a, double& small, double& large) {
  small = a > 0.0 ? a / std::expm1(a) : 1.0;
  large = small + a;
}

constexpr Eigen::Index kParallelCells = 8192;

// SSP-RK3 is stable for dt·μ ≤ 2.51 on the decaying modes e^{−μt} (its stability polynomial
// 1 + z + z²/2 + z³/6 on the negative real axis); 2.5 keeps a margin.
constexpr double kSspRk3RealAxis = 2.5;

// The generalised minmod of θ·Δ⁻, (Δ⁻ + Δ⁺)/2 and θ·Δ⁺: the one of least magnitude when all three
// share a sign, else 0 (with the smallest a ≤ 0 ≤ the largest b, max(a, 0) + min(b, 0) = 0).
inline double generalised_minmod(double below, double above, double theta) {
  const double x = theta * below, y = 0.5 * (below + above), z = theta * above;
  return std::max(std::min(std::min(x, y), z), 0.0) + std::min(std::max(std::max(x, y), z), 0.0);
}

}  // namespace

namespace {

// This rank's planes along the last axis and its part: the planes with two halo planes each side.
struct SlabPart {
  SlabDecomposition slabs;
  long first = 0, planes = 0, part_first = 0, part_planes = 0;
};

SlabPart slab_part(const Grid& whole, const RankGroup& ranks) {
  const int s = whole.dim() - 1;
  const long n = whole.cells(s);
  const SlabDecomposition slabs(whole.lower()[s], whole.upper()[s], n, ranks.size());
  if (!ranks.spread()) return {slabs, 0, n, 0, n};
  for (int r = 0; r < ranks.size(); ++r)
    if (slabs.plane_count(r) < 2)
      throw std::invalid_argument("the grid solver over " + std::to_string(ranks.size()) +
                                  " ranks needs at least two of "
                                  "the grid's " +
                                  std::to_string(n) +
                                  " planes along its last axis per rank; use fewer "
                                  "ranks or more cells");
  SlabPart p{slabs};
  p.first = slabs.first_plane(ranks.rank());
  p.planes = slabs.plane_count(ranks.rank());
  p.part_first = std::max(p.first - 2, 0L);
  p.part_planes = std::min(p.first + p.planes + 2, n) - p.part_first;
  return p;
}

}  // namespace

McKeanVlasovSolver::McKeanVlasovSolver(Grid grid, const ExternalPotential& potential,
                                       const InteractionKernel& kernel,
                                       McKeanVlasovParameters parameters, State initial_density)
    : McKeanVlasovSolver(std::move(grid), potential, kernel, parameters, std::move(initial_density),
                         RankGroup{}) {}

McKeanVlasovSolver::McKeanVlasovSolver(Grid grid, const ExternalPotential& potential,
                                       const InteractionKernel& kernel,
                                       McKeanVlasovParameters parameters, State initial_density,
                                       RankGroup ranks)
    : whole_(std::move(grid)),
      grid_(whole_),
      ranks_(ranks),
      parameters_(parameters),
      interacting_(parameters.lambda != 0.0 && kernel.kind != InteractionKernel::Kind::none),
      stepper_(make_ssp_rk3<Stepper>()),
      limited_(parameters.reconstruction == Reconstruction::limited_linear) {
  if (!(parameters_.beta > 0.0)) throw std::invalid_argument("beta must be positive");
  if (!(parameters_.cfl > 0.0 && parameters_.cfl <= 1.0))
    throw std::invalid_argument("the CFL fraction must lie in (0, 1]");
  if (!(parameters_.fixed_step >= 0.0)) throw std::invalid_argument("the fixed step must be >= 0");
  if (!(parameters_.limiter_theta >= 1.0 && parameters_.limiter_theta <= 2.0))
    throw std::invalid_argument("the limiter parameter theta must lie in [1, 2]");
  const SlabPart part = slab_part(whole_, ranks_);
  const Eigen::Index plane = whole_.stride(whole_.dim() - 1);
  if (ranks_.spread()) {
    grid_ = whole_.slab(part.part_first, part.part_planes);
    halos_ = PlaneHalos::of_slab(part.slabs, ranks_.rank(), plane, part.first - part.part_first, 2,
                                 ranks_.communicator());
    if (interacting_)
      spread_convolution_ =
          std::make_unique<DistributedFftConvolution>(whole_, kernel, ranks_.communicator());
  } else if (interacting_) {
    convolution_ = std::make_unique<FftConvolution>(grid_, kernel);
  }
  part_offset_ = part.part_first * plane;
  own_first_ = (part.first - part.part_first) * plane;
  own_last_ = own_first_ + part.planes * plane;
  const Eigen::Index m = grid_.size();

  Eigen::VectorXd values;
  potential.evaluate(grid_.centres(), values, nullptr);
  external_.assign(values.data(), values.data() + m);

  // Face c of axis a joins cells c and c + e_a; it is open when both are active cells of the box.
  face_weight_.assign(grid_.dim(), State(m, 0.0));
  for (int a = 0; a < grid_.dim(); ++a) {
    const Eigen::Index s = grid_.stride(a);
    const double h = grid_.spacing(a), h2 = h * h;
    const double weight = limited_                       ? 1.0 / h
                          : std::isinf(parameters_.beta) ? 1.0 / h2
                                                         : 1.0 / (parameters_.beta * h2);
    if (limited_ && !std::isinf(parameters_.beta)) diffusion_rate_ += 4.0 / (parameters_.beta * h2);
    for (Eigen::Index c = 0; c < m; ++c)
      if (grid_.coordinate(c, a) + 1 < grid_.cells(a) && grid_.active(c) && grid_.active(c + s))
        face_weight_[a][c] = weight;
  }
  outflow_up_.assign(grid_.dim(), State(limited_ ? 0 : m, 0.0));
  outflow_down_.assign(grid_.dim(), State(limited_ ? 0 : m, 0.0));
  flux_.assign(grid_.dim(), State(m, 0.0));
  next_.assign(m, 0.0);
  derivative_.assign(m, 0.0);
  convolved_.assign(m, 0.0);
  phi_.assign(m, 0.0);
  potential_.assign(m, 0.0);
  if (limited_) {
    xi_.assign(m, 0.0);
    half_jump_.assign(m, 0.0);
  }
  diffusion_rate_ /= kSspRk3RealAxis;
  set_state(std::move(initial_density), 0.0, 0);
}

void McKeanVlasovSolver::check_density(const State& density) const {
  if (static_cast<Eigen::Index>(density.size()) != grid_.size())
    throw std::invalid_argument("density has " + std::to_string(density.size()) +
                                " values for a grid of " + std::to_string(grid_.size()) + " cells");
  // Over ranks every rank checks its own cells and all agree before any throws.
  std::string problem;
  double total = 0.0;
  for (Eigen::Index c = own_first_; c < own_last_ && problem.empty(); ++c) {
    if (!(density[c] >= 0.0) || !std::isfinite(density[c]))
      problem =
          "density must be finite and non-negative (cell " + std::to_string(part_offset_ + c) + ")";
    else if (!grid_.active(c) && density[c] != 0.0)
      problem =
          "density must vanish in masked cells (cell " + std::to_string(part_offset_ + c) + ")";
    total += density[c];
  }
  if (ranks_.max(problem.empty() ? 0.0 : 1.0) > 0.0)
    throw std::invalid_argument(problem.empty() ? "density is invalid on another rank" : problem);
  if (!(ranks_.sum(total) > 0.0)) throw std::invalid_argument("density has zero mass");
}

void McKeanVlasovSolver::set_state(State density, double time, std::uint64_t steps) {
  if (ranks_.spread()) {  // the whole grid's density: this rank's part of it
    if (static_cast<Eigen::Index>(density.size()) != whole_.size())
      throw std::invalid_argument("density has " + std::to_string(density.size()) +
                                  " values for a grid of " + std::to_string(whole_.size()) +
                                  " cells");
    density = State(density.begin() + part_offset_, density.begin() + part_offset_ + grid_.size());
  }
  check_density(density);
  density_ = std::move(density);
  time_ = time;
  steps_ = steps;
  potential_current_ = false;
}

void McKeanVlasovSolver::face_fluxes(const State& phi, const State& rho) {
  const Eigen::Index m = grid_.size();
  const double beta = parameters_.beta;
  const bool noiseless = std::isinf(beta);
  for (int a = 0; a < grid_.dim(); ++a) {
    // Face c joins cells c and c + s: outflow coefficients A (of ρ_c) and B (of ρ_{c+s}), and
    // J/h = A ρ_c − B ρ_{c+s}; the weight 1/(β h²) (1/h² for β = ∞) is 0 on closed faces.
    const Eigen::Index s = grid_.stride(a), faces = m - s;
    const double* weight = face_weight_[a].data();
    double* up = outflow_up_[a].data();
    double* down = outflow_down_[a].data();
    double* flux = flux_[a].data();
    if (noiseless) {
#pragma omp parallel for simd schedule(static) if (m > kParallelCells)
      for (Eigen::Index c = 0; c < faces; ++c) {
        const double dphi = phi[c + s] - phi[c];
        up[c] = weight[c] * std::max(-dphi, 0.0);
        down[c] = weight[c] * std::max(dphi, 0.0);
        flux[c] = up[c] * rho[c] - down[c] * rho[c + s];
      }
      continue;
    }
    // B(P) and B(−P): one expm1 per face, in SIMD registers.
    constexpr Eigen::Index width = SimdDouble::size;
    const Eigen::Index blocks = faces / width;
#pragma omp parallel for schedule(static) if (m > kParallelCells)
    for (Eigen::Index block = 0; block < blocks; ++block) {
      const Eigen::Index c = block * width;
      const SimdDouble w = SimdDouble::load_unaligned(weight + c);
      const SimdDouble p =
          beta * (SimdDouble::load_unaligned(&phi[c + s]) - SimdDouble::load_unaligned(&phi[c]));
      const SimdDouble magnitude = xsimd::abs(p);
      const SimdDouble small = xsimd::select(magnitude > SimdDouble(0.0),
                                             magnitude / xsimd::expm1(magnitude), SimdDouble(1.0));
      const SimdDouble large = small + magnitude;
      const SimdMask rising = p >= SimdDouble(0.0);
      const SimdDouble a_up = w * xsimd::select(rising, small, large);
      const SimdDouble b_down = w * xsimd::select(rising, large, small);
      a_up.store_unaligned(up + c);
      b_down.store_unaligned(down + c);
      (a_up * SimdDouble::load_unaligned(&rho[c]) -
       b_down * SimdDouble::load_unaligned(&rho[c + s]))
          .store_unaligned(flux + c);
    }
    for (Eigen::Index c = blocks * width; c < faces; ++c) {
      const double p = beta * (phi[c + s] - phi[c]);
      double small, large;
      bernoulli_pair(std::abs(p), small, large);
      up[c] = weight[c] * (p >= 0.0 ? small : large);
      down[c] = weight[c] * (p >= 0.0 ? large : small);
      flux[c] = up[c] * rho[c] - down[c] * rho[c + s];
    }
  }
}

void McKeanVlasovSolver::limited_fluxes(const State& phi, const State& rho) {
  // docs/numerics.md §3.3, second order. At the cell centres ξ = φ + β⁻¹ log ρ (ρ below the
  // smallest normal double counts as that double, so that log stays finite); per axis the limited
  // half jumps ½ h ∂ρ (zero next to a closed face); then at each face
  //     u = −(ξ_{c+e_a} − ξ_c)/h,   J = u⁺ ρ^E_c + u⁻ ρ^W_{c+e_a},
  // with ρ^E = ρ + ½ h ∂ρ and ρ^W = ρ − ½ h ∂ρ the values at a cell's upper and lower faces, and
  // for β < ∞ |J| capped at (1 + θ/2) times the Scharfetter–Gummel flux of the face.
  const Eigen::Index m = grid_.size();
  const double beta = parameters_.beta, theta = parameters_.limiter_theta;
  const bool noiseless = std::isinf(beta);
  constexpr Eigen::Index width = SimdDouble::size;
  const double* xi = phi.data();
  if (!noiseless) {
    const double temperature = 1.0 / beta, smallest = std::numeric_limits<double>::min();
    double* out = xi_.data();
    const Eigen::Index blocks = m / width;
#pragma omp parallel for schedule(static) if (m > kParallelCells)
    for (Eigen::Index block = 0; block < blocks; ++block) {
      const Eigen::Index c = block * width;
      const SimdDouble r = xsimd::max(SimdDouble::load_unaligned(&rho[c]), SimdDouble(smallest));
      xsimd::fma(SimdDouble(temperature), xsimd::log(r), SimdDouble::load_unaligned(&phi[c]))
          .store_unaligned(out + c);
    }
    for (Eigen::Index c = blocks * width; c < m; ++c)
      out[c] = phi[c] + temperature * std::log(std::max(rho[c], smallest));
    xi = out;
  }
  const double cap = 1.0 + 0.5 * theta;  // ≥ ρ^E/ρ: the cap never binds on the drift alone
  double* jump = half_jump_.data();
  for (int a = 0; a < grid_.dim(); ++a) {
    const Eigen::Index s = grid_.stride(a), faces = m - s;
    const double h = grid_.spacing(a);
    const double* open = face_weight_[a].data();  // 1/h on open faces, 0 on closed ones
    // The face below c is face c − s; faces past the last layer are closed.
    auto half_jump = [&](Eigen::Index c) {
      const double below = c >= s && open[c - s] > 0.0 ? rho[c] - rho[c - s] : 0.0;
      const double above = c < faces && open[c] > 0.0 ? rho[c + s] - rho[c] : 0.0;
      return 0.5 * generalised_minmod(below, above, theta);
    };
    for (Eigen::Index c = 0; c < std::min(s, m); ++c) jump[c] = half_jump(c);
    for (Eigen::Index c = std::max(s, faces); c < m; ++c) jump[c] = half_jump(c);
    const Eigen::Index interior_blocks = std::max<Eigen::Index>(faces - s, 0) / width;
#pragma omp parallel for schedule(static) if (m > kParallelCells)
    for (Eigen::Index block = 0; block < interior_blocks; ++block) {
      const Eigen::Index c = s + block * width;
      const SimdDouble zero(0.0), rho_c = SimdDouble::load_unaligned(&rho[c]);
      const SimdDouble below = xsimd::select(SimdDouble::load_unaligned(open + c - s) > zero,
                                             rho_c - SimdDouble::load_unaligned(&rho[c - s]), zero);
      const SimdDouble above = xsimd::select(SimdDouble::load_unaligned(open + c) > zero,
                                             SimdDouble::load_unaligned(&rho[c + s]) - rho_c, zero);
      const SimdDouble x = theta * below, y = 0.5 * (below + above), z = theta * above;
      const SimdDouble smallest = xsimd::min(xsimd::min(x, y), z);
      const SimdDouble largest = xsimd::max(xsimd::max(x, y), z);
      (0.5 * (xsimd::max(smallest, zero) + xsimd::min(largest, zero))).store_unaligned(jump + c);
    }
    for (Eigen::Index c = s + interior_blocks * width; c < faces; ++c) jump[c] = half_jump(c);

    // Face fluxes J/h (the divergence reads the outflows off their signs).
    double* flux = flux_[a].data();
    const double inv_h = 1.0 / h, sg_weight = noiseless ? 0.0 : 1.0 / (beta * h);
    auto upwind = [&](Eigen::Index c) {
      const double u = open[c] * (xi[c] - xi[c + s]);
      return std::max(u, 0.0) * (rho[c] + jump[c]) + std::min(u, 0.0) * (rho[c + s] - jump[c + s]);
    };
    if (noiseless) {
#pragma omp parallel for simd schedule(static) if (m > kParallelCells)
      for (Eigen::Index c = 0; c < faces; ++c) flux[c] = upwind(c) * inv_h;
      continue;
    }
    const Eigen::Index blocks = faces / width;
#pragma omp parallel for schedule(static) if (m > kParallelCells)
    for (Eigen::Index block = 0; block < blocks; ++block) {
      const Eigen::Index c = block * width;
      const SimdDouble rho_c = SimdDouble::load_unaligned(&rho[c]);
      const SimdDouble rho_n = SimdDouble::load_unaligned(&rho[c + s]);
      const SimdDouble u =
          SimdDouble::load_unaligned(open + c) *
          (SimdDouble::load_unaligned(xi + c) - SimdDouble::load_unaligned(xi + c + s));
      const SimdDouble east = rho_c + SimdDouble::load_unaligned(jump + c);
      const SimdDouble west = rho_n - SimdDouble::load_unaligned(jump + c + s);
      const SimdDouble upwind_flux =
          xsimd::max(u, SimdDouble(0.0)) * east + xsimd::min(u, SimdDouble(0.0)) * west;
      // Scharfetter–Gummel: (B(P) ρ_c − B(−P) ρ_{c+e_a})/(β h), P = β (φ_{c+e_a} − φ_c).
      const SimdDouble p =
          beta * (SimdDouble::load_unaligned(&phi[c + s]) - SimdDouble::load_unaligned(&phi[c]));
      const SimdDouble magnitude = xsimd::abs(p);
      const SimdDouble small = xsimd::select(magnitude > SimdDouble(0.0),
                                             magnitude / xsimd::expm1(magnitude), SimdDouble(1.0));
      const SimdDouble large = small + magnitude;
      const SimdMask rising = p >= SimdDouble(0.0);
      const SimdDouble sg = sg_weight * (xsimd::select(rising, small, large) * rho_c -
                                         xsimd::select(rising, large, small) * rho_n);
      const SimdDouble bound = cap * xsimd::abs(sg);
      const SimdDouble j = xsimd::max(xsimd::min(upwind_flux, bound), -bound);
      (j * inv_h).store_unaligned(flux + c);
    }
    for (Eigen::Index c = blocks * width; c < faces; ++c) {
      const double p = beta * (phi[c + s] - phi[c]);
      double small, large;
      bernoulli_pair(std::abs(p), small, large);
      const double sg = sg_weight * ((p >= 0.0 ? small : large) * rho[c] -
                                     (p >= 0.0 ? large : small) * rho[c + s]);
      const double bound = cap * std::abs(sg);
      flux[c] = std::max(std::min(upwind(c), bound), -bound) * inv_h;
    }
  }
}

template <bool kLimited>
double McKeanVlasovSolver::divergence(const State& rho, State& drho) const {
  // dρ_c/dt = Σ_a (J_{c−e_a} − J_c)/h_a: every face flux was computed once, so what one cell
  // loses its neighbour gains and Σ_c dρ_c = 0. The outflow rate r_c: for the first-order flux
  // the sum of the coefficients of ρ_c in the fluxes leaving c; for the limited (upwind) flux,
  // where each face flux leaves the cell on one side only, the total outflow over ρ_c. Faces past
  // the last cell of an axis are closed (zero flux), so the interior needs no bounds checks; the
  // first and last layers do.
  const Eigen::Index m = grid_.size();
  const int d = grid_.dim();
  const double *flux[3], *up[3], *down[3];
  Eigen::Index stride[3];
  for (int a = 0; a < d; ++a) {
    flux[a] = flux_[a].data();
    up[a] = outflow_up_[a].data();
    down[a] = outflow_down_[a].data();
    stride[a] = grid_.stride(a);
  }
  // What leaves c through its upper face (flux index c) and through its lower face (c − s).
  auto out_above = [&](int a, Eigen::Index c) {
    return kLimited ? std::max(flux[a][c], 0.0) : up[a][c];
  };
  auto out_below = [&](int a, Eigen::Index c) {
    return kLimited ? std::max(-flux[a][c - stride[a]], 0.0) : down[a][c - stride[a]];
  };
  auto rate_of = [&](Eigen::Index c, double outflow) {
    if constexpr (kLimited) return rho[c] > 0.0 ? outflow / rho[c] : 0.0;
    return outflow;
  };
  auto cell = [&](Eigen::Index c, double& rate) {
    double change = 0.0, outflow = 0.0;
    for (int a = 0; a < d; ++a) {
      const Eigen::Index s = stride[a];
      if (c + s < m) change -= flux[a][c], outflow += out_above(a, c);
      if (c >= s) change += flux[a][c - s], outflow += out_below(a, c);
    }
    rate = rate_of(c, outflow);
    return change;
  };
  const Eigen::Index layer = stride[d - 1];  // the largest stride
  double largest_rate = 0.0;
  // The rate counts on this rank's own cells (all of them on one process; halo planes of a part
  // of a grid spread over ranks see closed faces at the part's edge).
  const Eigen::Index own_first = own_first_, own_last = own_last_;
  auto own = [&](Eigen::Index c) { return c >= own_first && c < own_last; };
  for (Eigen::Index c = 0; c < std::min(layer, m); ++c) {
    double rate = 0.0;
    drho[c] = cell(c, rate);
    if (own(c)) largest_rate = std::max(largest_rate, rate);
  }
  for (Eigen::Index c = std::max(layer, m - layer); c < m; ++c) {
    double rate = 0.0;
    drho[c] = cell(c, rate);
    if (own(c)) largest_rate = std::max(largest_rate, rate);
  }
#pragma omp parallel for simd schedule(static) reduction(max : largest_rate) if (m > kParallelCells)
  for (Eigen::Index c = layer; c < m - layer; ++c) {
    double change = 0.0, outflow = 0.0;
    for (int a = 0; a < d; ++a) {
      const Eigen::Index s = stride[a];
      change += flux[a][c - s] - flux[a][c];
      outflow += out_above(a, c) + out_below(a, c);
    }
    drho[c] = change;
    if (own(c)) largest_rate = std::max(largest_rate, rate_of(c, outflow));
  }
  return largest_rate;
}

double McKeanVlasovSolver::rhs(const State& density, State& drho) {
  const Eigen::Index m = grid_.size();
  // Over ranks: the stage's density with its halo planes from the neighbours, and W∗ρ of the own
  // planes by the distributed convolution, its halo planes exchanged the same way.
  const State* rho_pointer = &density;
  if (ranks_.spread()) {
    halo_work_ = density;
    halos_.exchange(halo_work_.data());
    rho_pointer = &halo_work_;
  }
  const State& rho = *rho_pointer;
  if (interacting_) {
    if (spread_convolution_) {
      spread_convolution_->convolve(rho.data() + own_first_, convolved_.data() + own_first_);
      halos_.exchange(convolved_.data());
    } else {
      convolution_->convolve(rho.data(), convolved_.data());
    }
    const double lambda = parameters_.lambda;
#pragma omp parallel for schedule(static) if (m > kParallelCells)
    for (Eigen::Index c = 0; c < m; ++c) phi_[c] = external_[c] + lambda * convolved_[c];
  }
  const State& phi = interacting_ ? phi_ : external_;
  double rate = 0.0;
  if (limited_) {
    limited_fluxes(phi, rho);
    rate = divergence<true>(rho, drho);
  } else {
    face_fluxes(phi, rho);
    rate = divergence<false>(rho, drho);
  }
  if (ranks_.spread()) {  // halo cells belong to the neighbours: they do not move here
    std::fill(drho.begin(), drho.begin() + own_first_, 0.0);
    std::fill(drho.begin() + own_last_, drho.end(), 0.0);
  }
  return rate;
}

double McKeanVlasovSolver::max_density() const {
  double largest = 0.0;
  for (Eigen::Index c = own_first_; c < own_last_; ++c) largest = std::max(largest, density_[c]);
  return ranks_.max(largest);
}

double McKeanVlasovSolver::stability_rate() const {
  double rate = diffusion_rate_;
  if (interacting_) {
    const double stiffness = spread_convolution_
                                 ? spread_convolution_->stiffness(parameters_.lambda)
                                 : convolution_->stiffness(parameters_.lambda);
    rate = std::max(rate, stiffness * max_density() / kSspRk3RealAxis);
  }
  return rate;
}

double McKeanVlasovSolver::stable_step() {
  const double rate = std::max(ranks_.max(rhs(density_, derivative_)), stability_rate());
  return rate > 0.0 ? 1.0 / rate : std::numeric_limits<double>::infinity();
}

double McKeanVlasovSolver::step(double t_max) {
  if (!(t_max > time_)) throw std::invalid_argument("step: t_max must exceed the current time");
  const double rate = std::max(ranks_.max(rhs(density_, derivative_)), stability_rate());
  const bool fixed = parameters_.fixed_step > 0.0;
  double dt = fixed
                  ? parameters_.fixed_step
                  : (rate > 0.0 ? parameters_.cfl / rate : std::numeric_limits<double>::infinity());
  dt = std::min(dt, t_max - time_);
  auto system = [this](const State& x, State& dxdt, double) {
    largest_stage_rate_ = std::max(largest_stage_rate_, rhs(x, dxdt));
  };
  for (int attempt = 0;; ++attempt) {
    // Forward-Euler positivity needs dt · r ≤ 1 at the current state and at every stage;
    // `rate` also holds the interaction stiffness (see stable_step).
    if (dt * rate > 1.0 && fixed)
      throw std::runtime_error("the fixed grid step " + std::to_string(dt) +
                               " exceeds the stability bound " + std::to_string(1.0 / rate) +
                               " at t = " + std::to_string(time_));
    largest_stage_rate_ = 0.0;
    stepper_.do_step(system, density_, derivative_, time_, next_, dt);
    largest_stage_rate_ = ranks_.max(largest_stage_rate_);  // every rank retries, or none
    if (dt * largest_stage_rate_ <= 1.0) break;
    if (fixed || attempt > 20)
      throw std::runtime_error(
          "the grid step " + std::to_string(dt) +
          " exceeds the stability bound of a Runge–Kutta stage at t = " + std::to_string(time_));
    dt = parameters_.cfl / largest_stage_rate_;
  }
  density_.swap(next_);
  time_ += dt;
  ++steps_;
  potential_current_ = false;
  return dt;
}

void McKeanVlasovSolver::advance_to(double t) {
  // Steps shorter than 1e-12 of the time are rounding left over from landing on t.
  while (t - time_ > 1e-12 * std::max(1.0, std::abs(t))) {
    const GovernedStep governed(governor_);
    step(t);
  }
  time_ = std::max(time_, t);
}

const McKeanVlasovSolver::State& McKeanVlasovSolver::interaction_potential() {
  if (!potential_current_) {
    if (spread_convolution_)
      spread_convolution_->convolve(density_.data() + own_first_, potential_.data() + own_first_);
    else if (interacting_)
      convolution_->convolve(density_.data(), potential_.data());
    else
      std::fill(potential_.begin(), potential_.end(), 0.0);
    potential_current_ = true;
  }
  return potential_;
}

double McKeanVlasovSolver::mass() const {
  double total = 0.0;
  for (Eigen::Index c = own_first_; c < own_last_; ++c) total += density_[c];
  return ranks_.sum(total) * grid_.cell_volume();
}

GridEnergy McKeanVlasovSolver::energy() {
  const State& w = interaction_potential();
  double terms[3] = {0.0, 0.0, 0.0};  // Σ Vρ, Σ ρ W∗ρ, Σ ρ log ρ over this rank's cells
  for (Eigen::Index c = own_first_; c < own_last_; ++c) {
    const double r = density_[c];
    terms[0] += external_[c] * r;
    terms[1] += r * w[c];
    if (r > 0.0) terms[2] += r * std::log(r);
  }
  ranks_.sum(terms, 3);
  const double v = grid_.cell_volume();
  GridEnergy e;
  e.external = terms[0] * v;
  e.interaction = terms[1] * (0.5 * parameters_.lambda * v);
  e.entropy = std::isinf(parameters_.beta) ? 0.0 : terms[2] * v / parameters_.beta;
  return e;
}

void McKeanVlasovSolver::gather_part(const State& part, State& whole) const {
  // The ranks' own planes, in rank order, are the whole grid's cells in order.
  ranks_.gather(part.data() + own_first_, static_cast<int>(own_last_ - own_first_), whole);
}

void McKeanVlasovSolver::gather_density(State& whole) const {
  gather_part(density_, whole);
}

void McKeanVlasovSolver::gather_interaction_potential(State& whole) {
  gather_part(interaction_potential(), whole);
}

}  // namespace cpm
