#pragma once
// Reproducible random numbers keyed by (seed, purpose, replica, particle, step).
//
// A counter-based generator (Philox4x32-10, Salmon et al., SC'11): every draw is a pure
// function of its key and counter, so the numbers a particle sees depend on the seed and on
// its own indices only, never on which thread or MPI rank computes it. A stream has no state
// beyond its position, so a restart needs only the step counter.
#include <array>
#include <cmath>
#include <cstdint>

namespace cpm {

// Independent families of streams for different uses of one seed.
enum class RandomPurpose : std::uint32_t {
  initial_positions = 1,
  langevin_noise = 2,
  minibatch = 3,
  experiment = 4,
};

class RandomStream {
 public:
  RandomStream(std::uint64_t seed, RandomPurpose purpose, std::uint64_t replica,
               std::uint64_t particle, std::uint64_t step = 0)
      : key_{mix(seed ^
                 mix(replica + 0x9E3779B97F4A7C15ULL * static_cast<std::uint64_t>(purpose)))},
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
    std::array<std::uint32_t, 4> c = {block_++, static_cast<std::uint32_t>(particle_),
                                      static_cast<std::uint32_t>(step_),
                                      static_cast<std::uint32_t>(step_ >> 32)};
    std::uint32_t k0 = static_cast<std::uint32_t>(key_);
    std::uint32_t k1 =
        static_cast<std::uint32_t>(key_ >> 32) ^ static_cast<std::uint32_t>(particle_ >> 32);
    for (int round = 0; round < 10; ++round) {
      const std::uint64_t p0 = std::uint64_t{0xD2511F53u} * c[0];
      const std::uint64_t p1 = std::uint64_t{0xCD9E8D57u} * c[2];
      c = {static_cast<std::uint32_t>(p1 >> 32) ^ c[1] ^ k0, static_cast<std::uint32_t>(p1),
           static_cast<std::uint32_t>(p0 >> 32) ^ c[3] ^ k1, static_cast<std::uint32_t>(p0)};
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
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

}  // namespace cpm
