#include "io/disk_room.hpp"

#include <sys/resource.h>
#include <sys/statvfs.h>

#include <cstdio>
#include <filesystem>

namespace cpm {

namespace {

std::string megabytes(std::uintmax_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2g MB", static_cast<double>(bytes) / 1e6);
  return text;
}

// The folder whose file system holds `path` (the file itself need not exist yet).
std::string existing_folder(const std::string& path) {
  std::filesystem::path p = std::filesystem::absolute(path);
  std::error_code error;
  while (!std::filesystem::is_directory(p, error) && p.has_parent_path() && p != p.parent_path())
    p = p.parent_path();
  return p.string();
}

}  // namespace

std::string lack_of_room(const std::vector<PlannedWrite>& writes) {
  if (writes.empty()) return "";
  std::uintmax_t total = 0;
  for (const PlannedWrite& w : writes) total += w.bytes;
  struct statvfs fs {};
  const std::string folder = existing_folder(writes.front().path);
  if (statvfs(folder.c_str(), &fs) == 0) {
    const std::uintmax_t free_bytes = std::uintmax_t{fs.f_bavail} * fs.f_frsize;
    if (free_bytes < total)
      return "needs about " + megabytes(total) + ", " + megabytes(free_bytes) +
             " free on the file system of " + folder;
  }
  struct rlimit limit {};
  if (getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    for (const PlannedWrite& w : writes) {
      std::error_code error;
      const std::uintmax_t size = std::filesystem::is_regular_file(w.path, error)
                                      ? std::filesystem::file_size(w.path, error)
                                      : 0;
      if (size + w.bytes > limit.rlim_cur)
        return w.path + " would reach about " + megabytes(size + w.bytes) +
               ", past the file-size limit (ulimit -f) of " + megabytes(limit.rlim_cur);
    }
  }
  return "";
}

}  // namespace cpm
