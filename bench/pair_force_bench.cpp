// Pair-force throughput of the blocked SIMD sum ("direct") against the plain scalar reference
// loop in the same process, and as a fraction of the machine's measured FMA throughput.
//
// Counting: one "pair interaction" is one ordered pair (k, l), k ≠ l, so an evaluation of all
// forces is N(N − 1) pair interactions, whichever way it is computed (the blocked sum evaluates
// each unordered pair once and applies it to both particles).
//
// Then the particle-mesh sum for N = 10⁶ in 2D on a 512² grid, plain and with the near-field
// correction for each near range of --mesh-near: time per evaluation and the error against the
// direct sum on a subsample of rows (--mesh-only: this part alone; --mesh-n: another N).
//
// Next to the scalar reference loop ("ratio"), a plain OpenMP + `omp simd` loop over all ordered
// pairs (bench/plain_pair_sum.cpp, compiled with -ffast-math so that GCC vectorises all of it;
// "x plain": the blocked sum's rate over its rate), up to --plain-max-n particles.
//
//   pair_force_bench [--quick] [--reference-max-n N] [--plain-max-n N]
//                    [--sizes "2:2000,10000;3:10000"] [--csv]
//                    [--no-mesh] [--mesh-only] [--mesh-n N] [--mesh-near "-1,2"]
#include <omp.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "bench/instruction_set.hpp"
#include "bench/machine_peak.hpp"
#include "bench/plain_pair_sum.hpp"
#include "core/random_stream.hpp"
#include "solvers/blocked_pair_sum.hpp"
#include "solvers/particle_mesh_sum.hpp"
#include "solvers/simd_math.hpp"

namespace {

using cpm::InteractionKernel;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

Eigen::MatrixXd uniform_points(Eigen::Index n, int d) {
  Eigen::MatrixXd x(n, d);
  for (Eigen::Index k = 0; k < n; ++k) {
    cpm::RandomStream s(7, cpm::RandomPurpose::test_inputs, 0, k);
    for (int a = 0; a < d; ++a) x(k, a) = 2.0 * s.uniform() - 1.0;
  }
  return x;
}

// Best wall time and best process CPU time (all threads) of one force evaluation, over batches
// of evaluations lasting at least 0.2 s each (the CPU time of a thread running on another core
// is only brought up to date at scheduler ticks, so shorter windows would be biased), repeated
// until `budget` seconds have passed (at least `min_reps` batches). On a machine shared with
// other work the CPU time is the steadier measure: the time slices lost to other processes do
// not count, the work itself (and any waiting a thread spins through) does.
struct Timing {
  double wall = 1e300, cpu = 1e300;
};
Timing best_time(cpm::InteractionSum& sum, const Eigen::MatrixXd& x, double budget,
                 int min_reps = 2) {
  Eigen::MatrixXd g(x.rows(), x.cols());
  Timing best;
  const auto start = Clock::now();
  for (int rep = 0; rep < min_reps || seconds_since(start) < budget; ++rep) {
    const auto t0 = Clock::now();
    const double c0 = cpm::bench::cpu_seconds(CLOCK_PROCESS_CPUTIME_ID);
    int count = 0;
    do {
      sum.compute(x, g, nullptr);
      ++count;
    } while (seconds_since(t0) < 0.2);
    best.cpu = std::min(best.cpu, (cpm::bench::cpu_seconds(CLOCK_PROCESS_CPUTIME_ID) - c0) / count);
    best.wall = std::min(best.wall, seconds_since(t0) / count);
  }
  return best;
}

// Core clock from a chain of dependent integer additions (one per cycle on x86), timed in the
// thread's own CPU time so that other processes on the machine do not bias it. Four additions
// per iteration: with one, Zen 3 took two cycles per iteration (the loop's own branch) and the
// clock read half its value.
double measured_clock_hz() {
  const long iterations = 100'000'000;
  double best = 1e300;
  for (int rep = 0; rep < 10; ++rep) {
    long v = 0;
    const double t0 = cpm::bench::cpu_seconds(CLOCK_THREAD_CPUTIME_ID);
    for (long i = 0; i < iterations; ++i)
      asm volatile("add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0" : "+r"(v));
    best = std::min(best, cpm::bench::cpu_seconds(CLOCK_THREAD_CPUTIME_ID) - t0);
  }
  return 4.0 * iterations / best;
}

struct Case {
  std::string label;
  InteractionKernel kernel;
  // Floating-point operations per unordered pair (one SIMD lane) in the blocked loop, counting
  // an FMA as 2 and an estimate instruction as 1; see bench/results/pair_forces.md.
  double flops_per_pair(int d) const {
    const double geometry = d /*sub*/ + 2.0 * d /*r² fma*/ + 4.0 * d /*acc + update fma*/;
    return geometry + evaluator_flops;
  }
  double evaluator_flops;
};

struct Sizes {
  int d;
  std::vector<long> n;
};

// "2:2000,10000;3:10000" → {{2, {2000, 10000}}, {3, {10000}}}.
std::vector<Sizes> parse_sizes(const std::string& spec) {
  std::vector<Sizes> out;
  std::size_t start = 0;
  while (start < spec.size()) {
    std::size_t end = spec.find(';', start);
    if (end == std::string::npos) end = spec.size();
    const std::string group = spec.substr(start, end - start);
    const std::size_t colon = group.find(':');
    Sizes s{std::stoi(group.substr(0, colon)), {}};
    std::size_t p = colon + 1;
    while (p < group.size()) {
      std::size_t q = group.find(',', p);
      if (q == std::string::npos) q = group.size();
      s.n.push_back(std::stol(group.substr(p, q - p)));
      p = q + 1;
    }
    out.push_back(s);
    start = end + 1;
  }
  return out;
}

// The particle-mesh sum for n points uniform in [−1, 1]² (log kernel, default grid) for each
// near range in `near` (−1: the plain mesh), against the direct sum Σ_l ∇W(x_k − x_l) over all
// n for `sample` rows.
void mesh_benchmark(long n, int sample, const std::vector<int>& near) {
  const Eigen::MatrixXd x = uniform_points(n, 2);
  const InteractionKernel kernel = InteractionKernel::log();
  const Eigen::VectorXi cells = cpm::default_mesh_cells(n, 2);
  const long stride = n / sample;
  Eigen::MatrixXd exact(sample, 2);
#pragma omp parallel for schedule(dynamic, 16)
  for (int r = 0; r < sample; ++r) {
    const long k = r * stride;
    double gx = 0.0, gy = 0.0;
    for (long l = 0; l < n; ++l) {
      if (l == k) continue;
      const double zx = x(k, 0) - x(l, 0), zy = x(k, 1) - x(l, 1);
      const double factor = cpm::RieszLog{}.gradient_factor(zx * zx + zy * zy);
      gx += factor * zx;
      gy += factor * zy;
    }
    exact.row(r) << gx, gy;
  }
  std::printf(
      "\nparticle-mesh, log kernel, d = 2, N = %ld uniform in [-1,1]^2, grid %dx%d "
      "(2 margin cells per side); error vs direct sum on %d rows; time: best of 5, %d threads\n",
      n, cells[0], cells[1], sample, omp_get_max_threads());
  std::printf("%6s %10s %10s %10s %12s %12s\n", "near", "set-up s", "wall s", "cpu s", "rel. error",
              "worst row");
  for (int near_cells : near) {
    auto t0 = Clock::now();
    auto mesh = cpm::make_particle_mesh_sum(kernel, Eigen::Vector2d(-1, -1), Eigen::Vector2d(1, 1),
                                            cells, near_cells);
    const double setup = seconds_since(t0);
    Eigen::MatrixXd g(n, 2);
    double best = 1e300, best_cpu = 1e300;
    for (int rep = 0; rep < 5; ++rep) {
      t0 = Clock::now();
      const double c0 = cpm::bench::cpu_seconds(CLOCK_PROCESS_CPUTIME_ID);
      mesh->compute(x, g, nullptr);
      best_cpu = std::min(best_cpu, cpm::bench::cpu_seconds(CLOCK_PROCESS_CPUTIME_ID) - c0);
      best = std::min(best, seconds_since(t0));
    }
    Eigen::MatrixXd approx(sample, 2);
    for (int r = 0; r < sample; ++r) approx.row(r) = g.row(r * stride);
    const double error = (approx - exact).norm() / exact.norm();
    double worst_row = 0.0;
    for (int r = 0; r < sample; ++r)
      worst_row = std::max(worst_row, (approx.row(r) - exact.row(r)).norm() / exact.row(r).norm());
    std::printf("%6d %10.3f %10.4f %10.4f %12.3e %12.3e\n", near_cells, setup, best, best_cpu,
                error, worst_row);
    std::fflush(stdout);
  }
}

// "-1,2" → {−1, 2}.
std::vector<int> parse_ints(const std::string& spec) {
  std::vector<int> out;
  for (std::size_t p = 0; p < spec.size();) {
    std::size_t q = spec.find(',', p);
    if (q == std::string::npos) q = spec.size();
    out.push_back(std::stoi(spec.substr(p, q - p)));
    p = q + 1;
  }
  return out;
}

}  // namespace

const char* const kUsage =
    "usage: pair_force_bench [--quick] [--reference-max-n N] [--plain-max-n N]\n"
    "                        [--sizes \"2:2000,10000;3:10000\"] [--csv] [--no-mesh] [--mesh-only]\n"
    "                        [--mesh-n N] [--mesh-near \"-1,2\"]\n";

int main(int argc, char** argv) {
  bool quick = false, csv = false, mesh = true, mesh_only = false;
  long reference_max_n = 100000, plain_max_n = 100000;
  std::string size_spec, near_spec = "-1," + std::to_string(cpm::default_near_cells(2));
  long mesh_n = 0;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick"))
      quick = true;
    else if (!std::strcmp(argv[i], "--csv"))
      csv = true;
    else if (!std::strcmp(argv[i], "--no-mesh"))
      mesh = false;
    else if (!std::strcmp(argv[i], "--reference-max-n") && i + 1 < argc)
      reference_max_n = std::atol(argv[++i]);
    else if (!std::strcmp(argv[i], "--plain-max-n") && i + 1 < argc)
      plain_max_n = std::atol(argv[++i]);
    else if (!std::strcmp(argv[i], "--sizes") && i + 1 < argc)
      size_spec = argv[++i];
    else if (!std::strcmp(argv[i], "--mesh-near") && i + 1 < argc)
      near_spec = argv[++i];
    else if (!std::strcmp(argv[i], "--mesh-n") && i + 1 < argc)
      mesh_n = std::atol(argv[++i]);
    else if (!std::strcmp(argv[i], "--mesh-only"))
      mesh_only = true;
    else {
      const bool help = !std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h");
      if (!help)
        std::fprintf(stderr, "pair_force_bench: unknown or incomplete argument %s\n", argv[i]);
      std::fputs(kUsage, help ? stdout : stderr);
      return help ? 0 : 2;
    }
  }
  cpm::print_instruction_set();
  if (mesh_only) {
    mesh_benchmark(mesh_n > 0 ? mesh_n : 1000000, 2000, parse_ints(near_spec));
    return 0;
  }
  const int threads = omp_get_max_threads();
  const double clock = measured_clock_hz();
  const double fma_core = cpm::bench::measured_fma_flops_per_core<double>();
  // The reference for %peak is the FMA throughput measured here (independent FMA chains on every
  // SIMD lane), not a nominal 16 flop/cycle × clock: the dependent-add clock probe is fooled by
  // CPUs that fuse or eliminate the adds (it printed 14 GHz on an AVX-512 machine whose FMA probe
  // measured 67 GFLOP/s per core), so the clock is shown for information only.
  const double core_peak = fma_core;
  const bool clock_plausible = clock > 0.5e9 && clock < 6.5e9;
  std::printf("threads %d, SIMD %s (%zu doubles), core clock %.2f GHz (dependent-add chain%s)\n",
              threads, xsimd::default_arch::name(), cpm::SimdDouble::size, clock * 1e-9,
              clock_plausible ? "" : "; implausible, not used");
  std::printf(
      "peak: measured FMA throughput %.1f GFLOP/s per core, %.1f on %d cores (%%peak below)\n",
      fma_core * 1e-9, threads * fma_core * 1e-9, threads);
  std::printf(
      "wall: as measured (machine shared: other processes may take time slices); "
      "cpu: N(N-1) / (process CPU seconds / %d), the rate on %d otherwise idle cores\n\n",
      threads, threads);

  // Evaluator flops per lane (a fused multiply-add counts 2, an estimate, division or square
  // root 1). AVX-512: reciprocal = estimate + 4 fma (9); reciprocal_sqrt = estimate + 6 fma +
  // 2 mul (15); the generic power (SimdPower, solvers/simd_math.hpp) = 3 exponent, mantissa
  // and index operations + 3 table lookups + 1 fms + 7 fma + 1 mul + 1 round + 1 fms + 1 add +
  // 1 fma + 3 add/sub (the 1/16 rounding) + 6 fma + 1 mul + 1 add + 1 scalef = 47. Below
  // AVX-512: reciprocal = 1 division; s = 1/2 = 2 square roots + 1 mul + 1 division + 1 mul (for
  // the value; 4 without); the AVX2 power = 22 fma + 6 mul + 7 add/sub + 1 division = 58 (its
  // integer operations not counted).
#if defined(__AVX512F__)
  const double reciprocal_flops = 9.0, quarter_flops = 2 * 15.0 + 1 + 3, power_flops = 47.0;
#else
  const double reciprocal_flops = 1.0, quarter_flops = 4.0, power_flops = 58.0;
#endif
  const std::vector<Case> cases = {
      {"log", InteractionKernel::log(), reciprocal_flops},
      {"riesz s=0.5", InteractionKernel::power(0.5), quarter_flops},
      {"riesz s=1.3", InteractionKernel::power(1.3), power_flops},
  };
  std::vector<Sizes> sizes =
      quick ? std::vector<Sizes>{{2, {2000, 10000}}}
            : std::vector<Sizes>{{1, {10000, 100000}},
                                 {2, {2000, 5000, 10000, 20000, 50000, 100000}},
                                 {3, {10000, 100000}}};
  if (!size_spec.empty()) sizes = parse_sizes(size_spec);

  std::printf("%-2s %-12s %7s %10s %12s %12s %12s %8s %12s %8s %8s %7s\n", "d", "kernel", "N",
              "wall s", "wall pairs/s", "cpu pairs/s", "ref cpu p/s", "ratio", "plain cpu p/s",
              "x plain", "GFLOP/s", "%peak");
  for (const Sizes& s : sizes) {
    for (const Case& c : cases) {
      auto fast = cpm::make_blocked_pair_sum(c.kernel);
      auto reference = cpm::make_reference_pair_sum(c.kernel);
      auto plain = make_plain_simd_pair_sum(c.kernel.s);
      for (long n : s.n) {
        const Eigen::MatrixXd x = uniform_points(n, s.d);
        const double pairs = double(n) * double(n - 1);
        const Timing t = best_time(*fast, x, quick ? 0.3 : 1.0);
        const double cpu_rate = pairs / (t.cpu / threads);
        const double gflops = 0.5 * pairs * c.flops_per_pair(s.d) / (t.cpu / threads) * 1e-9;
        std::printf("%-2d %-12s %7ld %10.4g %12.3e %12.3e", s.d, c.label.c_str(), n, t.wall,
                    pairs / t.wall, cpu_rate);
        if (n <= reference_max_n) {
          const Timing r = best_time(*reference, x, 0.0, n > 20000 ? 1 : 2);
          const double ref_rate = pairs / (r.cpu / threads);
          std::printf(" %12.3e %8.1f", ref_rate, cpu_rate / ref_rate);
        } else {
          std::printf(" %12s %8s", "-", "-");
        }
        if (n <= plain_max_n) {
          const Timing r = best_time(*plain, x, quick ? 0.3 : 1.0, n > 20000 ? 1 : 2);
          const double plain_rate = pairs / (r.cpu / threads);
          std::printf(" %12.3e %8.2f", plain_rate, cpu_rate / plain_rate);
        } else {
          std::printf(" %12s %8s", "-", "-");
        }
        std::printf(" %8.1f %6.1f%%\n", gflops, 100.0 * gflops * 1e9 / (threads * core_peak));
        if (csv) std::printf("csv,%d,%s,%ld,%.6e\n", s.d, c.label.c_str(), n, cpu_rate);
        std::fflush(stdout);
      }
    }
  }
  if (mesh && !csv)
    mesh_benchmark(mesh_n > 0 ? mesh_n : quick ? 200000 : 1000000, 2000, parse_ints(near_spec));
  return 0;
}
