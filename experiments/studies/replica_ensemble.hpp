#pragma once
// Independent replicas spread over MPI ranks (round robin) and OpenMP threads, with every
// replica's result gathered on rank 0 in replica order. A replica's result depends only on its
// index (and the seed it uses), so the gathered table is identical for any rank or thread count.
#include <Eigen/Dense>
#include <functional>
#include <string>

#include "core/stop_request.hpp"
#include "experiments/studies/replica_checkpoint.hpp"
#include "parallel/launch_environment.hpp"

namespace cpm {

// What a study needs to stop cleanly and continue. While its replicas run, SIGINT or SIGTERM
// lets the replicas under way finish, writes every finished one to replica_checkpoint_path(
// directory) (experiments/studies/replica_checkpoint.hpp) and throws StopRequested naming the
// command that continues; `restart` names such a file to continue from. Empty `study`: no
// checkpoint (the signal's default action).
struct ReplicaRecovery {
  std::string study;               // the command that continues: "converge", "ldp"
  std::string config_path;         // its configuration file: fingerprinted and named in the hint
  std::string directory;           // the study's output folder
  std::string restart;             // a checkpoint to continue from, or ""
  std::string items = "replicas";  // what the hint counts: "replicas", "sets", "runs"
};

std::string replica_checkpoint_path(const std::string& directory);
// Whether the study continues from the checkpoint of its own output folder (which it then keeps).
bool continues_in_place(const ReplicaRecovery& recovery);

// For a study that runs its items itself (in order, on one rank): the checkpoint
// `recovery.restart` names, checked against this study (InputError naming it for another study's
// or configuration's), or an empty one to start.
ReplicaCheckpoint finished_replicas(const ReplicaRecovery& recovery, int count, int width);
// Writes the finished items to replica_checkpoint_path(recovery.directory) and returns the stop to
// throw, naming the command that continues.
StopRequested save_finished_replicas(int signal, const ReplicaRecovery& recovery,
                                     ReplicaCheckpoint finished);
// Removes the checkpoint a finished study continued from, if it lies in its own folder.
void discard_finished_replicas(const ReplicaRecovery& recovery);

// Computes result(replica, 0..width−1) for replicas 0..count−1 with `compute(replica, row)`
// writing `width` doubles to row. Returns the (count, width) table on rank 0 and an empty matrix
// on the other ranks. `label` names the progress line printed by rank 0 (empty: silent).
Eigen::MatrixXd run_replicas(const MpiEnvironment& mpi, int count, int width,
                             const std::function<void(int replica, double* row)>& compute,
                             const std::string& label, const ReplicaRecovery& recovery = {});

}  // namespace cpm
