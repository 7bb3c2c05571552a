// Training throughput (tokens/s: forward + backward + AdamW) of cpm's causal decoder against the
// PyTorch implementation of the same network (tests/torch_reference.py --model decoder), both on
// the same cores: the benchmark model (d_model 64, 4 heads, 2 layers, d_ff 128, m = 64) with a
// vocabulary of 8192, batch 32 of MQAR sequences holding L/16 key-value pairs (L/16 scored
// positions each), causal softmax and causal linear (favor) attention at L = 128 and L = 1024.
// PyTorch runs with OpenBLAS and with the reference BLAS (bench/torch_anchor.hpp); cpm's achieved
// GFLOP/s and their fraction of the measured FMA throughput stand beside.
//   build/bin/decoder_training_bench [--rounds R] [--steps N] [--length L] [--attention A]
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
      "decoder training tokens/s, batch %d, d_model 64, 4 heads, 2 layers, d_ff 128, m 64, "
      "vocabulary %d, L/16 scored positions per sequence, %d threads\n",
      batch, cpm::bench::kDecoderVocabulary, threads);
  cpm::bench::TrainingComparison table(threads, arguments.rounds, arguments.steps);
  for (const auto& [attention, length] : {std::pair<std::string, int>{"kernel-favor", 128},
                                          {"kernel-favor", 1024},
                                          {"softmax", 128},
                                          {"softmax", 1024}}) {
    if (!arguments.wants(attention, length)) continue;
    cpm::bench::DecoderStepBench bench(
        attention == "softmax" ? cpm::AttentionKind::softmax : cpm::AttentionKind::linear, batch,
        length);
    table.row(attention, length, bench,
              cpm::bench::training_step_flops(bench.model.shape(), batch, length, length / 16),
              double(batch) * length, "decoder",
              "--attention " + attention + " --length " + std::to_string(length) +
                  " --vocabulary " + std::to_string(cpm::bench::kDecoderVocabulary));
  }
  table.print_anchors();
  return 0;
}
