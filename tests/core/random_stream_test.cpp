#include "core/random_stream.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace cpm {
namespace {

TEST(RandomStream, SameKeyGivesSameNumbersAndSeekRestartsAStep) {
  RandomStream a(42, RandomPurpose::langevin_noise, 3, 17, 5);
  RandomStream b(42, RandomPurpose::langevin_noise, 3, 17, 5);
  std::vector<double> first;
  for (int i = 0; i < 100; ++i) {
    first.push_back(a.normal());
    EXPECT_EQ(first.back(), b.normal());
  }
  a.seek(5);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(first[i], a.normal());
}

TEST(RandomStream, DifferentSeedReplicaParticleStepOrPurposeGiveDifferentNumbers) {
  const double base = RandomStream(1, RandomPurpose::langevin_noise, 0, 0, 0).uniform();
  EXPECT_NE(base, RandomStream(2, RandomPurpose::langevin_noise, 0, 0, 0).uniform());
  EXPECT_NE(base, RandomStream(1, RandomPurpose::initial_positions, 0, 0, 0).uniform());
  EXPECT_NE(base, RandomStream(1, RandomPurpose::langevin_noise, 1, 0, 0).uniform());
  EXPECT_NE(base, RandomStream(1, RandomPurpose::langevin_noise, 0, 1, 0).uniform());
  EXPECT_NE(base, RandomStream(1, RandomPurpose::langevin_noise, 0, 0, 1).uniform());
  EXPECT_NE(base,
            RandomStream(1, RandomPurpose::langevin_noise, 0, std::uint64_t{1} << 32, 0).uniform());
}

TEST(RandomStream, UniformsAndNormalsHaveTheRightMoments) {
  // Over many particles' streams (the way Langevin uses them): moments within 5 standard errors.
  const int n = 200000;
  double su = 0, su2 = 0, sn = 0, sn2 = 0, sn4 = 0;
  for (int k = 0; k < n; ++k) {
    RandomStream s(9, RandomPurpose::langevin_noise, 0, k, 0);
    const double u = s.uniform();
    ASSERT_GT(u, 0.0);
    ASSERT_LT(u, 1.0);
    su += u;
    su2 += u * u;
    const double z = s.normal();
    sn += z;
    sn2 += z * z;
    sn4 += z * z * z * z;
  }
  EXPECT_NEAR(su / n, 0.5, 5 * std::sqrt(1.0 / 12 / n));
  EXPECT_NEAR(su2 / n, 1.0 / 3, 5 * std::sqrt(4.0 / 45 / n));
  EXPECT_NEAR(sn / n, 0.0, 5 * std::sqrt(1.0 / n));
  EXPECT_NEAR(sn2 / n, 1.0, 5 * std::sqrt(2.0 / n));
  EXPECT_NEAR(sn4 / n, 3.0, 5 * std::sqrt(96.0 / n));
}

}  // namespace
}  // namespace cpm
