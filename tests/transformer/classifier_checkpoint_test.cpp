// A classifier through its checkpoint: the shape and weights come back; a checkpoint of another
// model size is refused in one line naming the differing sizes.
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

}  // namespace
}  // namespace cpm
