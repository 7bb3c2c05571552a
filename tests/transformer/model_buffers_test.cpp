// Every piece of the model's activations and scratch starts on a cache line
// (core/heap_alignment.hpp), and attention claims whole sequences only when there are enough of
// them for the threads.
#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <vector>

#include "transformer/attention_layout.hpp"
#include "transformer/model_buffers.hpp"

namespace cpm {
namespace {

bool on_cache_line(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p) % kHeapAlignment == 0;
}

TEST(ModelBuffers, EveryPieceStartsOnACacheLine) {
  ModelBuffers<float> buffers;
  std::vector<float*> taken;
  std::vector<double*> taken_double;
  buffers.allocate_activations([&] {
    taken.clear();
    taken_double.clear();
    for (std::size_t n : {1, 17, 3, 64, 5}) taken.push_back(buffers.take(n));
    for (std::size_t n : {1, 9, 2}) taken_double.push_back(buffers.take_double(n));
  });
  for (float* p : taken) EXPECT_TRUE(on_cache_line(p));
  for (double* p : taken_double) EXPECT_TRUE(on_cache_line(p));
  ModelShape shape;
  shape.d_model = 12;  // C · N is no whole number of lines
  shape.heads = 3;
  shape.d_ff = 20;
  shape.features = 8;
  const float* head = buffers.allocate_scratch(shape, 7, 8, true, 5, 3);
  const BlockScratch<float>& s = buffers.scratch();
  for (const float* p : std::initializer_list<const float*>{
           s.d_residual, s.d_a, s.d_b, s.d_ff_a, s.d_ff_b, s.d_qkv, s.linear, s.attention, head})
    EXPECT_TRUE(on_cache_line(p));
  EXPECT_TRUE(on_cache_line(s.attention_double));
}

TEST(AttentionLayout, ThreadsClaimWholeSequencesOnlyWhenThereAreEnough) {
  AttentionLayout many{32, 128, 4, 16, false}, few{3, 128, 4, 16, false};
  EXPECT_EQ(many.heads_per_claim(2), 4);
  EXPECT_EQ(many.heads_per_claim(9), 1);
  EXPECT_EQ(few.heads_per_claim(1), 1);
}

}  // namespace
}  // namespace cpm
