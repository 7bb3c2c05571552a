// The classifier against an independent PyTorch implementation of the same architecture
// (bench/torch_reference.py) with the same weights: logits, loss and every parameter gradient,
// in float64. Skipped with a message when torch does not import under /usr/bin/python3.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include "tests/transformer/finite_difference.hpp"
#include "transformer/transformer_classifier.hpp"

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

struct TorchCase {
  AttentionKind attention;
  FeatureMapKind map;
  bool tied;
  const char* name;
};

class TorchReference : public ::testing::TestWithParam<TorchCase> {};

TEST_P(TorchReference, LogitsLossAndGradientsMatchPyTorch) {
  if (!torch_available()) GTEST_SKIP() << "torch does not import under " << kPython << ": comparison skipped";
  const TorchCase c = GetParam();
  ModelShape shape;
  shape.vocabulary = 11;
  shape.max_length = 7;
  shape.d_model = 8;
  shape.heads = 2;
  shape.layers = 2;
  shape.d_ff = 16;
  shape.classes = 3;
  shape.features = 6;
  shape.attention = c.attention;
  shape.feature_map = {c.map, 1e-6};
  shape.qk_tied = c.tied;
  shape.dropout = 0.0;
  TransformerClassifier<double> model(shape, 3, 7);
  model.initialise_parameters(3);
  auto& theta = model.parameters();
  const auto noise = testing::random_vector(theta.size(), 4, 0.2);
  for (std::size_t i = 0; i < theta.size(); ++i) theta[i] += noise[i];
  const auto omega = testing::random_vector(model.particles().size(), 5);
  std::copy(omega.begin(), omega.end(), model.particles().begin());
  const std::vector<int> tokens = {3, 4, 5, 6, 7, 8, 9, 2, 10, 1, 0, 0, 0, 0, 5, 5, 3, 4, 0, 0, 0};
  const std::vector<int> lengths = {7, 4, 4}, labels = {0, 2, 1};
  const TokenBatch batch{tokens.data(), lengths.data(), labels.data(), 3, 7};
  model.zero_gradients();
  const double loss = model.forward(batch);
  model.backward(batch);

  const std::string in = ::testing::TempDir() + "cpm_torch_in_" + c.name + ".txt";
  const std::string out = ::testing::TempDir() + "cpm_torch_out_" + c.name + ".txt";
  {
    std::ofstream f(in);
    f.precision(17);
    f << "config vocabulary 11\nconfig max_length 7\nconfig d_model 8\nconfig heads 2\nconfig layers 2\n"
      << "config d_ff 16\nconfig classes 3\nconfig features 6\nconfig batch 3\nconfig length 7\n"
      << "config qk_tied " << c.tied << "\nconfig attention " << (c.attention == AttentionKind::softmax ? "softmax" : "linear")
      << "\nconfig feature_map " << feature_map_name(c.map) << "\nconfig epsilon 1e-6\n";
    for (const auto& t : model.tensors())
      write_block(f, torch_name(t.name), std::vector<double>(theta.begin() + t.offset, theta.begin() + t.offset + t.size()));
    write_block(f, "particles", model.particles());
    write_block(f, "tokens", tokens);
    write_block(f, "lengths", lengths);
    write_block(f, "labels", labels);
  }
  const std::string command = kPython + " " + CPM_SOURCE_DIR + "/bench/torch_reference.py --check " + in + " " + out;
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  const auto ref = read_blocks(out);
  ASSERT_EQ(ref.at("logits").size(), 9u);
  for (int i = 0; i < 9; ++i) EXPECT_NEAR(model.logits()[i], ref.at("logits")[i], 1e-10) << "logit " << i;
  EXPECT_NEAR(loss, ref.at("loss")[0], 1e-12);
  double worst = 0.0;
  for (const auto& t : model.tensors()) {
    const auto& g = ref.at("grad." + torch_name(t.name));
    ASSERT_EQ(g.size(), t.size()) << t.name;
    for (std::size_t i = 0; i < t.size(); ++i) {
      const double error = std::abs(model.gradients()[t.offset + i] - g[i]) / std::max(1.0, std::abs(g[i]));
      worst = std::max(worst, error);
      EXPECT_LE(error, 1e-9) << t.name << "[" << i << "]";
    }
  }
  std::printf("  %s: loss %.12f (PyTorch %.12f), worst gradient difference %.2e\n", c.name, loss,
              ref.at("loss")[0], worst);
}

INSTANTIATE_TEST_SUITE_P(
    SameWeights, TorchReference,
    ::testing::Values(TorchCase{AttentionKind::softmax, FeatureMapKind::favor, false, "softmax"},
                      TorchCase{AttentionKind::linear, FeatureMapKind::favor, false, "favor"},
                      TorchCase{AttentionKind::linear, FeatureMapKind::porf_softplus, true, "softplus_tied"},
                      TorchCase{AttentionKind::linear, FeatureMapKind::softmaxfeat, false, "softmaxfeat"}),
    [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace cpm
