#pragma once
// The replicas a study finished before a clean stop (SIGINT/SIGTERM), so that `--restart`
// computes only the others and ends with the table an uninterrupted study gives, bit for bit. A
// text file: a header naming the study, the fingerprint of its configuration file and the table's
// size, then one line per finished replica — its index and its row in hexadecimal floating point
// (exact); width 0: rows of any length (a study whose records vary in size). Written to a temporary
// file and renamed, so a second stop never leaves half a file.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace cpm {

struct ReplicaCheckpoint {
  std::string study;              // the command that continues it: "converge", "ldp"
  std::uint64_t fingerprint = 0;  // of the configuration file's text
  int count = 0, width = 0;       // the table: replicas × values per replica (0: each row its own)
  std::map<int, std::vector<double>> rows;  // finished replicas
};

void write_replica_checkpoint(const std::string& path, const ReplicaCheckpoint& checkpoint);
// InputError naming `path` for a missing, foreign or damaged file.
ReplicaCheckpoint read_replica_checkpoint(const std::string& path);

}  // namespace cpm
