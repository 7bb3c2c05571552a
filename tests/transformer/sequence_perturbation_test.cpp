// Perturbations of token sequences for the robustness evaluation.
#include "transformer/sequence_perturbation.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "transformer/tokenizer.hpp"

namespace cpm {
namespace {

TEST(SequencePerturbation, WordDropoutKeepsTheSeparatorAndAtLeastOneToken) {
  const std::vector<int> t = {5, 6, Tokenizer::kSeparator, 7, 8, 9, 10, 11, 12, 13};
  std::size_t total = 0;
  for (std::uint64_t i = 0; i < 400; ++i) {
    const auto d = word_dropout(t, 0.2, 1, i);
    EXPECT_NE(std::find(d.begin(), d.end(), Tokenizer::kSeparator), d.end());
    total += d.size();
  }
  // Nine droppable tokens, each kept with probability 0.8, plus the separator.
  EXPECT_NEAR(static_cast<double>(total) / 400, 1 + 9 * 0.8, 0.2);
  EXPECT_EQ(word_dropout({4}, 0.99, 1, 3).size(), 1u);
  EXPECT_EQ(word_dropout(t, 0.2, 1, 7), word_dropout(t, 0.2, 1, 7));
}

TEST(SequencePerturbation, AdjacentSwapsPermuteNeighboursOnly) {
  std::vector<int> t(50);
  std::iota(t.begin(), t.end(), 0);
  const auto s = adjacent_swaps(t, 0.3, 2, 0);
  auto sorted = s;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, t);
  int moved = 0;
  for (int i = 0; i < 50; ++i) {
    EXPECT_LE(std::abs(s[i] - i), 1);
    moved += s[i] != i;
  }
  EXPECT_GT(moved, 0);
}

// Sequences of random words 3..10 whose label is whether word 2 occurs: after Phase A (gradient
// flow, β = ∞) the alignment A(Ω) of every head has grown.
}  // namespace
}  // namespace cpm
