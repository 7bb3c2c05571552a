// The recipe writer of the HDF5 fuzz targets, and its seeds: the seed corpus must describe files
// that cpm reads back, or the fuzzer would start from rejected inputs only.
#include "fuzz/hdf5_recipe.hpp"

#include <gtest/gtest.h>

#include <H5Cpp.h>

#include <cmath>
#include <filesystem>

#include "io/h5md_reader.hpp"
#include "io/hdf5_support.hpp"
#include "io/text_file.hpp"
#include "tests/scratch_directory.hpp"
#include "transformer/classifier_checkpoint.hpp"

namespace cpm {
namespace {

const std::string kCorpus = std::string(CPM_SOURCE_DIR) + "/fuzz/corpus/";

TEST(Hdf5Recipe, WritesTypedAttributesAndDatasets) {
  const std::string path = testing_support::fresh_path("recipe.h5");
  fuzz::write_hdf5_recipe(
      "# a comment\n"
      "attribute /a/b n i64 scalar 7\n"
      "attribute /a/b x f64 3 1.5 nan\n"
      "attribute /a names string 3 one|t\\|w\\\\o|li\\nne\n"
      "dataset /a/d f32 2x3 chunked 1 2\n"
      "dataset /a/huge f64 1000000000000x3 chunked none\n"
      "dataset /a/bad f64 12qx3 chunked 1\n"
      "nonsense line\n",
      path);
  H5::H5File file(path, H5F_ACC_RDONLY);
  const H5::Group b = file.openGroup("/a/b");
  EXPECT_EQ(hdf5::read_int64_attribute(b, "n"), 7);
  const std::vector<double> x = hdf5::read_doubles_attribute(b, "x");
  ASSERT_EQ(x.size(), 3u);
  EXPECT_EQ(x[0], 1.5);
  EXPECT_TRUE(std::isnan(x[1]));
  EXPECT_EQ(x[2], 1.5);  // values repeat to fill the shape
  EXPECT_EQ(hdf5::read_strings_attribute(file.openGroup("/a"), "names"),
            (std::vector<std::string>{"one", "t|w\\o", "li\nne"}));
  std::vector<hsize_t> shape;
  EXPECT_EQ(hdf5::read_doubles(file.openDataSet("/a/d"), shape),
            (std::vector<double>{1, 2, 1, 2, 1, 2}));
  EXPECT_EQ(shape, (std::vector<hsize_t>{2, 3}));
  const H5::DataSet huge = file.openDataSet("/a/huge");
  EXPECT_EQ(huge.getSpace().getSimpleExtentNpoints(), hssize_t{3000000000000});
  EXPECT_EQ(huge.getStorageSize(), 0u);  // declared only
  EXPECT_FALSE(file.nameExists("/a/bad"));
}

// Found by fuzz/fuzz_run_checkpoint.cpp: a dataset that only declares its size (3·10¹² values,
// nothing stored) made the reader allocate the declared size; it is refused as damaged.
TEST(Hdf5Recipe, ADatasetLargerThanWhatItStoresIsRefusedBeforeAllocating) {
  const std::string path = testing_support::fresh_path("declared.h5");
  fuzz::write_hdf5_recipe(
      "dataset /huge f64 1000000000000x3 chunked none\n"
      "dataset /frames f64 1000000x1000000 chunked none\n",
      path);
  H5::H5File file(path, H5F_ACC_RDONLY);
  std::vector<hsize_t> shape;
  try {
    hdf5::read_doubles(file.openDataSet("/huge"), shape);
    FAIL() << "read";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("declares 24000000000000 bytes but holds 0"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(hdf5::read_double_frame(file.openDataSet("/frames"), 0), std::runtime_error);
}

// Found by fuzz/fuzz_run_checkpoint.cpp: a string attribute holding an array (the FFT wisdom as 157
// variable-length strings) overflowed the buffer the C++ API reads one string into.
TEST(Hdf5Recipe, AStringArrayWhereOneStringIsReadIsRefused) {
  const std::string path = testing_support::fresh_path("strings.h5");
  fuzz::write_hdf5_recipe("attribute / v vstring 157 a|b\nattribute / f string 3 abc|d\n", path);
  const H5::H5File file(path, H5F_ACC_RDONLY);
  for (const std::string name : {"v", "f"}) {
    try {
      hdf5::read_string_attribute(file.openGroup("/"), name);
      FAIL() << name << " read";
    } catch (const std::runtime_error& e) {
      EXPECT_EQ(std::string(e.what()), "attribute " + name + " is not a scalar");
    }
  }
}

TEST(Hdf5Recipe, RunSeedsAreCheckpointsCpmRestartsFrom) {
  for (const auto& [seed, n, dim] : {std::tuple{"run_1d_grid", 8, 1}, {"run_2d", 6, 2}}) {
    const std::string path = testing_support::fresh_path(std::string(seed) + ".h5");
    fuzz::write_hdf5_recipe(read_text_file(kCorpus + "fuzz_run_checkpoint/" + seed), path);
    const Checkpoint c = read_checkpoint(path);
    EXPECT_EQ(c.positions.rows(), n) << seed;
    EXPECT_EQ(c.positions.cols(), dim) << seed;
    EXPECT_EQ(c.grid.has_value(), dim == 1) << seed;
  }
}

TEST(Hdf5Recipe, ModelSeedsLoadIntoAClassifier) {
  for (const std::string seed : {"linear_favor", "softmax"}) {
    const std::string path = testing_support::fresh_path(std::string(seed) + ".h5");
    fuzz::write_hdf5_recipe(read_text_file(kCorpus + "fuzz_model_checkpoint/" + seed), path);
    const ModelCheckpoint checkpoint = load_model_checkpoint(path);
    EXPECT_EQ(checkpoint.vocabulary.size(), 283u) << seed;
    const ModelShape shape = checkpoint_shape(checkpoint, path);
    TransformerClassifier<float> model(shape, 1, shape.max_length);
    EXPECT_NO_THROW(load_weights(model, checkpoint, path)) << seed;
  }
}

}  // namespace
}  // namespace cpm
