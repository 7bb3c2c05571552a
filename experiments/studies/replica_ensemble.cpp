#include "experiments/studies/replica_ensemble.hpp"

#include <mpi.h>

#include <atomic>
#include <filesystem>
#include <optional>
#include <vector>

#include "core/stop_request.hpp"
#include "experiments/studies/replica_checkpoint.hpp"
#include "io/input_error.hpp"
#include "io/progress.hpp"
#include "io/text_file.hpp"
#include "parallel/rank_group.hpp"

namespace cpm {

std::string replica_checkpoint_path(const std::string& directory) {
  return (std::filesystem::path(directory) / "replicas.checkpoint").string();
}

bool continues_in_place(const ReplicaRecovery& recovery) {
  std::error_code error;
  return !recovery.restart.empty() && std::filesystem::exists(recovery.directory, error) &&
         std::filesystem::equivalent(std::filesystem::absolute(recovery.restart).parent_path(),
                                     recovery.directory, error);
}

namespace {

// The fingerprint of the study's configuration file (0 for a configuration made in code).
std::uint64_t config_fingerprint(const ReplicaRecovery& recovery) {
  std::error_code error;
  return std::filesystem::is_regular_file(recovery.config_path, error)
             ? text_fingerprint(read_text_file(recovery.config_path))
             : 0;
}

// Every rank's rows (replica, finished, values...) gathered on rank 0.
std::vector<double> gather_rows(const std::vector<double>& local) {
  std::vector<double> gathered;
  RankGroup(MPI_COMM_WORLD).gather(local.data(), static_cast<int>(local.size()), gathered);
  return gathered;
}

// The hint of a stopped study: what is saved and the command that continues.
std::string continue_hint(const ReplicaRecovery& recovery, std::size_t saved, int count) {
  const std::string path = replica_checkpoint_path(recovery.directory);
  return std::to_string(saved) + " of " + std::to_string(count) + " " + recovery.items +
         " saved in " + path + "; continue with: cpm " + recovery.study + " " +
         recovery.config_path + " --output " + recovery.directory + " --restart " + path;
}

}  // namespace

ReplicaCheckpoint finished_replicas(const ReplicaRecovery& recovery, int count, int width) {
  if (recovery.restart.empty()) return {recovery.study, 0, count, width, {}};
  ReplicaCheckpoint found = read_replica_checkpoint(recovery.restart);
  if (found.study != recovery.study || found.fingerprint != config_fingerprint(recovery) ||
      found.count != count || found.width != width)
    throw InputError(recovery.restart + ": the replicas of another study (cpm " + found.study +
                     " with another configuration than " + recovery.config_path + ")");
  return found;
}

StopRequested save_finished_replicas(int signal, const ReplicaRecovery& recovery,
                                     ReplicaCheckpoint finished) {
  finished.fingerprint = config_fingerprint(recovery);
  write_replica_checkpoint(replica_checkpoint_path(recovery.directory), finished);
  return StopRequested(signal, continue_hint(recovery, finished.rows.size(), finished.count));
}

void discard_finished_replicas(const ReplicaRecovery& recovery) {
  const std::string path = replica_checkpoint_path(recovery.directory);
  if (!recovery.restart.empty() && std::filesystem::exists(path)) std::filesystem::remove(path);
}

Eigen::MatrixXd run_replicas(const MpiEnvironment& mpi, int count, int width,
                             const std::function<void(int, double*)>& compute,
                             const std::string& label, const ReplicaRecovery& recovery) {
  ReplicaCheckpoint finished = finished_replicas(recovery, count, width);
  std::optional<StopRequestHandler> stop_handler;
  if (!recovery.study.empty()) stop_handler.emplace();

  // Round robin over the replicas still to compute: rank p owns the p-th, (p + P)-th, ...
  std::vector<int> remaining, mine;
  for (int r = 0; r < count; ++r)
    if (!finished.rows.count(r)) remaining.push_back(r);
  for (std::size_t i = mpi.rank(); i < remaining.size(); i += mpi.size())
    mine.push_back(remaining[i]);
  const int stride = width + 2;  // replica, finished (0/1), then its values
  std::vector<double> local(mine.size() * stride, 0.0);

  Progress progress(label, static_cast<double>(mine.size()), mpi.is_root() && !label.empty());
  std::atomic<int> done{0};
#pragma omp parallel for schedule(dynamic, 1)
  for (std::size_t i = 0; i < mine.size(); ++i) {
    double* row = local.data() + i * stride;
    row[0] = mine[i];
    if (stop_signal() != 0 && stop_handler) continue;  // the replicas under way finish
    try {
      compute(mine[i], row + 2);
    } catch (const StopRequested&) {  // stopped inside (a gas of features): not finished
      continue;
    }
    row[1] = 1.0;
    const int finished_now = ++done;
#pragma omp critical(cpm_replica_progress)
    progress.update(finished_now);
  }
  if (stop_signal() != 0 && stop_handler)
    progress.interrupt();
  else
    progress.finish();

  const std::vector<double> gathered = gather_rows(local);
  int signal = stop_handler ? stop_signal() : 0;
  MPI_Allreduce(MPI_IN_PLACE, &signal, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  int incomplete = 0;
  Eigen::MatrixXd table;
  if (mpi.is_root()) {
    for (std::size_t at = 0; at < gathered.size(); at += stride)
      if (gathered[at + 1] == 1.0)
        finished.rows[static_cast<int>(gathered[at])].assign(gathered.begin() + at + 2,
                                                             gathered.begin() + at + stride);
    incomplete = static_cast<int>(finished.rows.size()) < count;
    if (incomplete) {
      save_finished_replicas(signal, recovery, finished);
    } else {
      table.resize(count, width);
      for (const auto& [replica, row] : finished.rows)
        table.row(replica) = Eigen::Map<const Eigen::RowVectorXd>(row.data(), width);
      discard_finished_replicas(recovery);
    }
  }
  int outcome[2] = {incomplete, static_cast<int>(finished.rows.size())};  // and replicas saved
  MPI_Bcast(outcome, 2, MPI_INT, 0, MPI_COMM_WORLD);
  if (outcome[0]) throw StopRequested(signal, continue_hint(recovery, outcome[1], count));
  return table;
}

}  // namespace cpm
