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

TEST(RecallConfig, ARecallDatasetSelectsTheRecallStudy) {
  EXPECT_TRUE(is_recall_config("[data]\ndataset = \"mqar\"\n", "x.toml"));
  EXPECT_TRUE(is_recall_config("[data]\ndataset = \"associative_retrieval\"\n", "x.toml"));
  EXPECT_FALSE(is_recall_config("[data]\ndataset = \"sst2\"\n", "x.toml"));
  EXPECT_FALSE(is_recall_config("", "x.toml"));
  EXPECT_FALSE(is_recall_config("[data\n", "x.toml"));  // the train reader reports the syntax
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

}  // namespace
}  // namespace cpm
