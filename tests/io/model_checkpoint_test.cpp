// Model checkpoint files: a round trip keeps everything; a file of another kind is refused in one
// line.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "io/input_error.hpp"
#include "io/model_checkpoint.hpp"

namespace cpm {
namespace {

TEST(ModelCheckpoint, RoundTripKeepsDescriptionParametersParticlesAndVocabulary) {
  ModelCheckpoint c;
  c.description.set("d_model", std::int64_t{8});
  c.description.set("feature_epsilon", 1e-5);
  c.description.set("variant", std::string("kernel-softmaxfeat"));
  c.parameters = {1.5f, -2.25f, 3.0f};
  c.particles = {0.5f, 0.25f};
  c.vocabulary = {"<pad>", "<unk>", "<sep>", "film", "é"};
  const std::string path =
      (std::filesystem::temp_directory_path() / "cpm_model_checkpoint.h5").string();
  save_model_checkpoint(path, c);
  const ModelCheckpoint r = load_model_checkpoint(path);
  EXPECT_EQ(r.description, c.description);
  EXPECT_EQ(r.parameters, c.parameters);
  EXPECT_EQ(r.particles, c.particles);
  EXPECT_EQ(r.vocabulary, c.vocabulary);
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
