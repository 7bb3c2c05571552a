#include "core/random_stream.hpp"

#include <Random123/philox.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace cpm {
namespace {

// Random123's known-answer vectors for Philox4x32-10 (the "philox4x32 10" lines of its
// tests/kat_vectors): counter (4 words) and key (2 words) in, four words out.
TEST(RandomStream, PhiloxRoundFunctionMatchesRandom123KnownAnswers) {
  struct Vector {
    std::array<std::uint32_t, 4> counter;
    std::array<std::uint32_t, 2> key;
    std::array<std::uint32_t, 4> expected;
  };
  const Vector vectors[] = {
      {{0x00000000, 0x00000000, 0x00000000, 0x00000000},
       {0x00000000, 0x00000000},
       {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
      {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
       {0xffffffff, 0xffffffff},
       {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
      {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
       {0xa4093822, 0x299f31d0},
       {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
  };
  for (const Vector& v : vectors)
    EXPECT_EQ(random_detail::philox4x32_10(v.counter, v.key), v.expected)
        << std::hex << v.counter[0] << " " << v.key[0];
}

// The same block function as Random123's own (Debian's librandom123-dev) on counters and keys
// drawn at random, the words' high bits included.
TEST(RandomStream, PhiloxRoundFunctionEqualsRandom123OnRandomCountersAndKeys) {
  using Philox = r123::Philox4x32_R<10>;
  std::mt19937 engine(2024);
  auto word = [&engine] { return static_cast<std::uint32_t>(engine()); };
  for (int trial = 0; trial < 10000; ++trial) {
    const std::array<std::uint32_t, 4> counter = {word(), word(), word(), word()};
    const std::array<std::uint32_t, 2> key = {word(), word()};
    const Philox::ctr_type expected =
        Philox()({{counter[0], counter[1], counter[2], counter[3]}}, {{key[0], key[1]}});
    const std::array<std::uint32_t, 4> got = random_detail::philox4x32_10(counter, key);
    ASSERT_TRUE(std::equal(got.begin(), got.end(), expected.begin())) << "trial " << trial;
  }
}

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

// Every use of a seed has its own purpose; two purposes share a stream only if φ·(code₁ − code₂)
// (mod 2⁶⁴) falls within the replicas one of them uses. No pair of purposes may do so.
TEST(RandomStream, NoTwoPurposesShareAStreamWithinTheReplicasTheyUse) {
  using P = RandomPurpose;
  const std::vector<P> all = {P::initial_positions,
                              P::langevin_noise,
                              P::alignment_batches,
                              P::sliced_directions,
                              P::bootstrap,
                              P::image_subsample,
                              P::test_inputs,
                              P::synthetic_data,
                              P::importance_draws,
                              P::training_order,
                              P::dropout,
                              P::parameter_init,
                              P::phase_a_sequences,
                              P::text_split,
                              P::word_dropout,
                              P::word_swaps,
                              P::validation_split,
                              P::label_permutation,
                              P::associative_retrieval,
                              P::mqar_sequences,
                              P::qmc_randomisation,
                              P::spectral_mixing,
                              P::data_projection};
  const auto start = [](P p) { return random_detail::kGolden * static_cast<std::uint64_t>(p); };
  for (P p : all) {
    EXPECT_GT(replica_count(p), 0u);
    for (P q : all) {
      if (p == q) continue;
      // Replica r of p is replica r + (start(p) − start(q)) of q: out of q's range for every r.
      const std::uint64_t gap = start(p) - start(q);
      EXPECT_TRUE(gap >= replica_count(q) && gap <= -replica_count(p))
          << static_cast<std::uint64_t>(p) << " and " << static_cast<std::uint64_t>(q);
    }
  }
}

TEST(RandomStream, OffsetCodesKeyTheStreamsOfTheirBaseAtShiftedReplicas) {
  const std::uint64_t code = random_detail::offset_code(4, 11);
  RandomStream shifted(9, static_cast<RandomPurpose>(code), 2, 5);
  RandomStream base(9, static_cast<RandomPurpose>(4), 13, 5);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(shifted.uniform(), base.uniform());
}

TEST(RandomStream, ShuffleIsAPermutationThatDependsOnTheStreamOnly) {
  const std::vector<std::size_t> a =
      random_permutation(1000, RandomStream(5, RandomPurpose::test_inputs, 0, 0));
  std::vector<std::size_t> sorted = a;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0; i < sorted.size(); ++i) ASSERT_EQ(sorted[i], i);
  EXPECT_EQ(a, random_permutation(1000, RandomStream(5, RandomPurpose::test_inputs, 0, 0)));
  EXPECT_NE(a, random_permutation(1000, RandomStream(6, RandomPurpose::test_inputs, 0, 0)));
}

// Each of the 3! orders of three items appears with frequency 1/6 (χ² test, 5 degrees of freedom,
// 60,000 shuffles: the 0.999 quantile is 20.5).
TEST(RandomStream, ShuffleAndShufflePrefixAreUniform) {
  for (const bool prefix : {false, true}) {
    std::vector<int> counts(9, 0);
    for (std::uint64_t trial = 0; trial < 60000; ++trial) {
      std::vector<int> v = {0, 1, 2};
      RandomStream s(11, RandomPurpose::test_inputs, 0, trial);
      if (prefix)
        shuffle_prefix(v, 2, s);
      else
        shuffle(v, s);
      ++counts[v[0] * 3 + v[1]];
    }
    double chi2 = 0.0;
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 3; ++b)
        if (a != b) chi2 += std::pow(counts[a * 3 + b] - 10000.0, 2) / 10000.0;
    EXPECT_LT(chi2, 20.5) << (prefix ? "shuffle_prefix" : "shuffle");
  }
}

}  // namespace
}  // namespace cpm
