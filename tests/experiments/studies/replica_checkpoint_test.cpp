// The replica checkpoint file: rows come back bit for bit (NaN and infinities included), rows of
// any length under width 0, and a damaged file is refused naming the line.
#include "experiments/studies/replica_checkpoint.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "io/input_error.hpp"
#include "tests/command_runner.hpp"

namespace cpm {
namespace {

TEST(ReplicaCheckpoint, RowsComeBackBitForBit) {
  const auto dir = testing::fresh_directory("replica_checkpoint");
  const std::string path = (dir / "replicas.checkpoint").string();
  ReplicaCheckpoint c{"features", 42, 5, 3, {}};
  c.rows[0] = {0.1, -1e-300, std::numeric_limits<double>::infinity()};
  c.rows[3] = {std::nextafter(1.0, 2.0), std::nan(""), 7.0};
  write_replica_checkpoint(path, c);
  const ReplicaCheckpoint r = read_replica_checkpoint(path);
  EXPECT_EQ(r.study, "features");
  EXPECT_EQ(r.fingerprint, 42u);
  EXPECT_EQ(r.count, 5);
  EXPECT_EQ(r.width, 3);
  ASSERT_EQ(r.rows.size(), 2u);
  EXPECT_EQ(r.rows.at(0)[1], -1e-300);
  EXPECT_TRUE(std::isinf(r.rows.at(0)[2]));
  EXPECT_EQ(r.rows.at(3)[0], std::nextafter(1.0, 2.0));
  EXPECT_TRUE(std::isnan(r.rows.at(3)[1]));
}

TEST(ReplicaCheckpoint, WidthZeroKeepsRowsOfAnyLength) {
  const auto dir = testing::fresh_directory("replica_checkpoint_ragged");
  const std::string path = (dir / "replicas.checkpoint").string();
  ReplicaCheckpoint c{"train", 7, 3, 0, {}};
  c.rows[0] = {1.0, 2.0};
  c.rows[1] = {};
  c.rows[2] = {0.5, 0.25, 0.125, 3.0};
  write_replica_checkpoint(path, c);
  const ReplicaCheckpoint r = read_replica_checkpoint(path);
  EXPECT_EQ(r.rows, c.rows);
}

TEST(ReplicaCheckpoint, ADamagedFileIsRefusedNamingTheLine) {
  const auto dir = testing::fresh_directory("replica_checkpoint_damaged");
  const auto path = dir / "replicas.checkpoint";
  const std::string header = "cpm replica checkpoint 1\nstudy ldp\nfingerprint 1\ntable 4 2\n";
  for (const std::string& rows : {std::string("0 0x1p+0\n"), std::string("0 0x1p+0 1 2\n"),
                                  std::string("9 0x1p+0 0x1p+0\n"), std::string("0 0x1p+0 x\n")}) {
    testing::write_file(path, header + rows);
    try {
      read_replica_checkpoint(path.string());
      ADD_FAILURE() << rows;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("line 5"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace cpm
