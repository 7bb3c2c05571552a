#pragma once
// A CSV table with a header line, written row by row and flushed so a running study can be
// watched (and a crashed one keeps what it had).
#include <fstream>
#include <string>
#include <vector>

namespace cpm {

class CsvTable {
 public:
  // `append`: continue a table written earlier (its header is kept, not written again).
  CsvTable(const std::string& path, std::vector<std::string> columns, bool append = false);
  void add_row(const std::vector<double>& values);
  const std::vector<std::string>& columns() const { return columns_; }

 private:
  std::string path_;
  std::vector<std::string> columns_;
  std::ofstream out_;
};

}  // namespace cpm
