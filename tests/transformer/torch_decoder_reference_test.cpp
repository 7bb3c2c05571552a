// The causal decoder against an independent PyTorch implementation of the same network
// (tests/torch_reference.py --model decoder) with the same weights: scored logits, loss and every
// parameter gradient, in float64, then the losses of three AdamW steps on the batch and the
// parameters after them, for causal softmax and causal linear (favor) attention, tied and untied
// W_Q = W_K, with and without the MLP, and the convolution hybrid of Zoology's MQAR anchor
// (BaseConv with torch.nn.Conv1d in the even layers, attention in the odd ones, no position
// embedding). PyTorch's chunked causal linear attention runs with chunks of 3 tokens, so that L = 7
// has several chunks and a partial one; one more case uses its cumsum form. Skipped with a message
// when torch does not import under /usr/bin/python3.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "tests/transformer/finite_difference.hpp"
#include "transformer/adamw.hpp"
#include "transformer/transformer_decoder.hpp"

namespace cpm {
namespace {

const std::string kPython = "/usr/bin/python3";

bool torch_available() {
  return std::system((kPython + " -c 'import torch' >/dev/null 2>&1").c_str()) == 0;
}

std::string torch_name(std::string name) {
  for (char& c : name)
    if (c == '.') c = '_';
  return name;
}

template <class V>
void write_block(std::ostream& out, const std::string& name, const V& values) {
  out << name << ' ' << values.size();
  for (const auto v : values) out << ' ' << v;
  out << '\n';
}

std::map<std::string, std::vector<double>> read_blocks(const std::string& path) {
  std::map<std::string, std::vector<double>> blocks;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream s(line);
    std::string name;
    std::size_t n = 0;
    s >> name >> n;
    std::vector<double> v(n);
    for (auto& x : v) s >> x;
    blocks[name] = v;
  }
  return blocks;
}

struct DecoderCase {
  AttentionKind attention;
  bool tied;
  int d_ff;
  std::string linear_form;  // of the PyTorch side: chunked or cumsum
  std::string name;
  int conv_kernel = 0;  // > 0: the hybrid, without position embedding
  int layers = 2;
};

constexpr int kVocabulary = 11, kBatch = 3, kLength = 7, kFeatures = 6, kSteps = 3;
constexpr double kEpsilon = 1e-6, kLearningRate = 1e-2, kWeightDecay = 0.1;

// One model of the case, with its batch, gradients and the files exchanged with PyTorch.
struct DecoderComparison {
  DecoderCase c;
  TransformerDecoder<double> model;
  std::vector<int> tokens = {3, 4, 5, 6, 7, 8, 9, 2, 10, 1, 0, 4, 4, 6, 5, 5, 3, 4, 9, 1, 2};
  // 10 scored positions; the first and the last position of a sequence among them.
  std::vector<int> targets = {-1, 4,  -1, 6,  7, -1, 1,  3,  -1, -1, 8,
                              -1, -1, 2,  -1, 0, -1, -1, 10, 5,  -1};
  double loss = 0.0;
  std::vector<double> logits, gradients, step_losses;
  std::string in, out;

  static ModelShape shape_of(const DecoderCase& c) {
    ModelShape shape;
    shape.vocabulary = kVocabulary;
    shape.max_length = kLength;
    shape.d_model = 8;
    shape.heads = 2;
    shape.layers = c.layers;
    shape.d_ff = c.d_ff;
    shape.features = kFeatures;
    shape.attention = c.attention;
    shape.feature_map = {FeatureMapKind::favor, kEpsilon};
    shape.qk_tied = c.tied;
    shape.dropout = 0.0;
    shape.conv_kernel = c.conv_kernel;
    shape.position_embedding = c.conv_kernel == 0;
    return shape;
  }

  explicit DecoderComparison(DecoderCase dc)
      : c(std::move(dc)), model(shape_of(c), kBatch, kLength) {
    model.initialise_parameters(3);
    auto& theta = model.parameters();
    const auto noise = testing::random_vector(theta.size(), 4, 0.2);
    for (std::size_t i = 0; i < theta.size(); ++i) theta[i] += noise[i];
    const auto omega = testing::random_vector(model.particles().size(), 5);
    std::copy(omega.begin(), omega.end(), model.particles().begin());
    const DecoderBatch batch{tokens.data(), targets.data(), kBatch, kLength};
    model.zero_gradients();
    loss = model.forward(batch);
    model.backward(batch);
    logits.assign(model.logits(), model.logits() + model.scored() * kVocabulary);
    gradients = model.gradients();
    in = ::testing::TempDir() + "cpm_torch_decoder_in_" + c.name + ".txt";
    out = ::testing::TempDir() + "cpm_torch_decoder_out_" + c.name + ".txt";
    const ModelShape& s = model.shape();
    std::ofstream f(in);
    f.precision(17);
    f << "config vocabulary " << s.vocabulary << "\nconfig max_length " << s.max_length
      << "\nconfig d_model " << s.d_model << "\nconfig heads " << s.heads << "\nconfig layers "
      << s.layers << "\nconfig d_ff " << s.d_ff << "\nconfig features " << s.features
      << "\nconfig batch " << kBatch << "\nconfig length " << kLength << "\nconfig qk_tied "
      << s.qk_tied << "\nconfig attention "
      << (c.attention == AttentionKind::softmax ? "softmax" : "linear")
      << "\nconfig feature_map favor\nconfig epsilon " << kEpsilon << "\nconfig linear_form "
      << c.linear_form << "\nconfig chunk 3\nconfig conv_kernel " << s.conv_kernel
      << "\nconfig position_embedding " << s.position_embedding << "\nconfig steps " << kSteps
      << "\nconfig learning_rate " << kLearningRate << "\nconfig weight_decay " << kWeightDecay
      << "\n";
    for (const auto& t : model.tensors()) {
      write_block(
          f, torch_name(t.name),
          std::vector<double>(theta.begin() + t.offset, theta.begin() + t.offset + t.size()));
      write_block(f, "decay." + torch_name(t.name), std::vector<int>{t.decay});
    }
    write_block(f, "particles", model.particles());
    write_block(f, "tokens", tokens);
    write_block(f, "targets", targets);

    // AdamW steps on the same batch: the loss of each step's forward, then the parameters.
    AdamW<double> optimiser(model.weight_decay_mask(),
                            {kLearningRate, 0.9, 0.999, 1e-8, kWeightDecay});
    for (int step = 0; step < kSteps; ++step) {
      model.zero_gradients();
      step_losses.push_back(model.forward(batch));
      model.backward(batch);
      optimiser.step(theta, model.gradients(), kLearningRate);
    }
  }

  void compare() {
    const auto ref = read_blocks(out);
    const int S = model.scored();
    ASSERT_EQ(S, 10) << c.name;
    ASSERT_EQ(ref.at("logits").size(), static_cast<std::size_t>(S) * kVocabulary) << c.name;
    for (int i = 0; i < S * kVocabulary; ++i)
      EXPECT_NEAR(logits[i], ref.at("logits")[i], 1e-10) << c.name << " logit " << i;
    EXPECT_NEAR(loss, ref.at("loss")[0], 1e-12) << c.name;
    // Relative to max(1, |g|), per entry: the gradients are O(1e-3 … 1).
    double worst = 0.0;
    std::string worst_tensor;
    for (const auto& t : model.tensors()) {
      const auto& g = ref.at("grad." + torch_name(t.name));
      ASSERT_EQ(g.size(), t.size()) << c.name << " " << t.name;
      for (std::size_t i = 0; i < t.size(); ++i) {
        const double error =
            std::abs(gradients[t.offset + i] - g[i]) / std::max(1.0, std::abs(g[i]));
        if (error > worst) {
          worst = error;
          worst_tensor = t.name;
        }
        EXPECT_LE(error, 1e-9) << c.name << " " << t.name << "[" << i << "]";
      }
    }
    std::printf("  %s: loss %.12f (PyTorch %.12f), worst gradient difference %.2e (%s)\n",
                c.name.c_str(), loss, ref.at("loss")[0], worst, worst_tensor.c_str());

    // AdamW keeps its moments in float: the steps agree to about float's resolution of m and v
    // times the learning rate.
    const auto& losses = ref.at("step_losses");
    ASSERT_EQ(losses.size(), static_cast<std::size_t>(kSteps)) << c.name;
    for (int k = 0; k < kSteps; ++k)
      EXPECT_NEAR(step_losses[k], losses[k], 1e-8) << c.name << " step " << k;
    double worst_step = 0.0;
    for (const auto& t : model.tensors()) {
      const auto& after = ref.at("after." + torch_name(t.name));
      ASSERT_EQ(after.size(), t.size()) << c.name << " " << t.name;
      for (std::size_t i = 0; i < t.size(); ++i) {
        const double error = std::abs(model.parameters()[t.offset + i] - after[i]);
        worst_step = std::max(worst_step, error);
        EXPECT_LE(error, 1e-8) << c.name << " " << t.name << "[" << i << "] after the steps";
      }
    }
    std::printf("  %s: %d AdamW steps, losses %.10f → %.10f, worst parameter difference %.2e\n",
                c.name.c_str(), kSteps, step_losses.front(), step_losses.back(), worst_step);
  }
};

// One Python process for all cases (importing torch is the slow part).
TEST(TorchDecoderReference, LogitsLossAndGradientsMatchPyTorchForEveryCase) {
  if (!torch_available())
    GTEST_SKIP() << "torch does not import under " << kPython << ": comparison skipped";
  std::vector<std::unique_ptr<DecoderComparison>> cases;
  for (const DecoderCase& c : {
           DecoderCase{AttentionKind::softmax, false, 16, "chunked", "softmax"},
           DecoderCase{AttentionKind::softmax, false, 0, "chunked", "softmax_no_mlp"},
           DecoderCase{AttentionKind::softmax, true, 16, "chunked", "softmax_tied"},
           DecoderCase{AttentionKind::softmax, true, 0, "chunked", "softmax_tied_no_mlp"},
           DecoderCase{AttentionKind::linear, false, 16, "chunked", "favor"},
           DecoderCase{AttentionKind::linear, false, 0, "chunked", "favor_no_mlp"},
           DecoderCase{AttentionKind::linear, true, 16, "chunked", "favor_tied"},
           DecoderCase{AttentionKind::linear, true, 0, "chunked", "favor_tied_no_mlp"},
           DecoderCase{AttentionKind::linear, false, 16, "cumsum", "favor_cumsum"},
           DecoderCase{AttentionKind::softmax, false, 16, "chunked", "hybrid_softmax", 3},
           DecoderCase{AttentionKind::softmax, false, 0, "chunked", "hybrid_softmax_no_mlp", 3},
           DecoderCase{AttentionKind::softmax, true, 0, "chunked", "hybrid_softmax_k2_three_layers",
                       2, 3},
           DecoderCase{AttentionKind::linear, false, 16, "chunked", "hybrid_favor", 3},
           DecoderCase{AttentionKind::linear, true, 0, "chunked", "hybrid_favor_tied_no_mlp", 4},
       })
    cases.push_back(std::make_unique<DecoderComparison>(c));
  std::string command =
      kPython + " " + CPM_SOURCE_DIR + "/tests/torch_reference.py --model decoder --check";
  for (const auto& c : cases) command += " " + c->in + " " + c->out;
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  for (const auto& c : cases) c->compare();
}

}  // namespace
}  // namespace cpm
