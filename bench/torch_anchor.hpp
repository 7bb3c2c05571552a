#pragma once
// PyTorch as the anchor of the training benchmarks: the reference script (tests/torch_reference.py
// --model <model> --bench) run as a child process on the same cores, once per BLAS behind its
// matrix products. Debian's PyTorch calls whichever libblas.so.3 the loader finds; LD_LIBRARY_PATH
// picks OpenBLAS (installed by `make bench`: libopenblas0-pthread) or the reference BLAS. The
// script prints its tokens/s and what it ran on (tests/torch_blas.py), which the benchmarks print
// below the table.
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace cpm::bench {

struct TorchBlas {
  std::string name;         // the column's heading
  std::string environment;  // of the PyTorch process: LD_LIBRARY_PATH and OpenBLAS's settings
  std::string probe;        // a directory that exists when this BLAS is installed
};

// OpenBLAS as installed (its threads beside PyTorch's, kernels of its CPU detection); OpenBLAS
// tuned (one BLAS thread, so that it never competes with PyTorch's own threads, and its
// SkylakeX kernels where the CPU has AVX-512, which 0.3.21 does not detect on every such CPU:
// the fastest setting found, bench/RESULTS.md); the reference BLAS.
inline std::vector<TorchBlas> torch_blas_choices() {
  const std::string lib = CPM_LIBRARY_DIR, openblas = lib + "/openblas-pthread";
  __builtin_cpu_init();
  const std::string tuned =
      std::string("OPENBLAS_NUM_THREADS=1") +
      (__builtin_cpu_supports("avx512f") ? " OPENBLAS_CORETYPE=SkylakeX" : "");
  return {{"OpenBLAS", "LD_LIBRARY_PATH=" + openblas, openblas},
          {"OpenBLAS*", "LD_LIBRARY_PATH=" + openblas + " " + tuned, openblas},
          {"reference", "LD_LIBRARY_PATH=" + lib + "/blas:" + lib + "/lapack", lib + "/blas"}};
}

struct TorchRate {
  double tokens_per_second = 0.0;  // 0: the run failed or the BLAS is not installed
  std::string ran_on;              // e.g. "OpenBLAS 0.3.21 (kernels Haswell, 2 threads); ATen …"
};

// Runs `/usr/bin/python3 <source>/tests/torch_reference.py --model <model> --bench <arguments>`
// with the BLAS `blas`; `model` is classifier or decoder.
inline TorchRate run_torch(const std::string& model, const std::string& arguments,
                           const TorchBlas& blas) {
  struct stat info;
  if (stat(blas.probe.c_str(), &info) != 0)
    return {0.0, blas.name + " not installed (make bench installs it)"};
  const std::string command = blas.environment + " /usr/bin/python3 " +
                              std::string(CPM_SOURCE_DIR) + "/tests/torch_reference.py --model " +
                              model + " --bench " + arguments + " 2>/dev/null";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  TorchRate rate;
  char line[512] = {0};
  if (!pipe || !std::fgets(line, sizeof line, pipe.get())) return {0.0, "PyTorch run failed"};
  char* tab = nullptr;
  rate.tokens_per_second = std::strtod(line, &tab);
  if (tab && *tab == '\t') rate.ran_on = std::string(tab + 1);
  while (!rate.ran_on.empty() && rate.ran_on.back() == '\n') rate.ran_on.pop_back();
  return rate;
}

}  // namespace cpm::bench
