// read_checkpoint on damaged input: a one-line InputError naming the file, and the file left
// byte-identical (it is opened read-only).
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>

#include "io/h5md_reader.hpp"
#include "io/h5md_writer.hpp"
#include "io/hdf5_support.hpp"
#include "io/input_error.hpp"
#include "tests/scratch_directory.hpp"

namespace cpm {
namespace {

using testing_support::fresh_path;

std::string bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// Positions 1000.5 + k: a byte pattern easy to find in the file.
constexpr double kMarker = 1000.5;

std::string write_run(const std::string& name, bool checkpoint = true) {
  const std::string path = fresh_path(name);
  H5mdWriter writer(path, H5mdHeader{}, ParameterSet{}, 64, 2);
  Eigen::MatrixXd x(64, 2);
  for (Eigen::Index k = 0; k < x.size(); ++k) x.data()[k] = kMarker + static_cast<double>(k);
  writer.write_positions(0, 0.0, x);
  if (checkpoint) writer.write_checkpoint({0, 0.0, 1, 0, {}, ""});
  return path;
}

// Reading `path` throws a InputError whose one-line message starts with the path and contains
// `reason`; the file's bytes are unchanged.
void expect_rejected(const std::string& path, const std::string& reason) {
  const std::string before = bytes_of(path);
  try {
    read_checkpoint(path);
    ADD_FAILURE() << path << " was accepted";
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.rfind(path + ": ", 0), 0u) << message;
    EXPECT_NE(message.find(reason), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
  EXPECT_EQ(bytes_of(path), before) << "the reader modified " << path;
}

TEST(CheckpointValidation, IntactFileIsAcceptedAndLeftByteIdentical) {
  const std::string path = write_run("intact.h5");
  const std::string before = bytes_of(path);
  const Checkpoint c = read_checkpoint(path);
  EXPECT_EQ(c.positions(3, 1), kMarker + 64 + 3);
  EXPECT_EQ(bytes_of(path), before);
}

TEST(CheckpointValidation, TruncatedFileIsOneLineError) {
  const std::string path = write_run("truncated.h5");
  const std::string bytes = bytes_of(path);
  write_bytes(path, bytes.substr(0, bytes.size() / 2));
  expect_rejected(path, "truncated");
}

TEST(CheckpointValidation, DamagedParticleDataFailsItsChecksum) {
  const std::string path = write_run("damaged.h5");
  std::string bytes = bytes_of(path);
  char pattern[sizeof(double)];
  const double probe = kMarker + 10;
  std::memcpy(pattern, &probe, sizeof probe);
  const std::size_t at = bytes.find(std::string(pattern, sizeof pattern));
  ASSERT_NE(at, std::string::npos);
  bytes[at + 3] ^= 0x10;  // one flipped bit inside the positions
  write_bytes(path, bytes);
  expect_rejected(
      path, "particles/trajectory/position/value: data error detected by Fletcher32 checksum");
}

TEST(CheckpointValidation, CheckpointPastTheLastFrameIsOneLineError) {
  const std::string path = write_run("past_end.h5");
  {
    H5::H5File file(path, H5F_ACC_RDWR);
    hdf5::write_attribute(file.openGroup("checkpoint"), "position_frame", std::int64_t{5});
  }
  expect_rejected(path, "checkpoint refers to position frame 5");
}

TEST(CheckpointValidation, NonHdf5FileIsOneLineError) {
  const std::string path = fresh_path("text.h5");
  write_bytes(path, "time,energy\n0,1\n");
  expect_rejected(path, "not an HDF5 file");
}

TEST(CheckpointValidation, DamagedSuperblockIsOneLineError) {
  const std::string path = write_run("superblock.h5");
  std::string bytes = bytes_of(path);
  for (std::size_t i = 8; i < 48; ++i) bytes[i] = static_cast<char>(0xA5);  // after the signature
  write_bytes(path, bytes);
  expect_rejected(path, "");
}

TEST(CheckpointValidation, MissingFileAndRunWithoutCheckpointAreNamed) {
  EXPECT_THROW(
      {
        try {
          read_checkpoint(fresh_path("absent.h5"));
        } catch (const InputError& e) {
          EXPECT_NE(std::string(e.what()).find("no such file"), std::string::npos);
          throw;
        }
      },
      InputError);
  expect_rejected(write_run("no_checkpoint.h5", false), "no checkpoint");
}

}  // namespace
}  // namespace cpm
