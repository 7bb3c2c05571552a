#pragma once
// Room for the next output frame, checked before it is written. A write that fails half-way
// (ENOSPC on a full disk, EFBIG past a quota or `ulimit -f`) leaves an HDF5 file that cannot be
// closed cleanly, and the library then damages the frames already flushed; a run therefore
// checks first and stops while every file is still whole.
#include <cstdint>
#include <string>
#include <vector>

namespace cpm {

struct PlannedWrite {
  std::string path;      // a file that grows, or a new file
  std::uintmax_t bytes;  // what the write adds to it (at most)
};

// "" when every planned write fits: their sum in the free space of the file system of the first
// one (as an unprivileged user sees it) and each file, grown, under the file-size limit of the
// process (RLIMIT_FSIZE). Otherwise the reason, e.g. "1.2 MB free on the file system of out".
std::string lack_of_room(const std::vector<PlannedWrite>& writes);

}  // namespace cpm
