#include "config/kernel_config.hpp"

#include <gtest/gtest.h>

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
  for (const std::string& text :
       {std::string("[features]\nmap = \"laplace\"\n"), std::string("[features]\nn = 0\n")})
    EXPECT_EQ(error_of(text).find('\n'), std::string::npos);
}

}  // namespace
}  // namespace cpm
