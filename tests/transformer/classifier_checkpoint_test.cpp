// A classifier through its checkpoint: the shape and weights come back; a checkpoint of another
// model size is refused in one line naming the differing sizes; a damaged description (sizes out
// of range, a parameter count that does not fit them, a word list without the special tokens —
// found by fuzz/fuzz_model_checkpoint.cpp) is refused before a model of that shape is built.
#include "transformer/classifier_checkpoint.hpp"

#include <gtest/gtest.h>

#include <filesystem>

#include "io/input_error.hpp"

namespace cpm {
namespace {

ModelShape small_shape() {
  ModelShape s;
  s.vocabulary = 5;
  s.max_length = 6;
  s.d_model = 8;
  s.heads = 2;
  s.layers = 1;
  s.d_ff = 8;
  s.features = 4;
  s.feature_map = {FeatureMapKind::softmaxfeat, 1e-5};
  s.qk_tied = true;
  return s;
}

TEST(ClassifierCheckpoint, ShapeParametersAndParticlesSurviveTheFile) {
  TransformerClassifier<float> model(small_shape(), 2, 6);
  model.initialise_parameters(3);
  for (std::size_t i = 0; i < model.particles().size(); ++i) model.particles()[i] = 0.1f * i;
  const std::string path =
      (std::filesystem::temp_directory_path() / "cpm_classifier_checkpoint.h5").string();
  save_model_checkpoint(path, classifier_checkpoint(model, "kernel-softmaxfeat", "sst2",
                                                    {"<pad>", "<unk>", "<sep>", "film", "é"}));
  const ModelCheckpoint c = load_model_checkpoint(path);
  const ModelShape s = checkpoint_shape(c, path);
  EXPECT_EQ(s.vocabulary, 5);
  EXPECT_EQ(s.feature_map.kind, FeatureMapKind::softmaxfeat);
  EXPECT_DOUBLE_EQ(s.feature_map.epsilon, 1e-5);
  EXPECT_TRUE(s.qk_tied);
  EXPECT_EQ(checkpoint_text(c, "variant", path), "kernel-softmaxfeat");
  TransformerClassifier<float> loaded(s, 1, 6);
  load_weights(loaded, c, path);
  EXPECT_EQ(loaded.parameters(), model.parameters());
  EXPECT_EQ(loaded.particles(), model.particles());
}

TEST(ClassifierCheckpoint, AnotherModelSizeIsRefusedInOneLine) {
  ModelShape other = small_shape();
  other.d_model = 16;
  try {
    require_same_shape(other, small_shape(), "m.h5");
    FAIL() << "no error for another model size";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "m.h5: checkpoint is for another model size: d_model 8 (model 16)");
  }
}

ModelCheckpoint checkpoint_of(const ModelShape& shape) {
  TransformerClassifier<float> model(shape, 1, shape.max_length);
  std::vector<std::string> words = {"<pad>", "<unk>", "<sep>"};
  while (static_cast<int>(words.size()) < shape.vocabulary) words.push_back("w");
  return classifier_checkpoint(model, "v", "sst2", words);
}

void expect_refused(const ModelCheckpoint& c, const std::string& reason) {
  try {
    checkpoint_shape(c, "m.h5");
    FAIL() << "accepted: " << reason;
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("m.h5: "), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(reason), std::string::npos) << e.what();
  }
}

TEST(ClassifierCheckpoint, TheParameterCountOfEveryLayoutIsAccepted) {
  for (const bool tied : {false, true})
    for (const AttentionKind attention : {AttentionKind::linear, AttentionKind::softmax})
      for (const int layers : {1, 3}) {
        ModelShape s = small_shape();
        s.qk_tied = tied;
        s.attention = attention;
        s.layers = layers;
        EXPECT_NO_THROW(checkpoint_shape(checkpoint_of(s), "m.h5"));
      }
}

TEST(ClassifierCheckpoint, DamagedDescriptionsAreRefusedInOneLine) {
  const ModelCheckpoint good = checkpoint_of(small_shape());
  ModelCheckpoint c = good;
  c.description.set("d_model", std::int64_t{1} << 40);
  expect_refused(c, "model.d_model = 1099511627776 is out of range");
  c = good;
  c.description.set("layers", std::int64_t{2000});
  expect_refused(c, "parameter count does not match the model shape");
  c = good;
  c.parameters.pop_back();
  expect_refused(c, "parameter count does not match the model shape");
  c = good;
  c.description.set("heads", std::int64_t{3});
  expect_refused(c, "is not divisible by heads = 3");
  c = good;
  c.vocabulary[0] = "the";
  expect_refused(c, "starting with <pad>, <unk>, <sep>");
  c = good;
  c.vocabulary.pop_back();
  expect_refused(c, "not a vocabulary of 5 words");
}

}  // namespace
}  // namespace cpm
