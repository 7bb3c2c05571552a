#pragma once
// Reproducible random numbers keyed by (seed, purpose, replica, particle, step).
//
// A counter-based generator (Philox4x32-10, Salmon et al., SC'11): every draw is a pure
// function of its key and counter, so the numbers a particle sees depend on the seed and on
// its own indices only, never on which thread or MPI rank computes it. A stream has no state
// beyond its position, so a restart needs only the step counter.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

namespace cpm {

namespace random_detail {
constexpr std::uint64_t kGolden = 0x9E3779B97F4A7C15ULL;         // φ, odd
constexpr std::uint64_t kGoldenInverse = 0xF1DE83E19937733DULL;  // φ⁻¹ mod 2⁶⁴
static_assert(kGolden * kGoldenInverse == 1);
// The code whose stream (seed, code, replica) is the stream (seed, base, replica + offset): a
// stream's key depends on replica + φ·code only. Uses keyed this way keep the numbers they drew
// when they shared a base code (cpm 0.1), so earlier results reproduce.
constexpr std::uint64_t offset_code(std::uint64_t base, std::uint64_t offset) {
  return base + offset * kGoldenInverse;
}

// The Philox4x32-10 block function (Salmon, Moraes, Dror, Shaw, SC'11, "Parallel random numbers:
// as easy as 1, 2, 3"; Random123's philox4x32_R with R = 10): the counter c mixed under the key
// k by ten rounds of two 32 × 32 → 64-bit multiplications, the key bumped by the Weyl constants
// between rounds. Tested against Random123's known-answer vectors
// (tests/core/random_stream_test.cpp).
inline std::array<std::uint32_t, 4> philox4x32_10(std::array<std::uint32_t, 4> c,
                                                  std::array<std::uint32_t, 2> k) {
  for (int round = 0; round < 10; ++round) {
    const std::uint64_t p0 = std::uint64_t{0xD2511F53u} * c[0];
    const std::uint64_t p1 = std::uint64_t{0xCD9E8D57u} * c[2];
    c = {static_cast<std::uint32_t>(p1 >> 32) ^ c[1] ^ k[0], static_cast<std::uint32_t>(p1),
         static_cast<std::uint32_t>(p0 >> 32) ^ c[3] ^ k[1], static_cast<std::uint32_t>(p0)};
    k[0] += 0x9E3779B9u;
    k[1] += 0xBB67AE85u;
  }
  return c;
}
}  // namespace random_detail

// One family of streams per use of a seed. Two uses can share a stream only if their codes
// differ by less than the replicas they use (times φ, mod 2⁶⁴); tests/core/random_stream_test.cpp
// checks every pair against replica_count().
enum class RandomPurpose : std::uint64_t {
  initial_positions = 1,  // particles from their initial law, features from their base law
  langevin_noise = 2,
  alignment_batches = 3,  // the mini-batch order of the alignment potential, per epoch
  test_inputs = 4,        // inputs made up by tests and benchmarks
  bootstrap = 5,          // resamples of a rate fit
  image_subsample = 6,    // replica 0: training rows, 1: test rows
  sliced_directions = 7,  // random directions of the sliced Wasserstein distance (d ≥ 3)
  qmc_randomisation = 8,  // the random shift of a quasi-Monte Carlo point set, per coordinate
  spectral_mixing = 9,    // the scale of a Gaussian scale mixture (Laplace kernel), per frequency
  synthetic_data = random_detail::offset_code(4, 11),    // replica 0/1: train/test rows, 2: mixture
                                                         // centres, 3: label noise
  importance_draws = random_detail::offset_code(4, 21),  // draws from the importance weights
  training_order = random_detail::offset_code(3, 0xE90C),     // the batch order of an epoch
  dropout = random_detail::offset_code(3, 1000),              // replica: the dropout site
  parameter_init = random_detail::offset_code(4, 7000),       // replica: the parameter tensor
  phase_a_sequences = random_detail::offset_code(4, 0xA11A),  // the sequences Phase A aligns on
  text_split = random_detail::offset_code(4, 0x5171),    // the Rotten Tomatoes train/dev/test split
  word_dropout = random_detail::offset_code(4, 0xD509),  // robustness perturbations
  word_swaps = random_detail::offset_code(4, 0x5A4B),
  validation_split = random_detail::offset_code(4, 0x7A1D),   // training rows held out
  label_permutation = random_detail::offset_code(4, 0x9E11),  // the permuted-label null
  // learning/recall_tasks.hpp; replica: the split (0 train, 1 validation, 2 test).
  associative_retrieval = random_detail::offset_code(4, 0xA55C),
  mqar_sequences = random_detail::offset_code(4, 0x30A2),
  // particle 0: the images chosen; (d << 32) + 1 + a: column a of the projection to d dimensions
  data_projection = random_detail::offset_code(4, 0x960C),
};

// How many replica indices a purpose uses (the replica argument stays below it).
constexpr std::uint64_t replica_count(RandomPurpose purpose) {
  switch (purpose) {
    case RandomPurpose::initial_positions:
    case RandomPurpose::langevin_noise:
    case RandomPurpose::bootstrap:
    case RandomPurpose::qmc_randomisation:
    case RandomPurpose::spectral_mixing:
      return std::uint64_t{1} << 40;  // replicas of a study, heads of a model, resamples
    case RandomPurpose::dropout:
    case RandomPurpose::parameter_init:
      return 4096;
    case RandomPurpose::image_subsample:
      return 2;
    case RandomPurpose::synthetic_data:
      return 4;
    case RandomPurpose::associative_retrieval:
    case RandomPurpose::mqar_sequences:
      return 3;
    case RandomPurpose::alignment_batches:
    case RandomPurpose::test_inputs:  // tests vary the seed
    case RandomPurpose::sliced_directions:
    case RandomPurpose::importance_draws:
    case RandomPurpose::training_order:
    case RandomPurpose::phase_a_sequences:
    case RandomPurpose::text_split:
    case RandomPurpose::word_dropout:
    case RandomPurpose::word_swaps:
    case RandomPurpose::validation_split:
    case RandomPurpose::label_permutation:
    case RandomPurpose::data_projection:
      return 1;
  }
  return 0;
}

class RandomStream {
 public:
  RandomStream(std::uint64_t seed, RandomPurpose purpose, std::uint64_t replica,
               std::uint64_t particle, std::uint64_t step = 0)
      : key_{mix(seed ^
                 mix(replica + random_detail::kGolden * static_cast<std::uint64_t>(purpose)))},
        particle_(particle),
        step_(step) {}

  // Moves to the first draw of `step`; draws within one step are a separate sub-sequence.
  void seek(std::uint64_t step) {
    step_ = step;
    block_ = 0;
    available_ = 0;
    has_spare_normal_ = false;
  }
  std::uint64_t step() const { return step_; }

  // Uniform on the open interval (0, 1), 53 random bits.
  double uniform() {
    if (available_ == 0) refill();
    return buffer_[--available_];
  }

  // Standard normal by the Box–Muller transform (both outputs used).
  double normal() {
    if (has_spare_normal_) {
      has_spare_normal_ = false;
      return spare_normal_;
    }
    const double u1 = uniform(), u2 = uniform();
    const double r = std::sqrt(-2.0 * std::log(u1));
    const double angle = 6.283185307179586476925 * u2;
    spare_normal_ = r * std::sin(angle);
    has_spare_normal_ = true;
    return r * std::cos(angle);
  }

 private:
  static std::uint64_t mix(std::uint64_t z) {  // SplitMix64 finaliser
    z += 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }

  void refill() {
    // Counter: (block, particle low, step low, step high); the particle high word goes in the key.
    const std::array<std::uint32_t, 4> c = random_detail::philox4x32_10(
        {block_++, static_cast<std::uint32_t>(particle_), static_cast<std::uint32_t>(step_),
         static_cast<std::uint32_t>(step_ >> 32)},
        {static_cast<std::uint32_t>(key_),
         static_cast<std::uint32_t>(key_ >> 32) ^ static_cast<std::uint32_t>(particle_ >> 32)});
    const std::uint64_t a = (std::uint64_t{c[0]} << 32) | c[1];
    const std::uint64_t b = (std::uint64_t{c[2]} << 32) | c[3];
    constexpr double scale = 1.0 / 9007199254740992.0;  // 2^-53
    buffer_[0] = (static_cast<double>(a >> 11) + 0.5) * scale;
    buffer_[1] = (static_cast<double>(b >> 11) + 0.5) * scale;
    available_ = 2;
  }

  std::uint64_t key_;
  std::uint64_t particle_;
  std::uint64_t step_;
  std::uint32_t block_ = 0;
  int available_ = 0;
  std::array<double, 2> buffer_{};
  bool has_spare_normal_ = false;
  double spare_normal_ = 0.0;
};

// Fisher–Yates: a uniformly random permutation of `items` drawn from `stream` (one uniform per
// position, from the last down), so the order depends on the stream's key only.
template <class T>
void shuffle(std::vector<T>& items, RandomStream& stream) {
  for (std::size_t i = items.size(); i > 1; --i)
    std::swap(items[i - 1],
              items[static_cast<std::size_t>(stream.uniform() * static_cast<double>(i))]);
}

// One step of Fisher–Yates from the front: position r receives an entry of items[r, n) chosen
// uniformly (one uniform), swapped with it.
template <class T>
void draw_into_position(std::vector<T>& items, std::size_t r, RandomStream& stream) {
  const std::size_t left = items.size() - r;
  const auto offset = static_cast<std::size_t>(stream.uniform() * static_cast<double>(left));
  std::swap(items[r], items[r + std::min(offset, left - 1)]);
}

// The first k entries of `items` become a uniformly random k-subset in random order; the rest
// keep what is left.
template <class T>
void shuffle_prefix(std::vector<T>& items, std::size_t k, RandomStream& stream) {
  for (std::size_t r = 0; r < k && r + 1 < items.size(); ++r) draw_into_position(items, r, stream);
}

// 0, 1, …, n − 1 shuffled.
inline std::vector<std::size_t> random_permutation(std::size_t n, RandomStream stream) {
  std::vector<std::size_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = i;
  shuffle(order, stream);
  return order;
}

}  // namespace cpm
