#include "experiments/studies/replica_checkpoint.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "io/input_error.hpp"
#include "io/text_file.hpp"

namespace cpm {

namespace {

constexpr const char* kMagic = "cpm replica checkpoint 1";

}  // namespace

void write_replica_checkpoint(const std::string& path, const ReplicaCheckpoint& c) {
  const std::string temporary = path + ".partial";
  {
    std::ofstream out(temporary, std::ios::trunc);
    out << kMagic << '\n'
        << "study " << c.study << '\n'
        << "fingerprint " << c.fingerprint << '\n'
        << "table " << c.count << ' ' << c.width << '\n';
    char number[40];
    for (const auto& [replica, row] : c.rows) {
      out << replica;
      for (const double v : row) {
        std::snprintf(number, sizeof number, " %a", v);
        out << number;
      }
      out << '\n';
    }
    out.flush();
    if (!out) throw InputError(temporary + ": cannot write the replica checkpoint");
  }
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error) throw InputError(path + ": cannot write the replica checkpoint: " + error.message());
}

ReplicaCheckpoint read_replica_checkpoint(const std::string& path) {
  std::istringstream in(read_text_file(path));
  const auto damaged = [&](const std::string& why) {
    return InputError(path + ": not a readable replica checkpoint (" + why + ")");
  };
  std::string line, word;
  if (!std::getline(in, line) || line != kMagic) throw damaged("no checkpoint header");
  ReplicaCheckpoint c;
  if (!(in >> word >> c.study) || word != "study" || !(in >> word >> c.fingerprint) ||
      word != "fingerprint" || !(in >> word >> c.count >> c.width) || word != "table" ||
      c.count < 1 || c.width < 0)
    throw damaged("bad header");
  std::getline(in, line);
  for (int number = 5; std::getline(in, line); ++number) {
    std::istringstream fields(line);
    int replica = -1;
    if (!(fields >> replica) || replica < 0 || replica >= c.count || c.rows.count(replica))
      throw damaged("line " + std::to_string(number) + ": bad replica index");
    std::vector<double> row;
    while (fields >> word) {
      char* end = nullptr;
      row.push_back(std::strtod(word.c_str(), &end));
      if (*end != '\0') throw damaged("line " + std::to_string(number) + ": '" + word + "'");
    }
    if (c.width > 0 && row.size() < static_cast<std::size_t>(c.width))
      throw damaged("line " + std::to_string(number) + ": short row");
    if (c.width > 0 && row.size() > static_cast<std::size_t>(c.width))
      throw damaged("line " + std::to_string(number) + ": long row");
    c.rows.emplace(replica, std::move(row));
  }
  return c;
}

}  // namespace cpm
