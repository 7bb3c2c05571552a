#pragma once
// Items [0, n) spread over the team of a parallel region in claims of a few items: each thread
// first takes the claims of its own contiguous share, in order, then what is left of the other
// threads' shares. On a quiet machine each thread thus works on the items whose data it produced
// in the step's previous region (the linear layers split the tokens statically into contiguous
// shares), and a thread that falls behind (an item of a longer sequence, a core lost to another
// process) leaves its remaining claims to the others, as a dynamic schedule would.
// Every item runs exactly once, and callers make an item's result independent of the thread that
// runs it (per-thread scratch, outputs of its own), so the results do not depend on the team.
#include <omp.h>

#include <algorithm>
#include <atomic>

namespace cpm {

class ClaimedItems {
 public:
  // Before the region: n items in claims of `claim` items, in as many shares as the next region's
  // team (at most kMaxShares; a smaller team takes the shares of the missing threads too).
  ClaimedItems(int n, int claim)
      : n_(n),
        claim_(std::max(1, claim)),
        shares_(std::clamp(omp_get_max_threads(), 1, kMaxShares)) {
    const long claims = (static_cast<long>(n_) + claim_ - 1) / claim_;
    for (int s = 0; s < shares_; ++s) {
      share_[s].next.store(static_cast<int>(claims * s / shares_), std::memory_order_relaxed);
      share_[s].end = static_cast<int>(claims * (s + 1) / shares_);
    }
  }

  // In the region, on every thread: body(i) for the items this thread claims.
  template <class Body>
  void for_each(Body&& body) {
    const int own = omp_get_thread_num() % shares_;
    for (int k = 0; k < shares_; ++k) {
      Share& share = share_[(own + k) % shares_];
      for (int c; (c = share.next.fetch_add(1, std::memory_order_relaxed)) < share.end;)
        for (int i = c * claim_, end = std::min(n_, i + claim_); i < end; ++i) body(i);
    }
  }

 private:
  static constexpr int kMaxShares = 64;
  struct alignas(64) Share {  // one cache line each: threads claim from their own
    std::atomic<int> next;
    int end;
  };
  int n_, claim_, shares_;
  Share share_[kMaxShares];
};

}  // namespace cpm
