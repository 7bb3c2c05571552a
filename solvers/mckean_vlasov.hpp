#pragma once
// The mean-field PDE on a Grid (docs/model.md §1, §3):
//     ∂_t ρ = ∇·(ρ ∇φ) + β⁻¹ Δρ,   φ = V + λ W∗ρ,   zero normal flux,
// the Wasserstein gradient flow of F(ρ) = ∫Vρ + (λ/2)∬W ρρ + β⁻¹∫ρ log ρ.
//
// Space: finite volumes on the cell averages ρ_c, with the upwind flux on the discrete potential
// ξ = φ + β⁻¹ log ρ of Carrillo–Chertock–Huang: across the face between c and c + e_a,
// J = −M (ξ_{c+e_a} − ξ_c)/h_a with a face mobility M ≥ 0. Two choices of M
// (McKeanVlasovParameters::reconstruction; docs/numerics.md §3.3):
//
// first_order — the mobility that makes J the Scharfetter–Gummel (exponentially fitted) flux,
// which never evaluates log ρ:
//     J/h_a = A ρ_c − B ρ_{c+e_a},   A = B(P)/(β h_a²),  B = B(−P)/(β h_a²),
//     P = β (φ_{c+e_a} − φ_c),   B(x) = x / (eˣ − 1)   (the Bernoulli function),
// and for β = ∞ its limit, the plain upwind flux A = (−Δφ)_+/h_a², B = (Δφ)_+/h_a². Second order
// where diffusion dominates a cell (|P| ≲ 1), first order where the drift does.
//
// limited_linear — second order: ρ piecewise linear in each cell with the generalised-minmod
// slope (θ ∈ [1, 2]), ρ^E and ρ^W its values at the cell's upper and lower faces, and
//     u = −(ξ_{c+e_a} − ξ_c)/h_a,   J = u⁺ ρ^E_c + u⁻ ρ^W_{c+e_a},
// ξ from the cell averages (log ρ of a density below the smallest normal double is taken at that
// double). For β < ∞, |J| is capped at (1 + θ/2) times the Scharfetter–Gummel flux of the face:
// that keeps the outflow into vacuum, where u → ∞, at the first-order rate; it never binds on a
// drift alone (ρ^E ≤ (1 + θ/2) ρ_c) nor, for small h, on smooth densities.
//
// Properties of both (semi-discrete): mass is conserved exactly (flux form; no flux through faces
// of masked cells or the box edge); ρ ≥ 0 is preserved; and since J has the sign of −Δξ,
// dF_h/dt = Σ_faces J Δξ ≤ 0 for the discrete free energy
//     F_h(ρ) = Σ_c h^d [V_c ρ_c + (λ/2) ρ_c (W∗ρ)_c + β⁻¹ ρ_c log ρ_c].
// Discrete Gibbs states ρ ∝ e^{−βφ} make every flux vanish (exactly for first_order, to rounding
// for limited_linear).
//
// Time: method of lines with Boost.Odeint's explicit_generic_rk and the three-stage SSP
// Runge–Kutta tableau of Shu and Osher (SSP coefficient 1). Each stage is a convex combination of
// forward-Euler steps, which keep ρ ≥ 0 when dt · r_c ≤ 1 for the outflow rate r_c of every cell:
//   first_order:     r_c = Σ_faces (outflow coefficient of ρ_c) — the CFL bound for the drift and
//                    the diffusion bound (2d/(β h²) for φ = const) in one number;
//   limited_linear:  r_c = (outflow of c)/ρ_c = Σ_a [u⁺ ρ^E_c (face above) + u⁻⁻ ρ^W_c (face
//                    below)]/(h_a ρ_c), u⁻⁻ = max(−u, 0) (a face flux leaves one side only);
//                    since ρ^E + ρ^W = 2ρ_c it is at most 2 Σ_a max(u⁺ above, u⁻⁻ below)/h_a,
//                    so the Carrillo–Chertock–Huang condition dt · 2 Σ_a max_c |u_a|/h_a ≤ 1
//                    (dt ≤ h/(2 max|u|) in 1D) implies it.
// The limited flux's rate sees the diffusion only through u, O(1/h) for smooth ρ, so its step also
// respects the linear stability of the diffusion, dt · 4 Σ_a 1/(β h_a²) ≤ 2.5. The nonlocal drift
// adds a limit for both: its linearisation about ρ̄ has decay rates up to
// max(ρ̄)·λ·max_θ |θ|_h² K̂(θ), which for repulsive kernels more singular than |z|^{1−d} grows
// faster than 1/h; SSP-RK3 needs dt·rate ≤ 2.5 there (without it the energy of a 1D Riesz s = 0.5
// gas oscillates upward on fine grids). The step is cfl times the smallest bound; positivity is
// checked again on every stage and the step retried with the smaller bound if a stage needs it.
#include <boost/numeric/odeint.hpp>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "core/grid.hpp"
#include "parallel/plane_halos.hpp"
#include "parallel/rank_group.hpp"
#include "parallel/thread_governor.hpp"
#include "physics/external_potential.hpp"
#include "physics/riesz_kernel.hpp"
#include "solvers/distributed_fft_convolution.hpp"
#include "solvers/fft_convolution.hpp"

namespace cpm {

// Odeint's range algebra over the cell array, parallel only when the state is large enough to pay
// for a team of threads (odeint's own openmp_range_algebra forks on every call).
struct CellRangeAlgebra {
  template <class Op, class S0, class... S>
  static void apply(Op op, S0& s0, S&... s) {
    const std::size_t n = s0.size();
#pragma omp parallel for schedule(static) if (n > 32768)
    for (std::size_t i = 0; i < n; ++i) op(s0[i], s[i]...);
  }
  template <class S0, class Op>
  static void for_each1(S0& s0, Op op) {
    apply(op, s0);
  }
  template <class S0, class S1, class Op>
  static void for_each2(S0& s0, S1& s1, Op op) {
    apply(op, s0, s1);
  }
  template <class S0, class S1, class S2, class Op>
  static void for_each3(S0& s0, S1& s1, S2& s2, Op op) {
    apply(op, s0, s1, s2);
  }
  template <class S0, class S1, class S2, class S3, class Op>
  static void for_each4(S0& s0, S1& s1, S2& s2, S3& s3, Op op) {
    apply(op, s0, s1, s2, s3);
  }
  template <class S0, class S1, class S2, class S3, class S4, class Op>
  static void for_each5(S0& s0, S1& s1, S2& s2, S3& s3, S4& s4, Op op) {
    apply(op, s0, s1, s2, s3, s4);
  }
};

// The face values of ρ in the flux (docs/numerics.md §3.3).
enum class Reconstruction {
  first_order,  // cell averages, Scharfetter–Gummel flux on ξ
  limited_linear,  // limited piecewise-linear ρ, upwind flux with u = −∂ξ (Carrillo–Chertock–Huang)
};
const std::vector<std::string>& names(Reconstruction);  // "first_order", "second_order"

struct McKeanVlasovParameters {
  double lambda = 1.0;
  double beta = std::numeric_limits<double>::infinity();
  double cfl = 0.5;         // fraction of the positivity bound 1 / max r_c used per step, in (0, 1]
  double fixed_step = 0.0;  // > 0: use this step (it must respect the bound); 0: from the bound
  Reconstruction reconstruction = Reconstruction::limited_linear;
  double limiter_theta = 2.0;  // generalised minmod θ ∈ [1, 2] of limited_linear (1: minmod)
};

// The terms of the discrete free energy F_h.
struct GridEnergy {
  double external = 0.0;     // Σ h^d V ρ
  double interaction = 0.0;  // (λ/2) Σ h^d ρ (W∗ρ)
  double entropy = 0.0;      // β⁻¹ Σ h^d ρ log ρ (0 for β = ∞)
  double free_energy() const { return external + interaction + entropy; }
};

class McKeanVlasovSolver {
 public:
  using State = std::vector<double>;  // cell averages, Grid order; 0 in masked cells

  // `initial_density` holds M non-negative cell averages, zero in masked cells, positive mass.
  McKeanVlasovSolver(Grid grid, const ExternalPotential& potential, const InteractionKernel& kernel,
                     McKeanVlasovParameters parameters, State initial_density);
  // The grid spread over `ranks` (docs/distributed.md §7): each rank solves its slab of planes
  // along the last axis, with two halo planes of ρ and W∗ρ from each neighbour before every
  // right-hand side, W∗ρ by the distributed convolution, and the step bound, the stage check, the
  // mass and the energy reduced over the ranks (collective calls). grid() is then the rank's part
  // (its planes and halos) and density() holds the part; whole_grid() and gather_density() give
  // the whole. `initial_density` (and set_state's) holds the whole grid. Throws
  // std::invalid_argument when a rank would hold fewer than two planes.
  McKeanVlasovSolver(Grid grid, const ExternalPotential& potential, const InteractionKernel& kernel,
                     McKeanVlasovParameters parameters, State initial_density, RankGroup ranks);

  // One SSP-RK3 step of the size given by the bound (or the fixed step), ending at most at
  // t_max; returns the step taken.
  double step(double t_max = std::numeric_limits<double>::infinity());
  void advance_to(double t);

  double time() const { return time_; }
  std::uint64_t steps_taken() const { return steps_; }
  const State& density() const { return density_; }
  // Replaces the state (for restarts): the density (same rules as the initial density), the
  // clock and the step counter.
  void set_state(State density, double time, std::uint64_t steps);

  // W∗ρ (without λ) at every cell centre, for the current density.
  const State& interaction_potential();
  const State& external_potential() const { return external_; }  // V at cell centres
  double mass() const;
  GridEnergy energy();
  // The step bound of the current density, 1 / max(max_c r_c, max(ρ) · stiffness / 2.5, and for
  // limited_linear 4 Σ_a 1/(β h_a²) / 2.5): the forward-Euler positivity bound and the stability
  // of SSP-RK3 on the fastest interaction mode (FftConvolution::stiffness) and diffusion mode;
  // +inf if every rate vanishes.
  double stable_step();

  // The semi-discrete right-hand side dρ/dt (arrays of M values); returns max_c r_c.
  double rhs(const State& density, State& derivative);

  const Grid& grid() const { return grid_; }
  const Grid& whole_grid() const { return whole_; }
  // This rank's own planes of the whole grid along its last axis, [first_plane(), first_plane() +
  // plane_count()) (every plane on one process), and their cells' density (density() without the
  // halo planes).
  long first_plane() const { return (part_offset_ + own_first_) / own_plane_size(); }
  long plane_count() const { return (own_last_ - own_first_) / own_plane_size(); }
  const double* own_density() const { return density_.data() + own_first_; }
  // The whole grid's density (W∗ρ) on the first rank (collective; the density itself on one
  // process), and nothing elsewhere.
  void gather_density(State& whole) const;
  void gather_interaction_potential(State& whole);
  const McKeanVlasovParameters& parameters() const { return parameters_; }

 private:
  using Algebra = CellRangeAlgebra;
  using Stepper =
      boost::numeric::odeint::explicit_generic_rk<3, 3, State, double, State, double, Algebra,
                                                  boost::numeric::odeint::default_operations>;

  void check_density(const State& density) const;
  double stability_rate() const;
  void face_fluxes(const State& phi, const State& density);
  void limited_fluxes(const State& phi, const State& density);
  template <bool kLimited>
  double divergence(const State& density, State& derivative) const;

  void gather_part(const State& part, State& whole) const;
  Eigen::Index own_plane_size() const { return whole_.stride(whole_.dim() - 1); }
  double max_density() const;

  Grid whole_, grid_;  // the whole grid and this rank's part (the same on one process)
  RankGroup ranks_;
  Eigen::Index own_first_ = 0, own_last_ = 0;  // this rank's cells within the part
  Eigen::Index part_offset_ = 0;               // the part's first cell within the whole grid
  PlaneHalos halos_;
  std::unique_ptr<DistributedFftConvolution> spread_convolution_;  // over ranks, when interacting
  State halo_work_;                                                // a stage's ρ with fresh halos
  McKeanVlasovParameters parameters_;
  bool interacting_;
  std::unique_ptr<FftConvolution> convolution_;  // null when λ W = 0
  Stepper stepper_;
  State external_;  // V at cell centres
  State density_, next_, derivative_;
  State convolved_, phi_;  // work buffers of rhs()
  State potential_;        // W∗ρ of density_, valid when potential_current_
  bool potential_current_ = false;
  bool limited_;  // parameters_.reconstruction == limited_linear
  // Per axis, at the face above c, 0 on closed faces: 1/(β h²) (1/h² for β = ∞) for the
  // first-order flux, 1/h for the limited one.
  std::vector<State> face_weight_;
  // First order, per axis, at the face above c: the outflow coefficients A of ρ_c and B of
  // ρ_{c+e_a} (unused by the limited flux).
  std::vector<State> outflow_up_, outflow_down_;
  std::vector<State> flux_;    // J/h per axis, at the face above c
  State xi_, half_jump_;       // work buffers of limited_fluxes(): ξ, and ½ h ∂ρ per axis
  double diffusion_rate_ = 0;  // limited: linear stability rate of the diffusion, see step bound
  double time_ = 0.0;
  std::uint64_t steps_ = 0;
  double largest_stage_rate_ = 0.0;
  ThreadGovernor governor_;  // each step on the thread count the machine's load favours
};

}  // namespace cpm
