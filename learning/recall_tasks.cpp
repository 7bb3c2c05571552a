#include "learning/recall_tasks.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numeric>
#include <stdexcept>
#include <string>

#include "core/random_stream.hpp"

namespace cpm {

namespace {

void require(bool condition, const std::string& message) {
  if (!condition) throw std::invalid_argument(message);
}

void require_examples(int examples) {
  require(examples >= 0,
          "recall task: examples must be non-negative (got " + std::to_string(examples) + ").");
}

// The stream of one example: replica = the split, particle = the example.
RandomStream example_stream(std::uint64_t seed, RandomPurpose purpose, RecallSplit split, int e) {
  return RandomStream(seed, purpose, static_cast<std::uint64_t>(split),
                      static_cast<std::uint64_t>(e));
}

// pool = first, first + 1, …, first + size − 1, its first k entries then a uniformly random
// k-subset in random order (numpy's choice(replace=False) without weights, in law).
void draw_distinct(std::vector<int>& pool, int first, int size, int k, RandomStream& s) {
  pool.resize(static_cast<std::size_t>(size));
  std::iota(pool.begin(), pool.end(), first);
  shuffle_prefix(pool, static_cast<std::size_t>(k), s);
}

// Distinct slots drawn one after another, each from `weight` renormalised over the slots not yet
// drawn: the law of numpy's choice(replace=False, p=weight / Σ weight). The total is summed
// afresh for every draw, so no rounding accumulates.
void draw_slots(const std::vector<double>& weight, int count, RandomStream& s,
                std::vector<char>& taken, std::vector<int>& slots) {
  taken.assign(weight.size(), 0);
  slots.resize(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    double total = 0.0;
    for (std::size_t k = 0; k < weight.size(); ++k)
      if (!taken[k]) total += weight[k];
    const double x = s.uniform() * total;
    double cumulative = 0.0;
    std::size_t chosen = weight.size();
    for (std::size_t k = 0; k < weight.size(); ++k) {
      if (taken[k]) continue;
      chosen = k;  // the last free slot if rounding leaves x beyond the sum
      cumulative += weight[k];
      if (x < cumulative) break;
    }
    taken[chosen] = 1;
    slots[i] = static_cast<int>(chosen);
  }
}

}  // namespace

void validate(const AssociativeRetrievalSpec& spec) {
  const std::string task = "associative retrieval: ";
  require(spec.pairs >= 1,
          task + "pairs must be at least 1 (got " + std::to_string(spec.pairs) + ").");
  require(spec.key_symbols == 0 || spec.key_symbols >= spec.pairs,
          task + "key_symbols must be 0 (meaning pairs) or at least pairs = " +
              std::to_string(spec.pairs) +
              ", since every example uses that many distinct keys (got " +
              std::to_string(spec.key_symbols) + ").");
  require(spec.value_symbols == 0 || spec.value_symbols >= spec.pairs,
          task + "value_symbols must be 0 (meaning pairs) or at least pairs = " +
              std::to_string(spec.pairs) +
              ", since every example uses that many distinct values (got " +
              std::to_string(spec.value_symbols) + ").");
}

void validate(const MqarSpec& spec) {
  const std::string task = "MQAR: ";
  require(spec.pairs >= 1,
          task + "pairs must be at least 1 (got " + std::to_string(spec.pairs) + ").");
  require(spec.length % 2 == 0, task + "length must be even, since the queries sit at even " +
                                    "offsets of the query region (got " +
                                    std::to_string(spec.length) + ").");
  require(spec.length >= 4LL * spec.pairs,
          task + "length must be at least 4 × pairs = " + std::to_string(4LL * spec.pairs) +
              ", room for the 2 × pairs key and value tokens and a query region of pairs even " +
              "slots (got " + std::to_string(spec.length) + ").");
  require(
      spec.vocabulary >= 2LL * spec.pairs + 2,
      task + "vocabulary must be at least 2 × pairs + 2 = " + std::to_string(2LL * spec.pairs + 2) +
          ", so that [1, vocabulary/2) holds pairs distinct keys (got " +
          std::to_string(spec.vocabulary) + ").");
  require(spec.alpha > 0.0 && std::isfinite(spec.alpha),
          task + "alpha must be positive and finite, the exponent of p(g) ∝ g^(alpha − 1) (got " +
              std::to_string(spec.alpha) + ").");
}

int retrieval_key_symbols(const AssociativeRetrievalSpec& spec) {
  return spec.key_symbols == 0 ? spec.pairs : spec.key_symbols;
}

int retrieval_value_symbols(const AssociativeRetrievalSpec& spec) {
  return spec.value_symbols == 0 ? spec.pairs : spec.value_symbols;
}

int vocabulary_size(const AssociativeRetrievalSpec& spec) {
  validate(spec);
  return retrieval_key_symbols(spec) + retrieval_value_symbols(spec);
}

int vocabulary_size(const MqarSpec& spec) {
  validate(spec);
  return spec.vocabulary;
}

AssociativeRetrievalSet make_associative_retrieval(const AssociativeRetrievalSpec& spec,
                                                   int examples, std::uint64_t seed,
                                                   RecallSplit split) {
  validate(spec);
  require_examples(examples);
  const int pairs = spec.pairs, key_symbols = retrieval_key_symbols(spec),
            value_symbols = retrieval_value_symbols(spec);
  AssociativeRetrievalSet set;
  set.pairs = pairs;
  set.keys.resize(static_cast<std::size_t>(examples) * pairs);
  set.values.resize(set.keys.size());
  set.query.resize(static_cast<std::size_t>(examples));
  set.target.resize(set.query.size());
#pragma omp parallel if (examples > 256)
  {
    std::vector<int> pool;
#pragma omp for schedule(static)
    for (int e = 0; e < examples; ++e) {
      RandomStream s = example_stream(seed, RandomPurpose::associative_retrieval, split, e);
      const auto row = static_cast<std::ptrdiff_t>(e) * pairs;
      draw_distinct(pool, 0, key_symbols, pairs, s);
      std::copy_n(pool.begin(), pairs, set.keys.begin() + row);
      draw_distinct(pool, 0, value_symbols, pairs, s);
      std::copy_n(pool.begin(), pairs, set.values.begin() + row);
      const int q = std::min(static_cast<int>(s.uniform() * pairs), pairs - 1);
      set.query[e] = set.keys[row + q];
      set.target[e] = set.values[row + q];
    }
  }
  return set;
}

MqarSet make_mqar(const MqarSpec& spec, int examples, std::uint64_t seed, RecallSplit split) {
  validate(spec);
  require_examples(examples);
  const int length = spec.length, pairs = spec.pairs, half = spec.vocabulary / 2;
  const int context = 2 * pairs, slot_count = (length - context) / 2;
  std::vector<double> weight(static_cast<std::size_t>(slot_count));
  for (int slot = 0; slot < slot_count; ++slot) weight[slot] = std::pow(slot + 1.0, spec.alpha - 1);
  MqarSet set;
  set.length = length;
  set.inputs.resize(static_cast<std::size_t>(examples) * length);
  set.targets.assign(set.inputs.size(), -1);
#pragma omp parallel if (examples > 64)
  {
    std::vector<int> keys, values, slots;
    std::vector<char> taken;
#pragma omp for schedule(static)
    for (int e = 0; e < examples; ++e) {
      RandomStream s = example_stream(seed, RandomPurpose::mqar_sequences, split, e);
      draw_distinct(keys, 1, half - 1, pairs, s);
      draw_distinct(values, half, spec.vocabulary - half, pairs, s);
      draw_slots(weight, pairs, s, taken, slots);
      int* input = set.inputs.data() + static_cast<std::ptrdiff_t>(e) * length;
      int* target = set.targets.data() + static_cast<std::ptrdiff_t>(e) * length;
      std::fill(input + context, input + length, -1);  // −1: not a query yet
      for (int i = 0; i < pairs; ++i) {
        input[2 * i] = keys[i];
        input[2 * i + 1] = values[i];
        input[context + 2 * slots[i]] = keys[i];
        target[context + 2 * slots[i]] = values[i];
      }
      for (int t = context; t < length; ++t) {
        if (input[t] >= 0) continue;
        input[t] =
            spec.random_non_queries
                ? std::min(static_cast<int>(s.uniform() * spec.vocabulary), spec.vocabulary - 1)
                : 0;
      }
    }
  }
  return set;
}

}  // namespace cpm
