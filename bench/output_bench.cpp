// Cost of writing one output frame of N particles in d = 2: the plain CSV snapshot (baseline, the
// format `cpm run` wrote before), an H5MD frame (positions + 8 observables + checkpoint, flushed)
// and a ParaView frame (.vtp with force and local density, .pvd rewritten). Prints ms per frame
// and the ratio to CSV.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iomanip>
#include <string>

#include "bench/instruction_set.hpp"
#include "io/h5md_writer.hpp"
#include "viz/vtk_writer.hpp"

namespace {

double ms_per_call(int calls, const std::function<void(int)>& f) {
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < calls; ++i) f(i);
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
             .count() /
         calls;
}

}  // namespace

int main() {
  cpm::print_instruction_set();
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "cpm_output_bench";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const int frames = 10;
  std::printf("%10s %12s %12s %12s %10s %10s\n", "N", "csv ms", "h5md ms", "vtk ms", "h5md/csv",
              "vtk/csv");
  for (const Eigen::Index n : {10000, 100000, 1000000}) {
    const Eigen::MatrixXd x = Eigen::MatrixXd::Random(n, 2);
    const Eigen::MatrixXd force = Eigen::MatrixXd::Random(n, 2);
    const Eigen::VectorXd rho = Eigen::VectorXd::Random(n);
    const double csv = ms_per_call(frames, [&](int f) {
      std::ofstream out(dir / ("particles_" + std::to_string(f) + ".csv"));
      out << std::setprecision(17) << "x0,x1\n";
      for (Eigen::Index k = 0; k < n; ++k) out << x(k, 0) << ',' << x(k, 1) << '\n';
    });
    cpm::H5mdWriter h5md((dir / ("run_" + std::to_string(n) + ".h5")).string(), cpm::H5mdHeader{},
                         cpm::ParameterSet{}, n, 2, true);
    const std::vector<std::string> names = {"e_ext", "e_int", "e_tot", "radius",
                                            "m0",    "m1",    "c00",   "c11"};
    const double h5 = ms_per_call(frames, [&](int f) {
      h5md.write_positions(f, 0.1 * f, x);
      h5md.write_observables(f, 0.1 * f, names, std::vector<double>(names.size(), 0.5 * f));
      h5md.write_checkpoint({f, 0.1 * f, 1, 0, {}});
    });
    cpm::VtkSeriesWriter vtk((dir / ("vtk_" + std::to_string(n))).string());
    const double vt = ms_per_call(frames, [&](int f) {
      vtk.write_frame(
          0.1 * f, x,
          {cpm::NamedArray::vector("force", force), cpm::NamedArray::scalar("local_density", rho)});
    });
    std::printf("%10ld %12.2f %12.2f %12.2f %10.3f %10.3f\n", static_cast<long>(n), csv, h5, vt,
                h5 / csv, vt / csv);
  }
  fs::remove_all(dir);
}
