#include "parallel/particle_migration.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>

namespace cpm {

namespace {

// Exclusive prefix sums of counts.
void offsets_of(const std::vector<int>& counts, std::vector<int>& offsets) {
  offsets.resize(counts.size());
  std::exclusive_scan(counts.begin(), counts.end(), offsets.begin(), 0);
}

}  // namespace

ParticleMigration::ParticleMigration(SlabDecomposition decomposition, MPI_Comm communicator,
                                     int axis)
    : decomposition_(decomposition), communicator_(communicator), axis_(axis) {
  int size = 0;
  MPI_Comm_size(communicator_, &size);
  MPI_Comm_rank(communicator_, &rank_);
  if (size != decomposition_.ranks())
    throw std::invalid_argument("particle migration: the decomposition has " +
                                std::to_string(decomposition_.ranks()) + " slabs for " +
                                std::to_string(size) + " ranks");
}

long ParticleMigration::migrate(Particles& particles) {
  const int ranks = decomposition_.ranks();
  const long n = particles.positions.rows();
  const int d = static_cast<int>(particles.positions.cols());
  if (static_cast<long>(particles.ids.size()) != n)
    throw std::invalid_argument("particle migration: one id per row needed");

  // Only the rows that leave are packed, by destination, in their local order.
  destination_.resize(n);
  send_counts_.assign(ranks, 0);
  for (long k = 0; k < n; ++k) {
    destination_[k] = decomposition_.owner(particles.positions(k, axis_));
    if (destination_[k] != rank_) ++send_counts_[destination_[k]];
  }
  offsets_of(send_counts_, send_offsets_);
  const long leaving = std::accumulate(send_counts_.begin(), send_counts_.end(), 0L);
  send_ids_.resize(leaving);
  send_coordinates_.resize(static_cast<std::size_t>(leaving) * d);
  cursor_ = send_offsets_;
  staying_.clear();
  for (long k = 0; k < n; ++k) {
    if (destination_[k] == rank_) {
      staying_.push_back(k);
      continue;
    }
    const int slot = cursor_[destination_[k]]++;
    send_ids_[slot] = particles.ids[k];
    for (int a = 0; a < d; ++a)
      send_coordinates_[static_cast<std::size_t>(slot) * d + a] = particles.positions(k, a);
  }

  receive_counts_.resize(ranks);
  MPI_Alltoall(send_counts_.data(), 1, MPI_INT, receive_counts_.data(), 1, MPI_INT, communicator_);
  offsets_of(receive_counts_, receive_offsets_);
  const long received = std::accumulate(receive_counts_.begin(), receive_counts_.end(), 0L);
  receive_ids_.resize(received);
  MPI_Alltoallv(send_ids_.data(), send_counts_.data(), send_offsets_.data(), MPI_UINT64_T,
                receive_ids_.data(), receive_counts_.data(), receive_offsets_.data(), MPI_UINT64_T,
                communicator_);
  coordinate_counts_.resize(ranks);
  received_coordinate_counts_.resize(ranks);
  for (int r = 0; r < ranks; ++r) {
    coordinate_counts_[r] = send_counts_[r] * d;
    received_coordinate_counts_[r] = receive_counts_[r] * d;
  }
  offsets_of(coordinate_counts_, coordinate_offsets_);
  offsets_of(received_coordinate_counts_, received_coordinate_offsets_);
  receive_coordinates_.resize(static_cast<std::size_t>(received) * d);
  MPI_Alltoallv(send_coordinates_.data(), coordinate_counts_.data(), coordinate_offsets_.data(),
                MPI_DOUBLE, receive_coordinates_.data(), received_coordinate_counts_.data(),
                received_coordinate_offsets_.data(), MPI_DOUBLE, communicator_);

  // The staying rows (in id order after an earlier migration; sorted here otherwise) merged with
  // the arrivals sorted by id. Nothing moved and the rows in order: nothing to do.
  const auto by_id = [&](long a, long b) { return particles.ids[a] < particles.ids[b]; };
  const bool sorted = std::is_sorted(staying_.begin(), staying_.end(), by_id);
  if (leaving == 0 && received == 0 && sorted) return 0;
  if (!sorted) std::sort(staying_.begin(), staying_.end(), by_id);
  order_.resize(received);
  std::iota(order_.begin(), order_.end(), 0L);
  std::sort(order_.begin(), order_.end(),
            [&](long a, long b) { return receive_ids_[a] < receive_ids_[b]; });
  const long rows = static_cast<long>(staying_.size()) + received;
  merged_positions_.resize(rows, d);
  merged_ids_.resize(rows);
  for (long k = 0, s = 0, r = 0; k < rows; ++k) {
    const bool take_staying =
        r == received || (s < static_cast<long>(staying_.size()) &&
                          particles.ids[staying_[s]] < receive_ids_[order_[r]]);
    if (take_staying) {
      merged_ids_[k] = particles.ids[staying_[s]];
      merged_positions_.row(k) = particles.positions.row(staying_[s]);
      ++s;
    } else {
      merged_ids_[k] = receive_ids_[order_[r]];
      for (int a = 0; a < d; ++a)
        merged_positions_(k, a) = receive_coordinates_[static_cast<std::size_t>(order_[r]) * d + a];
      ++r;
    }
  }
  particles.positions.swap(merged_positions_);
  particles.ids.swap(merged_ids_);
  return leaving;
}

}  // namespace cpm
