// The recall study's configuration: the arms, the anchors' defaults, and one-line errors naming
// the key for impossible task sizes.
#include <gtest/gtest.h>

#include "config/recall_config.hpp"
#include "io/input_error.hpp"

namespace cpm {
namespace {

std::string error_of(const std::string& toml) {
  try {
    parse_recall_config(toml, "test.toml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(RecallConfig, MqarDefaultsAreTheAnchorsModel) {
  const RecallConfig c = parse_recall_config("[data]\ndataset = \"mqar\"\n", "x.toml");
  EXPECT_EQ(c.task.lengths, (std::vector<int>{64, 128}));
  EXPECT_EQ(c.task.pairs, (std::vector<int>{4, 8}));
  EXPECT_EQ(c.task.vocabulary, 8192);
  EXPECT_EQ(c.model.d_model, 64);
  EXPECT_EQ(c.model.layers, 2);
  EXPECT_EQ(c.model.heads, 1);
  EXPECT_EQ(c.model.d_ff, 0);
}

TEST(RecallConfig, EveryArmParses) {
  const RecallVariant redraw = parse_recall_variant("redraw-favor");
  EXPECT_TRUE(redraw.particles && redraw.redraw && !redraw.trainable);
  const RecallVariant trainable = parse_recall_variant("trainable-softmaxfeat");
  EXPECT_TRUE(trainable.particles && trainable.trainable);
  EXPECT_EQ(parse_recall_variant("dpfp3").map.dpfp_nu, 3);
  EXPECT_EQ(parse_recall_variant("dpfp2").map.kind, FeatureMapKind::dpfp);
  EXPECT_EQ(parse_recall_variant("elu").map.kind, FeatureMapKind::elu);
  EXPECT_TRUE(parse_recall_variant("hedgehog").trainable);
  EXPECT_EQ(parse_recall_variant("softmax").attention, AttentionKind::softmax);
  EXPECT_EQ(parse_recall_variant("uniform").attention, AttentionKind::uniform);
  EXPECT_THROW(parse_recall_variant("vanilla-rff"), std::invalid_argument);
  EXPECT_THROW(parse_recall_variant("dpfp4"), std::invalid_argument);
  EXPECT_EQ(parse_recall_variant("temperature-favor").feature_input, FeatureInput::temperature);
  EXPECT_EQ(parse_recall_variant("metric-favor").feature_input, FeatureInput::metric);
  const RecallVariant gas = parse_recall_variant("vanilla-favor:coulomb");
  EXPECT_EQ(gas.particle_init, "coulomb");
  EXPECT_EQ(gas.name, "vanilla-favor:coulomb");
  const RecallVariant taught = parse_recall_variant("kernel-favor:sobol@softmax");
  EXPECT_TRUE(taught.kernel && taught.from_softmax);
  EXPECT_EQ(taught.particle_init, "sobol");
  EXPECT_TRUE(parse_recall_variant("elu").scale_sensitive());
  EXPECT_FALSE(parse_recall_variant("dpfp1").scale_sensitive());
  EXPECT_FALSE(parse_recall_variant("softmax").scale_sensitive());
  EXPECT_FALSE(parse_recall_variant("taylor").scale_sensitive());  // P absorbs a scale
  EXPECT_TRUE(parse_recall_variant("hedgehog").scale_sensitive());
  EXPECT_FALSE(parse_recall_variant("projected-dpfp2").scale_sensitive());
  EXPECT_TRUE(parse_recall_variant("trainable-favor").scale_sensitive());
  const RecallVariant taylor = parse_recall_variant("taylor");
  EXPECT_TRUE(taylor.particles && taylor.trainable && taylor.map.kind == FeatureMapKind::taylor);
  const RecallVariant pdpfp = parse_recall_variant("projected-dpfp3");
  EXPECT_TRUE(pdpfp.map.projected && pdpfp.trainable && pdpfp.map.dpfp_nu == 3);
  // D_φ within a budget: taylor 1 + d′ + d′(d′+1)/2 ≤ 128 at d′ = 14, rebased 1 + d′(d′+1)/2 at
  // d′ = 15, projected dpfp 2ν⌊D/2ν⌋.
  EXPECT_EQ(recall_feature_dim(taylor, 128, 64), 120);
  EXPECT_EQ(recall_feature_dim(taylor, 256, 64), 253);
  const RecallVariant rebased = parse_recall_variant("rebased");
  EXPECT_TRUE(rebased.particles && rebased.trainable &&
              rebased.map.kind == FeatureMapKind::rebased);
  EXPECT_FALSE(rebased.scale_sensitive());  // its LayerNorm removes the input's scale
  EXPECT_EQ(recall_feature_dim(rebased, 128, 64), 121);
  EXPECT_EQ(recall_feature_dim(rebased, 256, 64), 254);
  EXPECT_THROW(recall_feature_dim(rebased, 1, 64), std::invalid_argument);
  EXPECT_THROW(parse_recall_variant("rebased:sobol"), std::invalid_argument);
  EXPECT_EQ(recall_feature_dim(pdpfp, 128, 64), 126);
  EXPECT_EQ(recall_feature_dim(parse_recall_variant("dpfp2"), 128, 64), 256);  // its own D_φ
  EXPECT_EQ(recall_feature_dim(parse_recall_variant("vanilla-favor"), 128, 64), 128);
  EXPECT_EQ(recall_feature_dim(parse_recall_variant("softmax"), 128, 64), 0);
  for (const char* bad : {"vanilla-favor:unknown", "dpfp1:coulomb", "taylor:sobol",
                          "softmax@softmax", "kernel-favor@teacher", "projected-dpfp4"})
    EXPECT_THROW(parse_recall_variant(bad), std::invalid_argument) << bad;
}

TEST(RecallConfig, BandwidthsTargetsAndLearnedInputsAreChecked) {
  const std::string retrieval = "[data]\ndataset = \"associative_retrieval\"\n";
  const RecallConfig c = parse_recall_config(
      retrieval +
          "[model]\nbandwidths = [0.25, 0.5]\n[phase_a]\ntargets = [\"capacity\", "
          "\"matching\"]\n",
      "x.toml");
  EXPECT_EQ(c.model.bandwidths, (std::vector<double>{0.25, 0.5}));
  EXPECT_EQ(c.phase_a.targets,
            (std::vector<AlignmentTarget>{AlignmentTarget::capacity, AlignmentTarget::matching}));
  EXPECT_EQ(parse_recall_config(retrieval, "x.toml").model.bandwidths, std::vector<double>{1.0});
  EXPECT_NE(error_of(retrieval + "[model]\nbandwidths = [0.5, 0]\n").find("model.bandwidths"),
            std::string::npos);
  EXPECT_NE(error_of(retrieval + "[model]\nbandwidths = []\n").find("model.bandwidths"),
            std::string::npos);
  EXPECT_NE(error_of(retrieval + "[phase_a]\ntargets = [\"teacher\"]\n").find("phase_a.targets"),
            std::string::npos);
  EXPECT_NE(error_of(retrieval + "[phase_a]\ntarget = \"matching\"\n").find("phase_a.target"),
            std::string::npos);
  const std::string mqar = "[data]\ndataset = \"mqar\"\n";
  EXPECT_NE(error_of(mqar + "[phase_a]\ntargets = [\"capacity\"]\n").find("phase_a.targets"),
            std::string::npos);
  EXPECT_NE(
      error_of(mqar + "[experiment]\nvariants = [\"metric-favor\"]\n").find("experiment.variants"),
      std::string::npos);
  // An arm's own grid replaces the study-wide lists for that arm alone.
  const RecallConfig own = parse_recall_config(
      retrieval +
          "[model]\nbandwidths = [0.25, 0.5]\n[experiment]\nvariants = [\"softmax\", "
          "\"kernel-favor\"]\n[grid.\"kernel-favor\"]\nbandwidths = [0.35]\nlearning_rates = "
          "[0.003]\ntargets = [\"capacity\"]\n",
      "x.toml");
  ASSERT_EQ(own.arm_grids.count("kernel-favor"), 1u);
  EXPECT_EQ(*own.arm_grids.at("kernel-favor").bandwidths, std::vector<double>{0.35});
  EXPECT_EQ(recall_learning_rates(own, "kernel-favor"), std::vector<double>{0.003});
  EXPECT_EQ(recall_learning_rates(own, "softmax"), std::vector<double>{1e-3});
  EXPECT_NE(error_of(retrieval + "[grid.\"kernel-favor\"]\nbandwidths = [0.5]\n").find("grid"),
            std::string::npos);  // not an arm of the study
  EXPECT_NE(error_of(retrieval + "[grid.softmax]\nlearning_rates = [0]\n")
                .find("grid.softmax.learning_rates"),
            std::string::npos);
  const RecallConfig hybrid = parse_recall_config(
      mqar + "[model]\nshort_convolution = 3\nposition_embedding = false\n", "x.toml");
  EXPECT_EQ(hybrid.model.short_convolution, 3);
  EXPECT_FALSE(hybrid.model.position_embedding);
  EXPECT_NE(error_of(mqar + "[model]\nlayers = 1\nshort_convolution = 3\n")
                .find("model.short_convolution"),
            std::string::npos);
  EXPECT_NE(
      error_of(retrieval + "[model]\nshort_convolution = 3\n").find("model.short_convolution"),
      std::string::npos);  // an MQAR key
  EXPECT_NE(error_of(retrieval + "[model]\nfeatures = [2]\n[experiment]\nvariants = [\"taylor\"]\n")
                .find("experiment.variants"),
            std::string::npos);
  EXPECT_NE(error_of(retrieval + "[training]\nlearning_rates = [0.01, -1]\n")
                .find("training.learning_rates"),
            std::string::npos);
  EXPECT_NE(error_of(retrieval + "[training]\nearly_stop_accuracy = 1.5\n")
                .find("training.early_stop_accuracy"),
            std::string::npos);
}

TEST(RecallConfig, BadValuesGiveOneLineErrorsNamingTheKey) {
  const std::string mqar = "[data]\ndataset = \"mqar\"\n";
  EXPECT_NE(error_of(mqar + "lengths = [63]\npairs = [4]\n").find("pairs"), std::string::npos);
  EXPECT_NE(error_of(mqar + "lengths = [64]\npairs = [17]\n").find("4 × pairs"), std::string::npos);
  EXPECT_NE(error_of(mqar + "lengths = [64, 128]\npairs = [4]\n").find("data.lengths"),
            std::string::npos);
  const std::string retrieval = "[data]\ndataset = \"associative_retrieval\"\n";
  EXPECT_NE(error_of(retrieval + "pairs = [30]\nkey_symbols = 20\n").find("data.pairs"),
            std::string::npos);
  EXPECT_NE(error_of(retrieval + "pairs = [0]\n").find("data.pairs"), std::string::npos);
  EXPECT_NE(error_of(retrieval + "[experiment]\nvariants = [\"kernel-rff\"]\n")
                .find("experiment.variants"),
            std::string::npos);
  EXPECT_NE(error_of(retrieval + "[model]\nfeatures = [33]\n").find("model.features"),
            std::string::npos);
  EXPECT_NE(error_of(retrieval + "[training]\nsteps = 0\n").find("training.steps"),
            std::string::npos);
  EXPECT_NE(error_of(retrieval + "[model]\nheads = 2\n").find("model.heads"), std::string::npos);
  for (const std::string& toml :
       {mqar + "lengths = [63]\npairs = [4]\n", retrieval + "pairs = [30]\nkey_symbols = 20\n"})
    EXPECT_EQ(error_of(toml).find('\n'), std::string::npos) << "one line: " << error_of(toml);
}

// [model] normalise_keys is a study axis: a list gives every arm with a feature map one run per
// entry, a single name a list of one; softmax and uniform have no features and run once, with none.
// An unknown or repeated name is one line naming the key; cpm train keeps a single name.
TEST(RecallConfig, NormaliseKeysIsAListOfNormalisationsOrOneName) {
  const std::string retrieval =
      "[data]\ndataset = \"associative_retrieval\"\n[experiment]\nvariants = [\"softmax\", "
      "\"vanilla-favor\"]\n";
  const RecallConfig c = parse_recall_config(
      retrieval + "[model]\nnormalise_keys = [\"l2\", \"none\", \"l1\"]\n", "x.toml");
  EXPECT_EQ(c.model.normalisations,
            (std::vector<RecallNormalisation>{RecallNormalisation::l2, RecallNormalisation::none,
                                              RecallNormalisation::l1}));
  EXPECT_EQ(recall_normalisations(c, parse_recall_variant("vanilla-favor")),
            c.model.normalisations);
  EXPECT_EQ(recall_normalisations(c, parse_recall_variant("softmax")),
            std::vector<RecallNormalisation>{RecallNormalisation::none});
  EXPECT_EQ(recall_normalisations(c, parse_recall_variant("uniform")),
            std::vector<RecallNormalisation>{RecallNormalisation::none});
  EXPECT_EQ(parse_recall_config(retrieval + "[model]\nnormalise_keys = \"l1\"\n", "x.toml")
                .model.normalisations,
            std::vector<RecallNormalisation>{RecallNormalisation::l1});
  EXPECT_EQ(parse_recall_config(retrieval, "x.toml").model.normalisations,
            std::vector<RecallNormalisation>{RecallNormalisation::none});
  EXPECT_EQ(key_normalisation_of(RecallNormalisation::l2), KeyNormalisation::l2);
  EXPECT_EQ(key_normalisation_of(RecallNormalisation::none), KeyNormalisation::none);
  for (const std::string bad : {"[\"l2\", \"l3\"]", "\"l3\"", "[\"l2\", \"l2\"]", "[]", "2"}) {
    const std::string error = error_of(retrieval + "[model]\nnormalise_keys = " + bad + "\n");
    EXPECT_EQ(error.rfind("test.toml: model.normalise_keys: ", 0), 0u) << bad << ": " << error;
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  }
  EXPECT_NE(error_of(retrieval + "[model]\nnormalise_keys = \"l3\"\n").find("'l3'"),
            std::string::npos);
}

// [grid."<arm>".<normalisation>] bandwidths is the arm's τ grid under that normalisation alone
// (under "qk" the learned scale starts at τ on unit vectors); the other normalisations keep the
// arm's grid, arms without a grid [model] bandwidths. A normalisation outside the study, or a
// bad entry, is one line naming the key.
TEST(RecallConfig, AnArmsGridMayGiveANormalisationItsOwnBandwidths) {
  const std::string study =
      "[data]\ndataset = \"associative_retrieval\"\n[model]\nbandwidths = [0.5]\nnormalise_keys "
      "= [\"l2\", \"qk\"]\n[experiment]\nvariants = [\"vanilla-favor\", \"kernel-favor\"]\n"
      "[grid.\"vanilla-favor\"]\nbandwidths = [0.18, 0.25]\n";
  const RecallConfig c =
      parse_recall_config(study + "[grid.\"vanilla-favor\".qk]\nbandwidths = [1.5, 2]\n", "x.toml");
  EXPECT_EQ(recall_bandwidths(c, "vanilla-favor", RecallNormalisation::qk),
            (std::vector<double>{1.5, 2.0}));
  EXPECT_EQ(recall_bandwidths(c, "vanilla-favor", RecallNormalisation::l2),
            (std::vector<double>{0.18, 0.25}));
  EXPECT_EQ(recall_bandwidths(c, "kernel-favor", RecallNormalisation::qk),
            std::vector<double>{0.5});
  EXPECT_NE(error_of(study + "[grid.\"vanilla-favor\".l1]\nbandwidths = [1]\n").find("l1"),
            std::string::npos);
  const std::string bad = error_of(study + "[grid.\"vanilla-favor\".qk]\nbandwidths = [0]\n");
  EXPECT_NE(bad.find("grid.vanilla-favor.qk.bandwidths"), std::string::npos) << bad;
  EXPECT_EQ(bad.find('\n'), std::string::npos) << bad;
}

// "qk" (QK normalisation) is a normalisation of the list, or the one name; an arm that learns its
// input's scale itself (temperature-, metric-favor) or starts from the softmax teacher cannot take
// it: one line naming model.normalise_keys.
TEST(RecallConfig, QkNormalisationIsRefusedWhereTheArmCannotTakeIt) {
  const std::string retrieval = "[data]\ndataset = \"associative_retrieval\"\n";
  const RecallConfig c = parse_recall_config(
      retrieval +
          "[model]\nnormalise_keys = [\"l2\", \"qk\"]\n[experiment]\nvariants = [\"softmax\", "
          "\"kernel-favor\", \"taylor\"]\n",
      "x.toml");
  EXPECT_EQ(c.model.normalisations.back(), RecallNormalisation::qk);
  EXPECT_EQ(key_normalisation_of(RecallNormalisation::qk), KeyNormalisation::none);
  EXPECT_EQ(parse_recall_config(retrieval + "[model]\nnormalise_keys = \"qk\"\n", "x.toml")
                .model.normalisations,
            std::vector<RecallNormalisation>{RecallNormalisation::qk});
  for (const std::string arm : {"temperature-favor", "metric-favor", "vanilla-favor@softmax"}) {
    const std::string error = error_of(
        retrieval + "[model]\nnormalise_keys = [\"none\", \"qk\"]\n[experiment]\nvariants = [\"" +
        arm + "\"]\n");
    EXPECT_EQ(error.rfind("test.toml: model.normalise_keys: \"qk\"", 0), 0u)
        << arm << ": " << error;
    EXPECT_NE(error.find(arm), std::string::npos) << error;
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  }
  EXPECT_EQ(
      error_of(retrieval + "[model]\nnormalise_keys = [\"none\", \"l2\"]\n[experiment]\nvariants = "
                           "[\"temperature-favor\"]\n"),
      "");
}

TEST(RecallConfig, PhaseAAndTheRateDropHaveDefaultsAndOneLineErrors) {
  const std::string retrieval = "[data]\ndataset = \"associative_retrieval\"\n";
  const RecallConfig c = parse_recall_config(retrieval + "[training]\nsteps = 1000\n", "x.toml");
  EXPECT_EQ(c.phase_a.after_steps, 500);  // half of the steps
  EXPECT_EQ(c.phase_a.examples, 256);
  EXPECT_EQ(c.phase_a.dynamics.integrator, Integrator::minimize);
  EXPECT_EQ(c.phase_a.interaction.kernel.s, 63.0);  // d_key − 1 = 63
  EXPECT_EQ(c.training.drop_step, 0);
  const RecallVariant kernel = parse_recall_variant("kernel-favor");
  EXPECT_TRUE(kernel.particles && kernel.kernel && !kernel.trainable && !kernel.redraw);
  EXPECT_THROW(parse_recall_variant("kernel-softmaxfeat"), std::invalid_argument);
  const std::string mqar = "[data]\ndataset = \"mqar\"\n";
  EXPECT_EQ(parse_recall_config(mqar, "x.toml").phase_a.examples, 8);
  EXPECT_NE(error_of(mqar + "[phase_a]\ntargets = [\"matching\"]\n").find("phase_a.targets"),
            std::string::npos);
  EXPECT_NE(error_of(retrieval + "[training]\nsteps = 100\n[phase_a]\nafter_steps = 100\n")
                .find("phase_a.after_steps"),
            std::string::npos);
  EXPECT_NE(error_of(retrieval + "[training]\ndrop_factor = 0\n").find("training.drop_factor"),
            std::string::npos);
  EXPECT_NE(error_of(retrieval + "[training]\nsteps = 10\ndrop_step = 10\n").find("drop_step"),
            std::string::npos);
  EXPECT_NE(error_of(retrieval + "[phase_a]\nexamples = 0\n").find("phase_a.examples"),
            std::string::npos);
  EXPECT_NE(error_of(retrieval + "[phase_a.dynamics]\nbogus = 1\n").find("bogus"),
            std::string::npos);
}

}  // namespace
}  // namespace cpm
