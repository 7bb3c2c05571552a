// The replaceable global allocation functions ([new.delete]), aligned to kHeapAlignment
// (core/heap_alignment.hpp says why). Compiled outside the unity batches, so that the archive
// member that defines operator new holds nothing else; every executable that calls new pulls it.
#include "core/heap_alignment.hpp"

#include <cstdlib>
#include <new>

namespace {

void* aligned_or_null(std::size_t size) noexcept {
  void* p = nullptr;
  if (posix_memalign(&p, cpm::kHeapAlignment, size == 0 ? 1 : size) != 0) return nullptr;
  return p;
}

void* aligned_or_throw(std::size_t size) {
  for (;;) {
    if (void* p = aligned_or_null(size)) return p;
    std::new_handler handler = std::get_new_handler();
    if (!handler) throw std::bad_alloc();
    handler();
  }
}

}  // namespace

void* operator new(std::size_t size) {
  return aligned_or_throw(size);
}
void* operator new[](std::size_t size) {
  return aligned_or_throw(size);
}
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  return aligned_or_null(size);
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  return aligned_or_null(size);
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete[](void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete(void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}
void operator delete[](void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}
