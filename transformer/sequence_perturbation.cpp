#include "transformer/sequence_perturbation.hpp"

#include <utility>

#include "core/random_stream.hpp"
#include "transformer/tokenizer.hpp"

namespace cpm {

std::vector<int> word_dropout(const std::vector<int>& tokens, double p, std::uint64_t seed,
                              std::uint64_t index) {
  RandomStream stream(seed, RandomPurpose::word_dropout, 0, index);
  std::vector<int> kept;
  for (const int t : tokens)
    if (t == Tokenizer::kSeparator || stream.uniform() >= p) kept.push_back(t);
  if (kept.empty() || (kept.size() == 1 && kept[0] == Tokenizer::kSeparator && !tokens.empty()))
    kept.assign(1, tokens.front());
  return kept;
}

std::vector<int> adjacent_swaps(const std::vector<int>& tokens, double p, std::uint64_t seed,
                                std::uint64_t index) {
  RandomStream stream(seed, RandomPurpose::word_swaps, 0, index);
  std::vector<int> out = tokens;
  for (std::size_t i = 0; i + 1 < out.size(); ++i)
    if (stream.uniform() < p) {
      std::swap(out[i], out[i + 1]);
      ++i;
    }
  return out;
}

}  // namespace cpm
