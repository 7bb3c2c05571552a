#include "io/csv_table.hpp"

#include <iomanip>
#include <stdexcept>

namespace cpm {

CsvTable::CsvTable(const std::string& path, std::vector<std::string> columns, bool append)
    : path_(path),
      columns_(std::move(columns)),
      out_(path, append ? std::ios::app : std::ios::trunc) {
  if (!out_) throw std::runtime_error(path + ": cannot write the table");
  if (!append) {
    for (std::size_t i = 0; i < columns_.size(); ++i) out_ << (i ? "," : "") << columns_[i];
    out_ << '\n';
  }
  out_ << std::setprecision(17);
  out_.flush();
  if (!out_) throw std::runtime_error(path + ": cannot write the table");
}

void CsvTable::add_row(const std::vector<double>& values) {
  if (values.size() != columns_.size())
    throw std::logic_error(path_ + ": row has " + std::to_string(values.size()) + " values for " +
                           std::to_string(columns_.size()) + " columns");
  for (std::size_t i = 0; i < values.size(); ++i) out_ << (i ? "," : "") << values[i];
  out_ << '\n';
  out_.flush();
  if (!out_) throw std::runtime_error(path_ + ": cannot write the table (disk full?)");
}

}  // namespace cpm
