#include "parallel/rank_group.hpp"

#include <iostream>
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

namespace {

template <class T>
void gather_values(const RankGroup& ranks, const T* values, int count, std::vector<T>& out,
                   MPI_Datatype type) {
  if (!ranks.spread()) {
    out.assign(values, values + count);
    return;
  }
  std::vector<int> counts(ranks.first() ? ranks.size() : 0), offsets(counts.size(), 0);
  MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, ranks.communicator());
  for (std::size_t r = 1; r < counts.size(); ++r) offsets[r] = offsets[r - 1] + counts[r - 1];
  if (ranks.first()) out.resize(static_cast<std::size_t>(offsets.back() + counts.back()));
  MPI_Gatherv(values, count, type, out.data(), counts.data(), offsets.data(), type, 0,
              ranks.communicator());
}

}  // namespace

void RankGroup::gather(const double* values, int count, std::vector<double>& out) const {
  gather_values(*this, values, count, out, MPI_DOUBLE);
}

void RankGroup::gather(const std::uint64_t* values, int count,
                       std::vector<std::uint64_t>& out) const {
  gather_values(*this, values, count, out, MPI_UINT64_T);
}

void RankGroup::gather_by_id(const std::vector<std::uint64_t>& ids, const Eigen::MatrixXd& rows,
                             Eigen::MatrixXd& out) const {
  if (!spread()) {
    out = rows;
    if (!ids.empty())
      for (Eigen::Index k = 0; k < rows.rows(); ++k) out.row(ids[k]) = rows.row(k);
    return;
  }
  const int mine = static_cast<int>(rows.rows());
  std::vector<std::uint64_t> all_ids;
  gather(ids.data(), mine, all_ids);
  if (first()) out.resize(static_cast<Eigen::Index>(all_ids.size()), rows.cols());
  std::vector<double> column;  // a column of the column-major matrix is contiguous
  for (Eigen::Index a = 0; a < rows.cols(); ++a) {
    gather(rows.col(a).data(), mine, column);
    if (first())
      for (std::size_t k = 0; k < all_ids.size(); ++k)
        out(static_cast<Eigen::Index>(all_ids[k]), a) = column[k];
  }
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
  // The first rank writes the line before any rank leaves: mpirun stops the whole job at the
  // first nonzero exit, which could otherwise cut the line off.
  if (first()) std::cerr << "cpm: " << line << std::endl;
  MPI_Barrier(communicator_);
  throw AgreedFailure(line, code);
}

}  // namespace cpm
