// Training throughput (tokens/s: forward + backward + AdamW) of cpm's causal decoder against the
// PyTorch implementation of the same network (bench/torch_decoder_reference.py), both on the same
// cores: the benchmark model (d_model 64, 4 heads, 2 layers, d_ff 128, m = 64) with a vocabulary
// of 8192, batch 32 of MQAR sequences holding L/16 key-value pairs (L/16 scored positions each),
// causal softmax and causal linear (favor) attention at L = 128 and L = 1024.
//   build/bin/decoder_training_bench [--steps N]
// OMP_NUM_THREADS sets cpm's threads; the PyTorch run is given the same count. PyTorch's matrix
// products go to the BLAS that libblas.so.3 resolves to (Debian's python3-torch: netlib's
// reference BLAS unless OpenBLAS is installed), so the PyTorch figure depends on it; an
// LD_LIBRARY_PATH holding another libblas.so.3 reaches the PyTorch child process.
#include <omp.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <utility>

#include "bench/attention_bench_support.hpp"
#include "bench/instruction_set.hpp"
#include "learning/recall_tasks.hpp"
#include "transformer/adamw.hpp"
#include "transformer/transformer_decoder.hpp"

namespace {

constexpr int kVocabulary = 8192;

double torch_tokens_per_second(const std::string& attention, int length, int steps, int threads) {
  const std::string command = "/usr/bin/python3 " + std::string(CPM_SOURCE_DIR) +
                              "/bench/torch_decoder_reference.py --bench --attention " + attention +
                              " --length " + std::to_string(length) + " --vocabulary " +
                              std::to_string(kVocabulary) + " --steps " + std::to_string(steps) +
                              " --threads " + std::to_string(threads) + " 2>/dev/null";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  double value = 0.0;
  if (!pipe || std::fscanf(pipe.get(), "%lf", &value) != 1) return 0.0;
  return value;
}

// The benchmark model as a decoder, with one MQAR batch (N = L/16 pairs, so N scored positions
// per sequence); one timed training step as the classifier's TrainingStepBench.
struct DecoderStepBench {
  cpm::MqarSet data;
  cpm::TransformerDecoder<float> model;
  cpm::AdamW<float> optimiser;
  int batch, length;

  static cpm::ModelShape shape(cpm::AttentionKind attention, int length) {
    cpm::ModelShape s = cpm::bench::benchmark_shape(attention, length);
    s.vocabulary = kVocabulary;
    return s;
  }

  DecoderStepBench(cpm::AttentionKind attention, int batch_size, int sequence_length)
      : data(cpm::make_mqar({kVocabulary, sequence_length, sequence_length / 16, 0.01, true},
                            batch_size, 3, cpm::RecallSplit::train)),
        model(shape(attention, sequence_length), batch_size, sequence_length,
              batch_size * (sequence_length / 16)),
        optimiser(model.weight_decay_mask(), {}),
        batch(batch_size),
        length(sequence_length) {
    model.initialise_parameters(1);
    cpm::bench::fill_benchmark_particles(model.particles(), model.shape().head_size());
  }

  // Forward, backward, clipping and one AdamW step; returns seconds.
  double step() {
    const auto start = std::chrono::steady_clock::now();
    const cpm::DecoderBatch b{data.inputs.data(), data.targets.data(), batch, length};
    model.zero_gradients();
    model.forward(b);
    model.backward(b);
    cpm::clip_gradient_norm(model.gradients(), 1.0);
    optimiser.step(model.parameters(), model.gradients(), 1e-3);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }

  // `warmup` untimed steps, then the mean over `steps` (as the PyTorch script measures).
  double seconds_per_step(int warmup, int steps) {
    for (int i = 0; i < warmup; ++i) step();
    double total = 0.0;
    for (int i = 0; i < steps; ++i) total += step();
    return total / steps;
  }
};

}  // namespace

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
      "decoder training tokens/s, batch %d, d_model 64, 4 heads, 2 layers, d_ff 128, m 64, "
      "vocabulary %d, L/16 scored positions per sequence, %d threads\n",
      batch, kVocabulary, threads);
  std::printf("%-14s %6s %14s %14s %8s\n", "attention", "L", "cpm", "pytorch", "ratio");
  for (const auto& [attention, length] : {std::pair<std::string, int>{"softmax", 128},
                                          {"softmax", 1024},
                                          {"kernel-favor", 128},
                                          {"kernel-favor", 1024}}) {
    double cpm_rate = 0.0;
    {  // freed before PyTorch runs
      DecoderStepBench bench(
          attention == "softmax" ? cpm::AttentionKind::softmax : cpm::AttentionKind::linear, batch,
          length);
      cpm_rate = batch * length / bench.seconds_per_step(2, steps);
    }
    const double torch_rate = torch_tokens_per_second(attention, length, steps, threads);
    std::printf("%-14s %6d %14.0f %14.0f %8.2f\n", attention.c_str(), length, cpm_rate, torch_rate,
                torch_rate > 0 ? cpm_rate / torch_rate : 0.0);
    std::fflush(stdout);
  }
  return 0;
}
