// Training throughput (tokens/s: forward + backward + AdamW) of cpm's classifier against the
// PyTorch implementation of the same architecture (tests/torch_reference.py --model classifier),
// both on the same cores: d_model 64, 4 heads, 2 layers, m = 64, batch 32, at L = 128 and L = 1024.
// PyTorch runs with OpenBLAS and with the reference BLAS (bench/torch_anchor.hpp); cpm's achieved
// GFLOP/s and their fraction of the measured FMA throughput stand beside.
//   build/bin/attention_training_bench [--rounds R] [--steps N] [--length L] [--attention A]
// OMP_NUM_THREADS sets cpm's threads; the PyTorch run is given the same count.
#include <omp.h>

#include <cstdio>
#include <string>
#include <utility>

#include "bench/attention_bench_support.hpp"
#include "bench/instruction_set.hpp"
#include "bench/training_comparison.hpp"
#include "bench/training_flops.hpp"

int main(int argc, char** argv) {
  cpm::print_instruction_set();
  cpm::bench::ComparisonArguments arguments;
  if (!cpm::bench::read_comparison_arguments(argc, argv, arguments)) return 2;
  const int threads = omp_get_max_threads(), batch = 32;
  std::printf(
      "classifier training tokens/s, batch %d, d_model 64, 4 heads, 2 layers, m 64, %d threads\n",
      batch, threads);
  cpm::bench::TrainingComparison table(threads, arguments.rounds, arguments.steps);
  for (const auto& [attention, length] : {std::pair<std::string, int>{"kernel-favor", 128},
                                          {"kernel-favor", 1024},
                                          {"softmax", 128},
                                          {"softmax", 1024}}) {
    if (!arguments.wants(attention, length)) continue;
    cpm::bench::TrainingStepBench bench(
        attention == "softmax" ? cpm::AttentionKind::softmax : cpm::AttentionKind::linear, batch,
        length);
    table.row(attention, length, bench,
              cpm::bench::training_step_flops(bench.model.shape(), batch, length, 0),
              double(batch) * length, "classifier",
              "--attention " + attention + " --length " + std::to_string(length));
  }
  table.print_anchors();
  return 0;
}
