#include "parallel/ring_pass.hpp"

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace cpm {

void ring_pass(const RankGroup& ranks, const double* rows, Eigen::Index count, int width,
               const RingVisit& visit, Eigen::Index block_rows) {
  if (block_rows < 1 || width < 1)
    throw std::invalid_argument("a ring pass needs blocks of at least one row of one value");
  const int p = ranks.size(), rank = ranks.rank();
  const int right = (rank + 1) % p, left = (rank + p - 1) % p;
  constexpr int kTag = 2917;
  // A block travels with one more value: whether its origin has another block after it. Every
  // rank sees every origin's flag in a round, so all stop after the same round. The buffers grow
  // to the largest block that arrives (MPI_Probe gives its size), at most block_rows × width + 1.
  std::vector<double> held, arriving;
  for (Eigen::Index round = 0;; ++round) {
    const Eigen::Index first = std::min(round * block_rows, count);
    const Eigen::Index own = std::min(block_rows, count - first);
    bool more = first + own < count;
    visit(rank, rows + first * width, own);
    if (p > 1) {
      held.assign(rows + first * width, rows + (first + own) * width);
      held.push_back(more ? 1.0 : 0.0);
      for (int shift = 1; shift < p; ++shift) {
        MPI_Request sent;
        MPI_Isend(held.data(), static_cast<int>(held.size()), MPI_DOUBLE, right, kTag,
                  ranks.communicator(), &sent);
        MPI_Status status;
        MPI_Probe(left, kTag, ranks.communicator(), &status);
        int values = 0;
        MPI_Get_count(&status, MPI_DOUBLE, &values);
        arriving.resize(static_cast<std::size_t>(values));
        MPI_Recv(arriving.data(), values, MPI_DOUBLE, left, kTag, ranks.communicator(),
                 MPI_STATUS_IGNORE);
        MPI_Wait(&sent, MPI_STATUS_IGNORE);
        more = more || arriving.back() != 0.0;
        visit((rank - shift + p) % p, arriving.data(), (values - 1) / width);
        held.swap(arriving);
      }
    }
    if (!more) break;
  }
}

}  // namespace cpm
