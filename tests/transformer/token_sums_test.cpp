// token_sums (transformer/tensor_map.hpp), the bias gradients' sums over the tokens, against its
// definition written out element by element: four interleaved partial sums in double, token n
// into partial n mod 4, combined as (s₀ + s₁) + (s₂ + s₃). The same bits are expected for every
// channel count (full blocks of 16 and a rest), token count (around a multiple of four) and
// leading dimension, in float and double, with and without accumulation. Float values of [-1, 1)
// add up exactly in double at these counts, so the float cases check that every term is counted
// once, from its place, in double; the double cases also check the order.
#include <gtest/gtest.h>

#include <vector>

#include "tests/transformer/random_values.hpp"
#include "transformer/tensor_map.hpp"

namespace cpm {
namespace {

template <class T>
void expect_definition(int c, int tokens, int ld, bool accumulate) {
  const auto x = testing::random_values<T>(std::size_t(ld) * tokens, c * 100 + tokens);
  const auto start = testing::random_values<T>(c, 7);
  std::vector<T> out = start, expected = start;
  token_sums(out.data(), x.data(), ld, c, tokens, accumulate);
  for (int i = 0; i < c; ++i) {
    double partial[4] = {};
    for (int n = 0; n < tokens; ++n) partial[n % 4] += x[i + std::size_t(n) * ld];
    const T sum = static_cast<T>((partial[0] + partial[1]) + (partial[2] + partial[3]));
    expected[i] = accumulate ? start[i] + sum : sum;
  }
  EXPECT_EQ(out, expected) << "c = " << c << ", tokens = " << tokens << ", ld = " << ld;
}

TEST(TokenSums, EqualTheInterleavedPartialSumsInDouble) {
  for (int c : {1, 15, 16, 19, 64, 200})
    for (int tokens : {1, 3, 4, 5, 130})
      for (bool accumulate : {false, true}) {
        expect_definition<float>(c, tokens, c, accumulate);
        expect_definition<float>(c, tokens, c + 5, accumulate);
        expect_definition<double>(c, tokens, c + 3, accumulate);
      }
}

}  // namespace
}  // namespace cpm
