// The `cpm train` configuration: defaults, variants, and one-line errors for impossible values.
#include <gtest/gtest.h>

#include "config/train_config.hpp"
#include "io/input_error.hpp"

namespace cpm {
namespace {

std::string error_of(const std::string& toml) {
  try {
    parse_train_config(toml, "test.toml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(TrainConfig, DefaultsAreTheDesignSizes) {
  const TrainConfig c = parse_train_config("", "empty.toml");
  EXPECT_EQ(c.model.d_model, 64);
  EXPECT_EQ(c.model.heads, 4);
  EXPECT_EQ(c.model.layers, 2);
  EXPECT_EQ(c.model.d_ff, 128);
  EXPECT_EQ(c.model.features, 64);
  EXPECT_EQ(c.model.variant.name(), "kernel-favor");
  EXPECT_FALSE(c.is_experiment());
}

TEST(TrainConfig, PhaseAGammaIsRelativeToTheInitialForceUnlessSwitchedOff) {
  const TrainConfig d = parse_train_config("", "empty.toml");
  EXPECT_TRUE(d.phase_a.relative_gamma);
  EXPECT_EQ(d.phase_a.gamma, 0.1);
  EXPECT_EQ(d.phase_a.dynamics.steps, 50);
  const TrainConfig c =
      parse_train_config("[phase_a]\ngamma = 10.0\nrelative_gamma = false\n", "x.toml");
  EXPECT_FALSE(c.phase_a.relative_gamma);
  EXPECT_EQ(c.phase_a.gamma, 10.0);
}

TEST(TrainConfig, EveryVariantNameRoundTrips) {
  for (const std::string name :
       {"softmax", "vanilla-favor", "vanilla-porf-softplus", "vanilla-softmaxfeat", "kernel-favor",
        "kernel-porf-softplus", "kernel-softmaxfeat"})
    EXPECT_EQ(parse_attention_variant(name).name(), name);
  EXPECT_THROW(parse_attention_variant("kernel-rff"), std::invalid_argument);
}

TEST(TrainConfig, BadValuesGiveOneLineErrorsNamingTheKey) {
  EXPECT_EQ(error_of("[model]\nd_model = 30\nheads = 4\n"),
            "test.toml: model.heads: d_model = 30 is not divisible by heads = 4");
  EXPECT_NE(
      error_of("[model]\nattention = \"fast\"\n").find("model.attention: unknown attention 'fast'"),
      std::string::npos);
  EXPECT_NE(error_of("[training]\nbatch_size = 0\n").find("training.batch_size"),
            std::string::npos);
  EXPECT_NE(error_of("[model]\nlayer = 2\n").find("model.layer"),
            std::string::npos);  // unknown key
  EXPECT_NE(error_of("[data]\ndataset = \"qqp\"\n").find("data.train_path"), std::string::npos);
  EXPECT_NE(
      error_of("[experiment]\nvariants = [\"softmax\", \"nope\"]\n").find("experiment.variants"),
      std::string::npos);
}

TEST(TrainConfig, ExperimentSectionListsVariantsSeedsAndDatasets) {
  const TrainConfig c = parse_train_config(
      "[experiment]\nvariants = [\"softmax\", \"kernel-favor\"]\nseeds = [4, 5]\ndatasets = "
      "[\"sst2\", \"rotten_tomatoes\"]\n",
      "x.toml");
  EXPECT_TRUE(c.is_experiment());
  EXPECT_EQ(c.experiment.seeds, (std::vector<std::uint64_t>{4, 5}));
  EXPECT_EQ(c.experiment.datasets.size(), 2u);
}

}  // namespace
}  // namespace cpm
