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

TEST(TrainConfig, PairedProtocolAndThePhaseAOptionsOfTheFairComparison) {
  const TrainConfig d = parse_train_config("", "empty.toml");
  EXPECT_FALSE(d.phase_a.queries_and_keys);
  EXPECT_FALSE(d.phase_a.normalised);
  EXPECT_EQ(d.phase_a.tolerance, 0.0);
  EXPECT_FALSE(d.phase_a.repulsion_fraction.has_value());
  EXPECT_EQ(d.experiment.protocol, "independent");
  const TrainConfig c = parse_train_config(
      "[phase_a]\nalign_on = \"queries_and_keys\"\nnormalised = true\ntolerance = 1e-3\n"
      "check_every = 5\nrepulsion_fraction = 0.25\n"
      "[phase_a.interaction]\nkernel = \"mollified\"\ns = 15.0\nepsilon = 0.5\n"
      "[phase_a.dynamics]\nbeta = 1000.0\n"
      "[experiment]\nprotocol = \"paired\"\nvariants = [\"kernel-favor\", \"softmax\", "
      "\"uniform\"]\nbootstrap_samples = 500\n",
      "x.toml");
  EXPECT_TRUE(c.phase_a.queries_and_keys);
  EXPECT_TRUE(c.phase_a.normalised);
  EXPECT_EQ(c.phase_a.tolerance, 1e-3);
  EXPECT_EQ(c.phase_a.check_every, 5);
  EXPECT_EQ(*c.phase_a.repulsion_fraction, 0.25);
  EXPECT_EQ(c.phase_a.dynamics.beta, 1000.0);
  EXPECT_TRUE(c.is_paired());
  EXPECT_EQ(c.experiment.bootstrap_samples, 500);
  EXPECT_EQ(parse_attention_variant("uniform").name(), "uniform");
}

TEST(TrainConfig, BadValuesOfTheNewKeysGiveOneLineNamingTheKey) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"[phase_a]\nalign_on = \"values\"\n", "test.toml: phase_a.align_on: "},
      {"[phase_a]\nnormalised = 1\n", "test.toml: phase_a.normalised: "},
      {"[phase_a]\ntolerance = -0.1\n", "test.toml: phase_a.tolerance: must lie in [0, 1)"},
      {"[phase_a]\ncheck_every = 0\n", "test.toml: phase_a.check_every: must be at least 1"},
      {"[phase_a]\nrepulsion_fraction = -1.0\n",
       "test.toml: phase_a.repulsion_fraction: must be a finite number ≥ 0"},
      {"[phase_a]\nrepulsion_fraction = 0.1\n[phase_a.interaction]\nlambda = 0.5\n",
       "test.toml: phase_a.repulsion_fraction: sets λ from the drifts; give it or "
       "interaction.lambda, not both"},
      {"[phase_a]\nrepulsion_fraction = 0.1\n[phase_a.interaction]\nkernel = \"none\"\n",
       "test.toml: phase_a.repulsion_fraction: needs a repulsive interaction kernel"},
      {"[experiment]\nprotocol = \"crossed\"\nvariants = [\"kernel-favor\"]\n",
       "test.toml: experiment.protocol: "},
      {"[experiment]\nprotocol = \"paired\"\nvariants = [\"kernel-favor\", "
       "\"vanilla-favor\"]\n",
       "test.toml: experiment.variants: 'vanilla-favor' is the paired arm of kernel-favor"},
      {"[experiment]\nprotocol = \"paired\"\nvariants = [\"softmax\"]\n",
       "test.toml: experiment.variants: the paired protocol needs at least one kernel-<map>"},
      {"[experiment]\nbootstrap_samples = 0\n",
       "test.toml: experiment.bootstrap_samples: must be at least 1"},
      {"[experiment]\nkeep_checkpoints = \"yes\"\n", "test.toml: experiment.keep_checkpoints: "},
  };
  for (const auto& [toml, expected] : cases) {
    const std::string e = error_of(toml);
    EXPECT_EQ(e.rfind(expected, 0), 0u) << toml << " gave: " << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  }
}

}  // namespace
}  // namespace cpm
