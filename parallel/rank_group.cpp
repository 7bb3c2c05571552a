#include "parallel/rank_group.hpp"

#include <new>
#include <numeric>

#include "core/stop_request.hpp"
#include "io/input_error.hpp"

namespace cpm {

RankGroup::RankGroup(MPI_Comm communicator) : communicator_(communicator) {
  MPI_Comm_rank(communicator_, &rank_);
  MPI_Comm_size(communicator_, &size_);
}

IdRange RankGroup::share(std::uint64_t n) const {
  const std::uint64_t p = static_cast<std::uint64_t>(size_), r = static_cast<std::uint64_t>(rank_);
  const std::uint64_t base = n / p, extra = n % p;
  return {r * base + std::min(r, extra), base + (r < extra ? 1 : 0)};
}

Particles RankGroup::id_block(const Eigen::MatrixXd& all) const {
  const IdRange block = share(static_cast<std::uint64_t>(all.rows()));
  Particles p(Eigen::MatrixXd(all.middleRows(static_cast<Eigen::Index>(block.first),
                                             static_cast<Eigen::Index>(block.count))));
  p.ids.resize(block.count);
  std::iota(p.ids.begin(), p.ids.end(), block.first);
  return p;
}

void RankGroup::sum(double* values, int count) const {
  if (spread()) MPI_Allreduce(MPI_IN_PLACE, values, count, MPI_DOUBLE, MPI_SUM, communicator_);
}

double RankGroup::sum(double value) const {
  sum(&value, 1);
  return value;
}

double RankGroup::max(double value) const {
  if (spread()) MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_DOUBLE, MPI_MAX, communicator_);
  return value;
}

void RankGroup::gather_by_id(const std::vector<std::uint64_t>& ids, const Eigen::MatrixXd& rows,
                             Eigen::MatrixXd& out) const {
  if (!spread()) {
    out = rows;
    if (!ids.empty())
      for (Eigen::Index k = 0; k < rows.rows(); ++k) out.row(ids[k]) = rows.row(k);
    return;
  }
  const int mine = static_cast<int>(rows.rows()), dim = static_cast<int>(rows.cols());
  std::vector<int> counts(first() ? size_ : 0), offsets(first() ? size_ : 0);
  MPI_Gather(&mine, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, communicator_);
  int n = 0;
  for (int p = 0; p < static_cast<int>(counts.size()); ++p) {
    offsets[p] = n;
    n += counts[p];
  }
  std::vector<std::uint64_t> all_ids(n);
  MPI_Gatherv(ids.data(), mine, MPI_UINT64_T, all_ids.data(), counts.data(), offsets.data(),
              MPI_UINT64_T, 0, communicator_);
  // Column by column: a column of the column-major matrix is contiguous.
  Eigen::MatrixXd arrived(n, dim);
  for (int a = 0; a < dim; ++a)
    MPI_Gatherv(rows.col(a).data(), mine, MPI_DOUBLE, arrived.col(a).data(), counts.data(),
                offsets.data(), MPI_DOUBLE, 0, communicator_);
  if (!first()) return;
  out.resize(n, dim);
  for (int k = 0; k < n; ++k) out.row(static_cast<Eigen::Index>(all_ids[k])) = arrived.row(k);
}

void RankGroup::agree(const std::function<void()>& phase) const {
  if (!spread()) {
    phase();
    return;
  }
  std::string line;
  int code = 0;
  try {
    phase();
  } catch (const InputError& e) {
    line = e.what(), code = 2;
  } catch (const StopRequested& e) {
    line = e.what(), code = e.exit_code();
  } catch (const std::bad_alloc&) {
    line = "error: out of memory (reduce particles.n or the grid)", code = 1;
  } catch (const std::exception& e) {
    line = std::string("error: ") + e.what(), code = 1;
  }
  // The lowest failing rank tells every rank its line and code.
  int failing = code != 0 ? rank_ : size_;
  MPI_Allreduce(MPI_IN_PLACE, &failing, 1, MPI_INT, MPI_MIN, communicator_);
  if (failing == size_) return;
  if (failing != 0 && rank_ == failing) line = "rank " + std::to_string(failing) + ": " + line;
  int length = static_cast<int>(line.size());
  MPI_Bcast(&code, 1, MPI_INT, failing, communicator_);
  MPI_Bcast(&length, 1, MPI_INT, failing, communicator_);
  line.resize(static_cast<std::size_t>(length));
  MPI_Bcast(line.data(), length, MPI_CHAR, failing, communicator_);
  throw AgreedFailure(line, code, first());
}

}  // namespace cpm
