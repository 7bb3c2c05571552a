// Heap blocks start on kHeapAlignment-byte boundaries in every executable linked with cpm.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/heap_alignment.hpp"

namespace cpm {
namespace {

bool aligned(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p) % kHeapAlignment == 0;
}

// AddressSanitizer brings its own operator new, linked before cpm's (`make sanitize`).
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitizedHeap = true;
#elif defined(__has_feature)
constexpr bool kSanitizedHeap = __has_feature(address_sanitizer);
#else
constexpr bool kSanitizedHeap = false;
#endif

TEST(HeapAlignment, EveryAllocationStartsOnTheBoundary) {
  if (kSanitizedHeap) GTEST_SKIP() << "AddressSanitizer's operator new replaces cpm's";
  std::vector<std::unique_ptr<char[]>> odd;  // shifts the heap between the checks
  for (std::size_t n = 1; n < 600; n += 7) {
    odd.push_back(std::make_unique<char[]>(n % 40 + 1));
    std::vector<float> v(n);
    EXPECT_TRUE(aligned(v.data())) << n;
    std::vector<double> w(n);
    EXPECT_TRUE(aligned(w.data())) << n;
    auto single = std::make_unique<int>(3);
    EXPECT_TRUE(aligned(single.get())) << n;
  }
  std::string text(100, 'x');
  EXPECT_TRUE(aligned(text.data()));
  auto* nothrow = new (std::nothrow) double[5];
  EXPECT_TRUE(aligned(nothrow));
  delete[] nothrow;
}

}  // namespace
}  // namespace cpm
