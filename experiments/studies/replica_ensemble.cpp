#include "experiments/studies/replica_ensemble.hpp"

#include <mpi.h>

#include <atomic>
#include <vector>

#include "io/progress.hpp"

namespace cpm {

MpiEnvironment::MpiEnvironment() {
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (!initialised) {
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    owns_ = true;
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

MpiEnvironment::~MpiEnvironment() {
  if (owns_) MPI_Finalize();
}

Eigen::MatrixXd run_replicas(const MpiEnvironment& mpi, int count, int width,
                             const std::function<void(int, double*)>& compute,
                             const std::string& label) {
  // Round robin: rank p owns replicas p, p + P, p + 2P, ...
  std::vector<int> mine;
  for (int r = mpi.rank(); r < count; r += mpi.size()) mine.push_back(r);
  Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> local(mine.size(), width);

  Progress progress(label, static_cast<double>(mine.size()), mpi.is_root() && !label.empty());
  std::atomic<int> done{0};
#pragma omp parallel for schedule(dynamic, 1)
  for (std::size_t i = 0; i < mine.size(); ++i) {
    compute(mine[i], local.row(static_cast<Eigen::Index>(i)).data());
    const int finished = ++done;
#pragma omp critical(cpm_replica_progress)
    progress.update(finished);
  }
  progress.finish();

  // Gather every rank's rows on rank 0, then put them in replica order.
  std::vector<int> counts(mpi.size()), displacements(mpi.size());
  for (int p = 0; p < mpi.size(); ++p) {
    counts[p] = ((count - p + mpi.size() - 1) / mpi.size()) * width;
    if (p >= count) counts[p] = 0;
    displacements[p] = p ? displacements[p - 1] + counts[p - 1] : 0;
  }
  std::vector<double> gathered(mpi.is_root() ? static_cast<std::size_t>(count) * width : 0);
  MPI_Gatherv(local.data(), static_cast<int>(local.size()), MPI_DOUBLE, gathered.data(),
              counts.data(), displacements.data(), MPI_DOUBLE, 0, MPI_COMM_WORLD);
  if (!mpi.is_root()) return {};
  Eigen::MatrixXd table(count, width);
  for (int p = 0; p < mpi.size(); ++p)
    for (int i = 0; i * width < counts[p]; ++i) {
      const int replica = p + i * mpi.size();
      for (int c = 0; c < width; ++c)
        table(replica, c) = gathered[displacements[p] + i * width + c];
    }
  return table;
}

}  // namespace cpm
