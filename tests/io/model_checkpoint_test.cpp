// Model checkpoints: a round trip keeps everything; another model size is refused in one line.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "io/input_error.hpp"
#include "io/model_checkpoint.hpp"

namespace cpm {
namespace {

TEST(ModelCheckpoint, RoundTripKeepsShapeParametersParticlesAndVocabulary) {
  ModelCheckpoint c;
  c.shape.vocabulary = 5;
  c.shape.d_model = 8;
  c.shape.heads = 2;
  c.shape.feature_map = {FeatureMapKind::softmaxfeat, 1e-5};
  c.shape.qk_tied = true;
  c.variant = "kernel-softmaxfeat";
  c.dataset = "sst2";
  c.parameters = {1.5f, -2.25f, 3.0f};
  c.particles = {0.5f, 0.25f};
  c.vocabulary = {"<pad>", "<unk>", "<sep>", "film", "é"};
  const std::string path =
      (std::filesystem::temp_directory_path() / "cpm_model_checkpoint.h5").string();
  save_model_checkpoint(path, c);
  const ModelCheckpoint r = load_model_checkpoint(path);
  EXPECT_EQ(r.shape.vocabulary, 5);
  EXPECT_EQ(r.shape.feature_map.kind, FeatureMapKind::softmaxfeat);
  EXPECT_DOUBLE_EQ(r.shape.feature_map.epsilon, 1e-5);
  EXPECT_TRUE(r.shape.qk_tied);
  EXPECT_EQ(r.variant, c.variant);
  EXPECT_EQ(r.parameters, c.parameters);
  EXPECT_EQ(r.particles, c.particles);
  EXPECT_EQ(r.vocabulary, c.vocabulary);
  EXPECT_NO_THROW(require_same_shape(c.shape, r.shape, path));
  ModelShape other = c.shape;
  other.d_model = 16;
  try {
    require_same_shape(other, r.shape, path);
    FAIL() << "no error for another model size";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              path + ": checkpoint is for another model size: d_model 8 (model 16)");
  }
}

TEST(ModelCheckpoint, NonCheckpointFileIsRefusedInOneLine) {
  const std::string path =
      (std::filesystem::temp_directory_path() / "cpm_not_a_checkpoint.h5").string();
  std::ofstream(path) << "not hdf5";
  try {
    load_model_checkpoint(path);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).find(path + ": not a readable cpm model checkpoint"), 0u);
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
  }
}

}  // namespace
}  // namespace cpm
