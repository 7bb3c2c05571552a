// The [training] and [model] keys every Transformer training shares: `cpm train`'s classifier and
// the recall studies accept the same values and refuse the same ones with the same line.
#include <gtest/gtest.h>

#include <functional>

#include "config/recall_config.hpp"
#include "config/train_config.hpp"
#include "io/input_error.hpp"

namespace cpm {
namespace {

std::string error_of(const std::function<void()>& parse) {
  try {
    parse();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

std::string train_error(const std::string& toml) {
  return error_of([&] { parse_train_config(toml, "test.toml"); });
}

std::string recall_error(const std::string& toml) {
  return error_of([&] {
    parse_recall_config("[data]\ndataset = \"associative_retrieval\"\n" + toml, "test.toml");
  });
}

TEST(TrainingSections, TheSharedKeysHaveOneRuleForEveryTraining) {
  const std::vector<std::string> refused = {"[training]\nclip_norm = -1.0\n",
                                            "[training]\nlearning_rate = 0.0\n",
                                            "[training]\nwarmup_steps = -1\n",
                                            "[training]\nweight_decay = -0.1\n",
                                            "[training]\nmin_learning_rate_ratio = 2.0\n",
                                            "[model]\nfeature_epsilon = 1.5\n",
                                            "[model]\nparticle_init = \"grid\"\n"};
  for (const std::string& toml : refused) {
    const std::string train = train_error(toml);
    EXPECT_FALSE(train.empty()) << toml;
    EXPECT_EQ(train, recall_error(toml)) << toml;
    EXPECT_EQ(train.find('\n'), std::string::npos) << train;
  }
  const std::vector<std::string> accepted = {"[training]\nclip_norm = 0.0\n",
                                             "[training]\nwarmup_steps = 0\n",
                                             "[model]\nfeature_epsilon = 0.0\n"};
  for (const std::string& toml : accepted) {
    EXPECT_EQ(train_error(toml), "") << toml;
    EXPECT_EQ(recall_error(toml), "") << toml;
  }
}

// normalise_keys is one name for cpm train and a study axis for cpm recall: a list, and a name that
// reads as a list of one.
TEST(TrainingSections, TrainTakesOneKeyNormalisationRecallAList) {
  EXPECT_EQ(parse_train_config("[model]\nnormalise_keys = \"l2\"\nattention = \"vanilla-favor\"\n",
                               "test.toml")
                .model.normalise_keys,
            KeyNormalisation::l2);
  EXPECT_NE(train_error("[model]\nnormalise_keys = [\"l2\"]\n").find("model.normalise_keys"),
            std::string::npos);
  EXPECT_NE(train_error("[model]\nnormalise_keys = \"l3\"\n").find("model.normalise_keys"),
            std::string::npos);
  EXPECT_EQ(recall_error("[model]\nnormalise_keys = [\"l2\"]\n"), "");
  EXPECT_EQ(recall_error("[model]\nnormalise_keys = \"l2\"\n"), "");
}

TEST(TrainingSections, EachTrainingKeepsItsOwnDefaults) {
  const TrainConfig train = parse_train_config("", "test.toml");
  EXPECT_EQ(train.training.warmup_steps, 100);
  EXPECT_EQ(train.training.clip_norm, 1.0);
  EXPECT_EQ(train.training.min_learning_rate_ratio, 0.1);
  const RecallConfig recall =
      parse_recall_config("[data]\ndataset = \"associative_retrieval\"\n", "test.toml");
  EXPECT_EQ(recall.training.warmup_steps, 0);
  EXPECT_EQ(recall.training.clip_norm, 0.0);
  EXPECT_EQ(recall.training.min_learning_rate_ratio, 1.0);
  EXPECT_EQ(recall.training.weight_decay, 0.0);
}

}  // namespace
}  // namespace cpm
