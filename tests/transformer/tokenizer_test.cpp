// The word tokenizer: splitting, vocabulary by count, unknown words, sentence pairs.
#include <gtest/gtest.h>

#include "transformer/tokenizer.hpp"

namespace cpm {
namespace {

TEST(Tokenizer, LowerCasesAndSplitsPunctuation) {
  EXPECT_EQ(Tokenizer::split("It's  GREAT,really!"),
            (std::vector<std::string>{"it", "'", "s", "great", ",", "really", "!"}));
  EXPECT_EQ(Tokenizer::split("  \t "), std::vector<std::string>{});
}

TEST(Tokenizer, VocabularyKeepsWordsSeenMinCountTimesMostFrequentFirst) {
  const Tokenizer t = Tokenizer::build({"a b b c", "b a d", "e"}, 2);
  EXPECT_EQ(t.vocabulary(), (std::vector<std::string>{"<pad>", "<unk>", "<sep>", "b", "a"}));
  EXPECT_EQ(t.encode("B a zebra", 10), (std::vector<int>{3, 4, Tokenizer::kUnknown}));
  EXPECT_EQ(t.encode("b b b b", 2).size(), 2u);
  EXPECT_EQ(t.encode("", 5), std::vector<int>{Tokenizer::kUnknown});
}

TEST(Tokenizer, PairsAreJoinedBySeparatorWithinTheLength) {
  const Tokenizer t = Tokenizer::build({"a b c d e f"}, 1);
  const auto p = t.encode_pair("a b", "c d", 10);
  EXPECT_EQ(p,
            (std::vector<int>{t.id("a"), t.id("b"), Tokenizer::kSeparator, t.id("c"), t.id("d")}));
  const auto q = t.encode_pair("a b c d e f", "a b c d e f", 7);
  EXPECT_EQ(q.size(), 7u);
  EXPECT_EQ(q[3], Tokenizer::kSeparator);
}

}  // namespace
}  // namespace cpm
