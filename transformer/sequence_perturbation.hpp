#pragma once
// Perturbations of token sequences for the robustness evaluation. Both are keyed by
// (seed, sequence index), so a perturbed evaluation set is the same in every run.
#include <cstdint>
#include <vector>

namespace cpm {

// Drops each token independently with probability p (the separator of a pair is kept); at least
// one token remains.
std::vector<int> word_dropout(const std::vector<int>& tokens, double p, std::uint64_t seed,
                              std::uint64_t index);

// Walks the sequence left to right and swaps each position with its right neighbour with
// probability p; a swapped pair is not revisited.
std::vector<int> adjacent_swaps(const std::vector<int>& tokens, double p, std::uint64_t seed,
                                std::uint64_t index);

}  // namespace cpm
