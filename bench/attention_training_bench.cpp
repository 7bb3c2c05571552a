// Training throughput (tokens/s: forward + backward + AdamW) of cpm's classifier against the
// PyTorch implementation of the same architecture (bench/torch_reference.py), both on the same
// cores: d_model 64, 4 heads, 2 layers, m = 64, batch 32, at L = 128 and L = 1024.
//   build/bin/attention_training_bench [--steps N]
// OMP_NUM_THREADS sets cpm's threads; the PyTorch run is given the same count.
#include <omp.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "bench/attention_bench_support.hpp"
#include "bench/instruction_set.hpp"

namespace {

double torch_tokens_per_second(const std::string& attention, int length, int steps, int threads) {
  const std::string command = "/usr/bin/python3 " + std::string(CPM_SOURCE_DIR) +
                              "/bench/torch_reference.py --bench --attention " + attention +
                              " --length " + std::to_string(length) + " --steps " +
                              std::to_string(steps) + " --threads " + std::to_string(threads) +
                              " 2>/dev/null";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  double value = 0.0;
  if (!pipe || std::fscanf(pipe.get(), "%lf", &value) != 1) return 0.0;
  return value;
}

}  // namespace

int main(int argc, char** argv) {
  cpm::print_instruction_set();
  int steps = 10;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--steps") == 0) steps = std::atoi(argv[i + 1]);
  const int threads = omp_get_max_threads(), batch = 32;
  std::printf("training tokens/s, batch %d, d_model 64, 4 heads, 2 layers, m 64, %d threads\n",
              batch, threads);
  std::printf("%-14s %6s %14s %14s %8s\n", "attention", "L", "cpm", "pytorch", "ratio");
  for (const auto& [attention, length] : {std::pair<std::string, int>{"kernel-favor", 128},
                                          {"kernel-favor", 1024},
                                          {"softmax", 128},
                                          {"softmax", 1024}}) {
    cpm::bench::TrainingStepBench bench(
        attention == "softmax" ? cpm::AttentionKind::softmax : cpm::AttentionKind::linear, batch,
        length);
    const double cpm_rate = batch * length / bench.seconds_per_step(2, steps);
    const double torch_rate = torch_tokens_per_second(attention, length, steps, threads);
    std::printf("%-14s %6d %14.0f %14.0f %8.2f\n", attention.c_str(), length, cpm_rate, torch_rate,
                torch_rate > 0 ? cpm_rate / torch_rate : 0.0);
    std::fflush(stdout);
  }
  return 0;
}
