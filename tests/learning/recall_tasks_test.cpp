#include "learning/recall_tasks.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/random_stream.hpp"

namespace cpm {
namespace {

// The slot law of MQAR: p(s) ∝ (s + 1)^(α−1) over s = 0, …, slots − 1.
std::vector<double> slot_law(int slots, double alpha) {
  std::vector<double> p(static_cast<std::size_t>(slots));
  double total = 0.0;
  for (int s = 0; s < slots; ++s) total += p[s] = std::pow(s + 1.0, alpha - 1.0);
  for (double& x : p) x /= total;
  return p;
}

// The slot of the query of key i (the key at position 2i) in one MQAR sequence; −1 if none.
int query_slot(const MqarSet& set, const MqarSpec& spec, int example, int i) {
  const int* input = set.inputs.data() + static_cast<std::ptrdiff_t>(example) * set.length;
  const int* target = set.targets.data() + static_cast<std::ptrdiff_t>(example) * set.length;
  for (int t = 2 * spec.pairs; t < set.length; ++t)
    if (target[t] >= 0 && input[t] == input[2 * i]) return (t - 2 * spec.pairs) / 2;
  return -1;
}

void expect_rejected(const std::function<void()>& call, const std::string& parameter) {
  try {
    call();
    ADD_FAILURE() << "no exception; expected one naming " << parameter;
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find(parameter), std::string::npos) << error.what();
  }
}

TEST(AssociativeRetrieval, KeysAndValuesAreDistinctInRangeAndTheTargetIsTheQueriedKeysValue) {
  const AssociativeRetrievalSpec spec{6, 10, 8};
  const int n = 6000;
  const AssociativeRetrievalSet set = make_associative_retrieval(spec, n, 1, RecallSplit::train);
  ASSERT_EQ(set.size(), n);
  ASSERT_EQ(set.keys.size(), static_cast<std::size_t>(n) * 6);
  std::vector<int> key_use(10, 0), query_index(6, 0);
  for (int e = 0; e < n; ++e) {
    const int* keys = set.keys.data() + e * 6;
    const int* values = set.values.data() + e * 6;
    EXPECT_EQ(std::set<int>(keys, keys + 6).size(), 6u);
    EXPECT_EQ(std::set<int>(values, values + 6).size(), 6u);
    for (int i = 0; i < 6; ++i) {
      ASSERT_TRUE(keys[i] >= 0 && keys[i] < 10);
      ASSERT_TRUE(values[i] >= 0 && values[i] < 8);
      ++key_use[keys[i]];
    }
    const int q = static_cast<int>(std::find(keys, keys + 6, set.query[e]) - keys);
    ASSERT_LT(q, 6);
    EXPECT_EQ(set.target[e], values[q]);
    ++query_index[q];
  }
  // Each symbol is one of the 6 keys with probability 6/10; each position is queried w.p. 1/6.
  for (int c : key_use) EXPECT_NEAR(c, 0.6 * n, 5 * std::sqrt(n * 0.6 * 0.4));
  for (int c : query_index) EXPECT_NEAR(c, n / 6.0, 5 * std::sqrt(n / 6.0 * 5.0 / 6.0));
}

TEST(AssociativeRetrieval, DefaultSymbolSetsMakeKeysAndValuesPermutations) {
  const AssociativeRetrievalSet set =
      make_associative_retrieval({5}, 100, 2, RecallSplit::validation);
  for (int e = 0; e < 100; ++e) {
    std::vector<int> keys(set.keys.begin() + e * 5, set.keys.begin() + e * 5 + 5);
    std::vector<int> values(set.values.begin() + e * 5, set.values.begin() + e * 5 + 5);
    std::sort(keys.begin(), keys.end());
    std::sort(values.begin(), values.end());
    EXPECT_EQ(keys, (std::vector<int>{0, 1, 2, 3, 4}));
    EXPECT_EQ(values, (std::vector<int>{0, 1, 2, 3, 4}));
  }
}

TEST(AssociativeRetrieval, SetsAreReproducibleAndSplitsAndSeedsDiffer) {
  const AssociativeRetrievalSpec spec{8, 20, 20};
  const auto make = [&](int n, std::uint64_t seed, RecallSplit split) {
    return make_associative_retrieval(spec, n, seed, split);
  };
  const AssociativeRetrievalSet a = make(300, 7, RecallSplit::train);
  const AssociativeRetrievalSet b = make(300, 7, RecallSplit::train);
  EXPECT_EQ(a.keys, b.keys);
  EXPECT_EQ(a.values, b.values);
  EXPECT_EQ(a.query, b.query);
  EXPECT_EQ(a.target, b.target);
  EXPECT_NE(a.keys, make(300, 7, RecallSplit::validation).keys);
  EXPECT_NE(a.keys, make(300, 7, RecallSplit::test).keys);
  EXPECT_NE(make(300, 7, RecallSplit::validation).keys, make(300, 7, RecallSplit::test).keys);
  EXPECT_NE(a.keys, make(300, 8, RecallSplit::train).keys);
  // Example i has its own stream: a smaller set is a prefix of a larger one.
  const AssociativeRetrievalSet prefix = make(100, 7, RecallSplit::train);
  EXPECT_TRUE(std::equal(prefix.keys.begin(), prefix.keys.end(), a.keys.begin()));
  EXPECT_TRUE(std::equal(prefix.query.begin(), prefix.query.end(), a.query.begin()));
}

// Zoology's layout: k v k v … then a query region in which every key sits once at an even
// offset, scored there with its value; everything else unscored.
TEST(Mqar, LayoutFollowsZoology) {
  for (bool random_non_queries : {false, true}) {
    MqarSpec spec;
    spec.vocabulary = 64;
    spec.length = 40;
    spec.pairs = 5;
    spec.random_non_queries = random_non_queries;
    const int n = 2000, context = 10;
    const MqarSet set = make_mqar(spec, n, 3, RecallSplit::train);
    ASSERT_EQ(set.size(), n);
    ASSERT_EQ(set.targets.size(), static_cast<std::size_t>(n) * 40);
    long filler = 0, filler_zero = 0;
    double filler_sum = 0.0;
    for (int e = 0; e < n; ++e) {
      const int* input = set.inputs.data() + e * 40;
      const int* target = set.targets.data() + e * 40;
      std::set<int> keys, values, queried;
      for (int i = 0; i < 5; ++i) {
        ASSERT_TRUE(input[2 * i] >= 1 && input[2 * i] < 32) << input[2 * i];
        ASSERT_TRUE(input[2 * i + 1] >= 32 && input[2 * i + 1] < 64) << input[2 * i + 1];
        keys.insert(input[2 * i]);
        values.insert(input[2 * i + 1]);
      }
      EXPECT_EQ(keys.size(), 5u);
      EXPECT_EQ(values.size(), 5u);  // Zoology draws the values without replacement too
      for (int t = 0; t < context; ++t) EXPECT_EQ(target[t], -1);
      for (int t = context; t < 40; ++t) {
        if (target[t] == -1) {
          ASSERT_TRUE(input[t] >= 0 && input[t] < 64);
          if (!random_non_queries) {
            EXPECT_EQ(input[t], 0);
          }
          ++filler;
          filler_zero += input[t] == 0;
          filler_sum += input[t];
          continue;
        }
        EXPECT_EQ((t - context) % 2, 0) << "query at an odd offset";
        const int i = static_cast<int>(std::find(input, input + context, input[t]) - input);
        ASSERT_TRUE(i < context && i % 2 == 0) << "the query is not a key";
        EXPECT_EQ(target[t], input[i + 1]);
        EXPECT_TRUE(queried.insert(input[t]).second) << "key queried twice";
      }
      EXPECT_EQ(queried, keys);
      if (!random_non_queries) {  // without random filler no key occurs elsewhere in the region
        for (int k : keys) EXPECT_EQ(std::count(input + context, input + 40, k), 1);
      }
    }
    if (random_non_queries) {  // filler uniform on [0, 64)
      EXPECT_NEAR(filler_sum / filler, 31.5, 5 * std::sqrt((64.0 * 64 - 1) / 12 / filler));
      EXPECT_NEAR(static_cast<double>(filler_zero) / filler, 1.0 / 64, 0.005);
    }
  }
}

TEST(Mqar, SetsAreReproducibleAndSplitsAndSeedsDiffer) {
  MqarSpec spec;  // Zoology's defaults: V = 8192, L = 64, N = 4
  const MqarSet a = make_mqar(spec, 200, 11, RecallSplit::train);
  const MqarSet b = make_mqar(spec, 200, 11, RecallSplit::train);
  EXPECT_EQ(a.inputs, b.inputs);
  EXPECT_EQ(a.targets, b.targets);
  EXPECT_NE(a.inputs, make_mqar(spec, 200, 11, RecallSplit::validation).inputs);
  EXPECT_NE(a.inputs, make_mqar(spec, 200, 11, RecallSplit::test).inputs);
  EXPECT_NE(make_mqar(spec, 200, 11, RecallSplit::validation).inputs,
            make_mqar(spec, 200, 11, RecallSplit::test).inputs);
  EXPECT_NE(a.inputs, make_mqar(spec, 200, 12, RecallSplit::train).inputs);
  const MqarSet prefix = make_mqar(spec, 50, 11, RecallSplit::train);
  EXPECT_TRUE(std::equal(prefix.inputs.begin(), prefix.inputs.end(), a.inputs.begin()));
  EXPECT_TRUE(std::equal(prefix.targets.begin(), prefix.targets.end(), a.targets.begin()));
}

// With one pair the slot follows p(s) ∝ (s + 1)^(α−1) itself: checked bin by bin, and for
// α = 0.01 the ratio of the first slot to the tenth, 10^0.99 ≈ 9.8, within 15 %.
TEST(Mqar, QuerySlotsFollowThePowerLaw) {
  for (double alpha : {0.01, 0.5, 1.0}) {
    MqarSpec spec;
    spec.length = 66;  // 32 slots
    spec.pairs = 1;
    spec.alpha = alpha;
    const int n = 40000;
    const MqarSet set = make_mqar(spec, n, 5, RecallSplit::train);
    std::vector<int> count(32, 0);
    for (int e = 0; e < n; ++e) ++count[query_slot(set, spec, e, 0)];
    const std::vector<double> p = slot_law(32, alpha);
    for (int s = 0; s < 32; ++s)
      EXPECT_NEAR(count[s], n * p[s], 5 * std::sqrt(n * p[s] * (1 - p[s]))) << "slot " << s;
    if (alpha == 0.01) {
      EXPECT_NEAR(static_cast<double>(count[0]) / count[9], std::pow(10.0, 0.99),
                  0.15 * std::pow(10.0, 0.99));
      EXPECT_GT(count[0], 20 * count[31]);
    }
  }
}

// Several pairs: slots drawn without replacement one after another, the i-th for the i-th key.
// The first key's slot has law p; the second's P(s₂ = j) = Σ_{i≠j} p_i p_j / (1 − p_i).
TEST(Mqar, SlotsAreDrawnWithoutReplacementInTurn) {
  MqarSpec spec;
  spec.length = 32;  // 12 slots
  spec.pairs = 4;
  spec.alpha = 0.3;
  const int n = 40000;
  const MqarSet set = make_mqar(spec, n, 6, RecallSplit::test);
  std::vector<int> first(12, 0), second(12, 0);
  for (int e = 0; e < n; ++e) {
    ++first[query_slot(set, spec, e, 0)];
    ++second[query_slot(set, spec, e, 1)];
  }
  const std::vector<double> p = slot_law(12, spec.alpha);
  for (int j = 0; j < 12; ++j) {
    double q = 0.0;
    for (int i = 0; i < 12; ++i)
      if (i != j) q += p[i] * p[j] / (1 - p[i]);
    EXPECT_NEAR(first[j], n * p[j], 5 * std::sqrt(n * p[j] * (1 - p[j]))) << "slot " << j;
    EXPECT_NEAR(second[j], n * q, 5 * std::sqrt(n * q * (1 - q))) << "slot " << j;
  }
}

TEST(RecallTasks, VocabularySizes) {
  EXPECT_EQ(vocabulary_size(AssociativeRetrievalSpec{7}), 14);
  EXPECT_EQ(vocabulary_size(AssociativeRetrievalSpec{7, 10, 8}), 18);
  EXPECT_EQ(retrieval_key_symbols({7}), 7);
  EXPECT_EQ(retrieval_value_symbols({7, 0, 9}), 9);
  EXPECT_EQ(vocabulary_size(MqarSpec{}), 8192);
}

TEST(RecallTasks, InvalidSpecsAreRejectedNamingTheParameter) {
  expect_rejected([] { validate(AssociativeRetrievalSpec{0}); }, "pairs");
  expect_rejected([] { validate(AssociativeRetrievalSpec{5, 4, 0}); }, "key_symbols");
  expect_rejected([] { validate(AssociativeRetrievalSpec{5, -1, 0}); }, "key_symbols");
  expect_rejected([] { validate(AssociativeRetrievalSpec{5, 0, 3}); }, "value_symbols");
  expect_rejected([] { make_associative_retrieval({3}, -1, 1, RecallSplit::train); }, "examples");
  const auto mqar = [](auto change) {
    return [change] {
      MqarSpec spec;
      change(spec);
      validate(spec);
    };
  };
  expect_rejected(mqar([](MqarSpec& s) { s.pairs = 0; }), "pairs");
  expect_rejected(mqar([](MqarSpec& s) { s.length = 63; }), "length");
  expect_rejected(mqar([](MqarSpec& s) { s.pairs = 17; }), "length");          // 4N = 68 > 64
  expect_rejected(mqar([](MqarSpec& s) { s.vocabulary = 9; }), "vocabulary");  // 4 keys need V ≥ 10
  expect_rejected(mqar([](MqarSpec& s) { s.alpha = 0.0; }), "alpha");
  expect_rejected(mqar([](MqarSpec& s) { s.alpha = -0.5; }), "alpha");
  expect_rejected(mqar([](MqarSpec& s) { s.alpha = std::nan(""); }), "alpha");
  expect_rejected([] { make_mqar(MqarSpec{}, -2, 1, RecallSplit::train); }, "examples");
  // The boundary cases are valid: 4N = L, V = 2N + 2.
  MqarSpec tight;
  tight.length = 16;
  tight.pairs = 4;
  tight.vocabulary = 10;
  EXPECT_NO_THROW(validate(tight));
  const MqarSet set = make_mqar(tight, 20, 1, RecallSplit::train);
  for (int e = 0; e < 20; ++e)
    for (int i = 0; i < 4; ++i) EXPECT_GE(query_slot(set, tight, e, i), 0);
}

}  // namespace
}  // namespace cpm
