#include "config/kernel_config.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "io/input_error.hpp"

namespace cpm {
namespace {

std::string error_of(const std::string& text) {
  try {
    parse_kernel_config(text, "test.toml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(KernelConfig, EmptyFileGivesTheDocumentedDefaults) {
  const KernelConfig c = parse_kernel_config("", "test.toml");
  EXPECT_EQ(c.data.task, "variance");
  EXPECT_EQ(c.features.map, FeatureMapKind::rff);
  EXPECT_EQ(c.features.n, (std::vector<Eigen::Index>{16, 32, 64, 128, 256, 512}));
  EXPECT_EQ(c.baselines.methods.size(), 5u);
  EXPECT_EQ(c.alignment.objective, AlignmentObjective::alignment);
  EXPECT_LT(c.repulsion_scale.drift_fraction, 0.0);
  EXPECT_TRUE(std::isinf(c.dynamics.beta));
}

TEST(KernelConfig, ScalarsAndListsAreAcceptedWhereASweepIsAllowed) {
  const KernelConfig c = parse_kernel_config(
      "[data]\nlabel_noise = 0.2\n[features]\nn = 64\nmap = \"favor\"\n[baselines]\npool = 64\n",
      "t");
  EXPECT_EQ(c.data.label_noise, std::vector<double>{0.2});
  EXPECT_EQ(c.features.n, std::vector<Eigen::Index>{64});
  EXPECT_EQ(c.features.map, FeatureMapKind::favor);
}

TEST(KernelConfig, SelectionGridsAnchorObjectiveAndDriftFractionAreRead) {
  const KernelConfig c = parse_kernel_config(
      "[features]\nmap = \"rff-pairs\"\n[alignment]\nobjective = \"squared_loss\"\nalpha = 0.5\n"
      "anchor = false\n[repulsion]\nkernel = \"mollified\"\ns = 1.5\nepsilon = 0.1\n"
      "drift_fraction = 0.1\n[dynamics]\nsteps = 50\n"
      "[selection]\ngamma = [0.3, 1]\nbeta = [1, 10]\nl2 = 1e-3\ncheckpoints = [50, 10, 25]\n"
      "validation_fraction = 0.25\n",
      "t");
  EXPECT_TRUE(c.features.pairs);
  EXPECT_EQ(c.features.map, FeatureMapKind::rff);
  EXPECT_EQ(c.alignment.objective, AlignmentObjective::squared_loss);
  EXPECT_EQ(c.alignment.alpha, 0.5);
  EXPECT_FALSE(c.alignment.anchor);
  EXPECT_EQ(c.repulsion_scale.drift_fraction, 0.1);
  EXPECT_EQ(c.selection.gamma, (std::vector<double>{0.3, 1.0}));
  EXPECT_EQ(c.selection.beta, (std::vector<double>{1.0, 10.0}));
  EXPECT_EQ(c.selection.l2, std::vector<double>{1e-3});
  EXPECT_EQ(c.selection.checkpoints, (std::vector<int>{10, 25, 50}));
  EXPECT_EQ(c.selection.validation_fraction, 0.25);
  // Without [selection] the grids are the single values of their sections.
  const KernelConfig d =
      parse_kernel_config("[alignment]\ngamma = 2\n[dynamics]\nsteps = 7\n", "t");
  EXPECT_EQ(d.selection.gamma, std::vector<double>{2.0});
  EXPECT_EQ(d.selection.checkpoints, std::vector<int>{7});
  EXPECT_TRUE(std::isinf(d.selection.beta.front()));
  EXPECT_TRUE(d.alignment.anchor);
  EXPECT_TRUE(d.alignment.relative_gamma);
}

TEST(KernelConfig, BadValuesGiveOneLineErrorsNamingTheKey) {
  const std::string unknown_map = error_of("[features]\nmap = \"laplace\"\n");
  EXPECT_NE(unknown_map.find("features.map"), std::string::npos);
  EXPECT_NE(unknown_map.find("laplace"), std::string::npos);
  EXPECT_NE(error_of("[features]\nn = [16, 0]\n").find("features.n"), std::string::npos);
  EXPECT_NE(error_of("[features]\nn = 0\n").find("features.n"), std::string::npos);
  EXPECT_NE(error_of("[data]\nlabel_noise = [1.5]\n").find("data.label_noise"), std::string::npos);
  EXPECT_NE(error_of("[baselines]\nmethods = [\"magic\"]\n").find("baselines.methods"),
            std::string::npos);
  EXPECT_NE(error_of("[baselines]\npool = 100\n").find("baselines.pool"), std::string::npos);
  EXPECT_NE(error_of("[dynamics]\nstepsize = 1\n").find("dynamics.stepsize: unknown key"),
            std::string::npos);
  EXPECT_NE(error_of("[alignment]\nbatch_size = 5000\n").find("alignment.batch_size"),
            std::string::npos);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"[selection]\ngamma = [1, -2]\n", "selection.gamma"},
      {"[selection]\ngamma = \"big\"\n", "selection.gamma"},
      {"[selection]\nbeta = [0]\n", "selection.beta"},
      {"[selection]\nl2 = []\n", "selection.l2"},
      {"[selection]\ncheckpoints = [300]\n", "selection.checkpoints"},
      {"[selection]\ncheckpoints = [2.5]\n", "selection.checkpoints"},
      {"[selection]\nvalidation_fraction = 1\n", "selection.validation_fraction"},
      {"[selection]\nfolds = 5\n", "selection.folds: unknown key"},
      {"[selection]\nbeta = [1]\n[dynamics]\nbeta = 2\n", "selection.beta"},
      {"[selection]\ngamma = [1]\n[alignment]\ngamma = 2\n", "selection.gamma"},
      {"[selection]\nl2 = [1]\n[classifier]\nl2 = 2\n", "selection.l2"},
      {"[alignment]\nobjective = \"hinge\"\n", "alignment.objective"},
      {"[alignment]\nalpha = 0\n", "alignment.alpha"},
      {"[alignment]\nanchor = 1\n", "alignment.anchor"},
      {"[repulsion]\ndrift_fraction = -0.1\n", "repulsion.drift_fraction"},
      {"[repulsion]\ndrift_fraction = 0.1\nlambda = 2\n", "repulsion.lambda"},
      {"[baselines]\nmethods = [\"learned-null\"]\n", "baselines.methods"},
      {"[features]\nmap = \"laplace\"\n", "features.map"},
      {"[features]\nn = 0\n", "features.n"}};
  for (const auto& [text, key] : cases) {
    const std::string e = error_of(text);
    EXPECT_NE(e.find(key), std::string::npos) << text << " → " << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  }
}

}  // namespace
}  // namespace cpm
