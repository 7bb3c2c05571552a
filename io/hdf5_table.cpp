#include "io/hdf5_table.hpp"

#include <H5Cpp.h>

#include <filesystem>
#include <stdexcept>

#include "io/input_error.hpp"
#include "io/hdf5_parameters.hpp"
#include "io/hdf5_support.hpp"

namespace cpm {

void write_hdf5_tables(const std::string& path, const ParameterSet& parameters,
                       const std::vector<NamedTable>& tables) {
  hdf5::record_library_errors();
  H5::H5File file(path, H5F_ACC_TRUNC);
  write_parameters(file, parameters);
  for (const NamedTable& t : tables) {
    const H5::Group group = hdf5::require_group(file, t.name);
    hdf5::write_attribute(group, "columns", t.columns);
    hdf5::FrameDataset table(group, "table", H5::PredType::NATIVE_DOUBLE, {t.columns.size()});
    for (const auto& row : t.rows) {
      if (row.size() != t.columns.size())
        throw std::invalid_argument(path + ": " + t.name + ": a row of " +
                                    std::to_string(row.size()) + " values for " +
                                    std::to_string(t.columns.size()) + " columns");
      table.append(row.data());
    }
  }
}

NamedTable read_hdf5_table(const std::string& path, const std::string& name) {
  if (!std::filesystem::is_regular_file(path)) throw InputError(path + ": no such file");
  hdf5::record_library_errors();
  try {
    const H5::H5File file(path, H5F_ACC_RDONLY);
    if (!file.nameExists(name)) throw InputError(path + ": holds no table " + name);
    const H5::Group group = file.openGroup(name);
    NamedTable t{name, hdf5::read_strings_attribute(group, "columns"), {}};
    std::vector<hsize_t> shape;
    const std::vector<double> values = hdf5::read_doubles(group.openDataSet("table"), shape);
    if (shape.size() != 2 || shape[1] != t.columns.size())
      throw InputError(path + ": " + name + "/table: shape does not match its columns");
    for (hsize_t r = 0; r < shape[0]; ++r)
      t.rows.emplace_back(values.begin() + r * shape[1], values.begin() + (r + 1) * shape[1]);
    return t;
  } catch (const H5::Exception&) {
    throw InputError(path + ": " + name + ": " + hdf5::last_library_error());
  }
}

}  // namespace cpm
