#include "io/idx_reader.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "io/input_error.hpp"

namespace cpm {
namespace {

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("cpm_idx_test_" + name)).string();
}

IdxArray small_images() {
  IdxArray a;
  a.shape = {3, 2, 2};
  for (int i = 0; i < 12; ++i) a.data.push_back(static_cast<std::uint8_t>(20 * i));
  return a;
}

TEST(IdxReader, CompressedAndPlainFilesRoundTrip) {
  for (const std::string name : {"images.gz", "images.idx"}) {
    const std::string path = temp_path(name);
    write_idx(path, small_images());
    const IdxArray back = read_idx(path);
    EXPECT_EQ(back.shape, small_images().shape);
    EXPECT_EQ(back.data, small_images().data);
    const Eigen::MatrixXd rows = idx_rows(back, path);
    ASSERT_EQ(rows.rows(), 3);
    ASSERT_EQ(rows.cols(), 4);
    EXPECT_DOUBLE_EQ(rows(1, 2), 120.0 / 255.0);
    std::filesystem::remove(path);
  }
}

TEST(IdxReader, MissingTruncatedAndForeignFilesGiveErrorsNamingTheFile) {
  EXPECT_THROW(read_idx(temp_path("does_not_exist.gz")), InputError);
  const std::string path = temp_path("bad.idx");
  IdxArray a = small_images();
  write_idx(path, a);
  std::filesystem::resize_file(path, 20);  // header and 4 of 12 data bytes
  try {
    read_idx(path);
    FAIL() << "truncated file accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos);
  }
  std::ofstream(path, std::ios::binary) << "PK\x03\x04 not an idx file";
  EXPECT_THROW(read_idx(path), InputError);
  std::filesystem::remove(path);
}

// Found by fuzz/fuzz_idx.cpp: eight dimensions of 2^32 − 1 overflowed the element count (undefined
// behaviour) before the size check.
TEST(IdxReader, DimensionsWhoseProductOverflowsAreRefused) {
  const std::string path = temp_path("overflow.idx");
  std::string header = {0, 0, 8, 8};
  for (int d = 0; d < 8; ++d) header += std::string(4, '\xff');
  std::ofstream(path, std::ios::binary) << header;
  try {
    read_idx(path);
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), path + ": IDX array too large");
  }
  std::filesystem::remove(path);
}

// Found by fuzz/fuzz_idx.cpp: a header claiming a gigabyte over a few bytes of data made the reader
// allocate the gigabyte first; it now reads in blocks and reports the truncation.
TEST(IdxReader, AClaimedSizeBeyondTheDataIsATruncatedFile) {
  const std::string path = temp_path("claims.idx");
  std::ofstream(path, std::ios::binary) << std::string{0, 0, 8, 1, 0x40, 0, 0, 0} << "abc";
  try {
    read_idx(path);
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("truncated IDX file"), std::string::npos) << e.what();
  }
  std::filesystem::remove(path);
}

// The Debian package dataset-fashion-mnist: 60,000 training images of 28×28 pixels, ten
// classes of 6,000 each.
TEST(IdxReader, ReadsFashionMnistFromTheDebianPackage) {
  const std::string dir = "/usr/share/datasets/fashion-mnist/";
  if (!std::filesystem::exists(dir + "train-labels-idx1-ubyte.gz"))
    GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  const IdxArray labels = read_idx(dir + "train-labels-idx1-ubyte.gz");
  ASSERT_EQ(labels.shape, std::vector<std::int64_t>{60000});
  const Eigen::VectorXi y = idx_labels(labels, "labels");
  for (int c = 0; c < 10; ++c) EXPECT_EQ((y.array() == c).count(), 6000);
  const IdxArray images = read_idx(dir + "t10k-images-idx3-ubyte.gz");
  EXPECT_EQ(images.shape, (std::vector<std::int64_t>{10000, 28, 28}));
}

}  // namespace
}  // namespace cpm
