#pragma once
// PyTorch as the anchor of the training benchmarks: the reference script (tests/torch_reference.py
// --model <model> --serve) run as a child process on the same cores, once per BLAS behind its
// matrix products. Debian's PyTorch calls whichever libblas.so.3 the loader finds; LD_LIBRARY_PATH
// picks OpenBLAS on its own threads or on OpenMP's (installed by `make bench`:
// libopenblas0-pthread, libopenblas0-openmp) or the reference BLAS. The
// script says what it runs on (tests/torch_blas.py), which the benchmarks print below the table.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace cpm::bench {

struct TorchBlas {
  std::string name;         // the column's heading
  std::string environment;  // of the PyTorch process: LD_LIBRARY_PATH and OpenBLAS's settings
  std::string probe;        // a directory that exists when this BLAS is installed
};

// Four PyTorch runs:
// - OpenBLAS as installed: its threads beside PyTorch's, the kernels of its CPU detection;
// - OpenBLAS tuned, the fastest setting found on its own threads (bench/results/transformer_speed.md): one BLAS
//   thread, so that it never competes with PyTorch's own threads; where the CPU has AVX-512,
//   OpenBLAS's SkylakeX kernels and ATen's AVX-512 kernels, which neither picks by itself on
//   every such CPU; and glibc's malloc keeping the memory PyTorch frees (no mmap'ed blocks, no
//   trimming), so that a step's tensors reuse mapped pages instead of faulting in thousands of
//   fresh ones per step;
// - the same tuning with OpenBLAS built on OpenMP, whose products run on PyTorch's own OpenMP
//   threads: both of them, without a second team competing for the cores (neither tuned build
//   is faster in every row, so the benchmarks run both);
// - the reference BLAS.
inline std::vector<TorchBlas> torch_blas_choices() {
  const std::string lib = CPM_LIBRARY_DIR, openblas = lib + "/openblas-pthread",
                    openmp = lib + "/openblas-openmp";
  __builtin_cpu_init();
  const std::string tuned =
      std::string(__builtin_cpu_supports("avx512f")
                      ? "OPENBLAS_CORETYPE=SkylakeX ATEN_CPU_CAPABILITY=avx512 "
                      : "") +
      "MALLOC_MMAP_MAX_=0 MALLOC_TRIM_THRESHOLD_=17179869184";
  return {
      {"OpenBLAS", "LD_LIBRARY_PATH=" + openblas, openblas},
      {"OpenBLAS*", "LD_LIBRARY_PATH=" + openblas + " OPENBLAS_NUM_THREADS=1 " + tuned, openblas},
      {"OpenMP-OpenBLAS*", "LD_LIBRARY_PATH=" + openmp + " " + tuned, openmp},
      {"reference", "LD_LIBRARY_PATH=" + lib + "/blas:" + lib + "/lapack", lib + "/blas"}};
}

// The reference script (`/usr/bin/python3 <source>/tests/torch_reference.py --model <model>
// --serve <arguments>`, `model` classifier or decoder) as a child process with the BLAS `blas`,
// built and warmed up once; `tokens_per_second(n)` has it run n training steps while this
// process waits, so that cpm's and PyTorch's blocks of steps can alternate in time.
class TorchServer {
 public:
  TorchServer(const std::string& model, const std::string& arguments, const TorchBlas& blas) {
    struct stat info;
    if (stat(blas.probe.c_str(), &info) != 0) {
      ran_on_ = blas.name + " not installed (make bench installs it)";
      return;
    }
    int to_child[2], from_child[2];
    if (pipe(to_child) != 0 || pipe(from_child) != 0) return;
    const std::string command = "exec env " + blas.environment + " /usr/bin/python3 " +
                                std::string(CPM_SOURCE_DIR) + "/tests/torch_reference.py --model " +
                                model + " --serve " + arguments + " 2>/dev/null";
    child_ = fork();
    if (child_ == 0) {
      dup2(to_child[0], STDIN_FILENO);
      dup2(from_child[1], STDOUT_FILENO);
      for (int fd : {to_child[0], to_child[1], from_child[0], from_child[1]}) close(fd);
      execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    close(to_child[0]);
    close(from_child[1]);
    requests_ = fdopen(to_child[1], "w");
    answers_ = fdopen(from_child[0], "r");
    const std::string first = read_line();
    ready_ = !first.empty();
    ran_on_ = ready_ ? first : "PyTorch run failed";
  }

  TorchServer(const TorchServer&) = delete;
  TorchServer& operator=(const TorchServer&) = delete;

  ~TorchServer() {  // end of input ends the script
    if (requests_) std::fclose(requests_);
    if (answers_) std::fclose(answers_);
    if (child_ > 0) waitpid(child_, nullptr, 0);
  }

  bool ready() const { return ready_; }
  const std::string& ran_on() const { return ran_on_; }

  // Tokens/s of `steps` training steps; 0 if the child failed.
  double tokens_per_second(int steps) {
    if (!ready_) return 0.0;
    std::fprintf(requests_, "%d\n", steps);
    std::fflush(requests_);
    const std::string answer = read_line();
    ready_ = !answer.empty();
    return ready_ ? std::strtod(answer.c_str(), nullptr) : 0.0;
  }

 private:
  std::string read_line() {
    char line[512] = {0};
    if (!answers_ || !std::fgets(line, sizeof line, answers_)) return {};
    std::string text(line);
    while (!text.empty() && text.back() == '\n') text.pop_back();
    return text;
  }

  pid_t child_ = -1;
  FILE* requests_ = nullptr;
  FILE* answers_ = nullptr;
  bool ready_ = false;
  std::string ran_on_;
};

}  // namespace cpm::bench
