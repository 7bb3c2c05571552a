// The classifier against an independent PyTorch implementation of the same architecture
// (tests/torch_reference.py --model classifier) with the same weights: logits, loss and every
// parameter gradient, in float64. Skipped with a message when torch does not import under
// /usr/bin/python3.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
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
  std::string name;
};

// One model of the case, with its batch, gradients and the files exchanged with PyTorch.
struct TorchComparison {
  TorchCase c;
  TransformerClassifier<double> model;
  std::vector<int> tokens = {3, 4, 5, 6, 7, 8, 9, 2, 10, 1, 0, 0, 0, 0, 5, 5, 3, 4, 0, 0, 0};
  std::vector<int> lengths = {7, 4, 4}, labels = {0, 2, 1};
  double loss = 0.0;
  std::string in, out;

  static ModelShape shape_of(const TorchCase& c) {
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
    return shape;
  }

  explicit TorchComparison(TorchCase tc) : c(std::move(tc)), model(shape_of(c), 3, 7) {
    model.initialise_parameters(3);
    auto& theta = model.parameters();
    const auto noise = testing::random_vector(theta.size(), 4, 0.2);
    for (std::size_t i = 0; i < theta.size(); ++i) theta[i] += noise[i];
    const auto omega = testing::random_vector(model.particles().size(), 5);
    std::copy(omega.begin(), omega.end(), model.particles().begin());
    const TokenBatch batch{tokens.data(), lengths.data(), labels.data(), 3, 7};
    model.zero_gradients();
    loss = model.forward(batch);
    model.backward(batch);
    in = ::testing::TempDir() + "cpm_torch_in_" + c.name + ".txt";
    out = ::testing::TempDir() + "cpm_torch_out_" + c.name + ".txt";
    std::ofstream f(in);
    f.precision(17);
    f << "config vocabulary 11\nconfig max_length 7\nconfig d_model 8\nconfig heads 2\nconfig "
         "layers 2\n"
      << "config d_ff 16\nconfig classes 3\nconfig features 6\nconfig batch 3\nconfig length 7\n"
      << "config qk_tied " << c.tied << "\nconfig attention "
      << (c.attention == AttentionKind::softmax ? "softmax" : "linear") << "\nconfig feature_map "
      << feature_map_name(c.map) << "\nconfig epsilon 1e-6\n";
    for (const auto& t : model.tensors())
      write_block(
          f, torch_name(t.name),
          std::vector<double>(theta.begin() + t.offset, theta.begin() + t.offset + t.size()));
    write_block(f, "particles", model.particles());
    write_block(f, "tokens", tokens);
    write_block(f, "lengths", lengths);
    write_block(f, "labels", labels);
  }

  void compare() {
    const auto ref = read_blocks(out);
    ASSERT_EQ(ref.at("logits").size(), 9u) << c.name;
    for (int i = 0; i < 9; ++i)
      EXPECT_NEAR(model.logits()[i], ref.at("logits")[i], 1e-10) << c.name << " logit " << i;
    EXPECT_NEAR(loss, ref.at("loss")[0], 1e-12) << c.name;
    double worst = 0.0;
    for (const auto& t : model.tensors()) {
      const auto& g = ref.at("grad." + torch_name(t.name));
      ASSERT_EQ(g.size(), t.size()) << t.name;
      for (std::size_t i = 0; i < t.size(); ++i) {
        const double error =
            std::abs(model.gradients()[t.offset + i] - g[i]) / std::max(1.0, std::abs(g[i]));
        worst = std::max(worst, error);
        EXPECT_LE(error, 1e-9) << c.name << " " << t.name << "[" << i << "]";
      }
    }
    std::printf("  %s: loss %.12f (PyTorch %.12f), worst gradient difference %.2e\n",
                c.name.c_str(), loss, ref.at("loss")[0], worst);
  }
};

// One Python process for all cases (importing torch is the slow part).
TEST(TorchReference, LogitsLossAndGradientsMatchPyTorchForEveryAttention) {
  if (!torch_available())
    GTEST_SKIP() << "torch does not import under " << kPython << ": comparison skipped";
  std::vector<std::unique_ptr<TorchComparison>> cases;
  for (const TorchCase& c :
       {TorchCase{AttentionKind::softmax, FeatureMapKind::favor, false, "softmax"},
        TorchCase{AttentionKind::softmax, FeatureMapKind::favor, true, "softmax_tied"},
        TorchCase{AttentionKind::linear, FeatureMapKind::favor, false, "favor"},
        TorchCase{AttentionKind::linear, FeatureMapKind::porf_softplus, true, "softplus_tied"},
        TorchCase{AttentionKind::linear, FeatureMapKind::softmaxfeat, false, "softmaxfeat"}})
    cases.push_back(std::make_unique<TorchComparison>(c));
  std::string command =
      kPython + " " + CPM_SOURCE_DIR + "/tests/torch_reference.py --model classifier --check";
  for (const auto& c : cases) command += " " + c->in + " " + c->out;
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  for (const auto& c : cases) c->compare();
}

}  // namespace
}  // namespace cpm
