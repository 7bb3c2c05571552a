// Training throughput (tokens/s: forward + backward + AdamW) of cpm's classifier against the
// PyTorch implementation of the same architecture (tests/torch_reference.py --model classifier),
// both on the same cores: d_model 64, 4 heads, 2 layers, m = 64, batch 32, at L = 128 and L = 1024.
// PyTorch runs with OpenBLAS and with the reference BLAS (bench/torch_anchor.hpp); cpm's achieved
// GFLOP/s and their fraction of the measured FMA throughput stand beside.
//   build/bin/attention_training_bench [--steps N]
// OMP_NUM_THREADS sets cpm's threads; the PyTorch run is given the same count.
#include <omp.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

#include "bench/attention_bench_support.hpp"
#include "bench/instruction_set.hpp"
#include "bench/training_comparison.hpp"
#include "bench/training_flops.hpp"

int main(int argc, char** argv) {
  cpm::print_instruction_set();
  int steps = 10;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--steps") == 0) steps = std::atoi(argv[i + 1]);
  if (steps < 1) {
    std::fprintf(stderr, "usage: %s [--steps N], N ≥ 1\n", argv[0]);
    return 2;
  }
  const int threads = omp_get_max_threads(), batch = 32;
  std::printf(
      "classifier training tokens/s, batch %d, d_model 64, 4 heads, 2 layers, m 64, %d threads\n",
      batch, threads);
  cpm::bench::TrainingComparison table(threads);
  for (const auto& [attention, length] : {std::pair<std::string, int>{"kernel-favor", 128},
                                          {"kernel-favor", 1024},
                                          {"softmax", 128},
                                          {"softmax", 1024}}) {
    cpm::bench::TrainingStepBench bench(
        attention == "softmax" ? cpm::AttentionKind::softmax : cpm::AttentionKind::linear, batch,
        length);
    const double rate = batch * length / bench.seconds_per_step(2, steps);
    table.row(attention, length, rate,
              cpm::bench::training_step_flops(bench.model.shape(), batch, length, 0),
              double(batch) * length, "classifier",
              "--attention " + attention + " --length " + std::to_string(length) + " --steps " +
                  std::to_string(steps));
  }
  table.print_anchors();
  return 0;
}
