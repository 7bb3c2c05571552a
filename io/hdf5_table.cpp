#include "io/hdf5_table.hpp"

#include <H5Cpp.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <stdexcept>

#include "io/hdf5_parameters.hpp"
#include "io/hdf5_support.hpp"
#include "io/input_error.hpp"

namespace cpm {

namespace {

// A compound type of one double per column, packed in column order.
H5::CompType row_type(const std::vector<std::string>& columns) {
  H5::CompType type(columns.size() * sizeof(double));
  for (std::size_t c = 0; c < columns.size(); ++c)
    type.insertMember(columns[c], c * sizeof(double), H5::PredType::NATIVE_DOUBLE);
  return type;
}

void write_table(const H5::Group& group, const std::string& where, const NamedTable& t) {
  if (t.columns.empty()) throw std::invalid_argument(where + ": a table needs columns");
  if (std::set<std::string>(t.columns.begin(), t.columns.end()).size() != t.columns.size())
    throw std::invalid_argument(where + ": column names must differ");
  std::vector<double> packed;
  packed.reserve(t.rows.size() * t.columns.size());
  for (const auto& row : t.rows) {
    if (row.size() != t.columns.size())
      throw std::invalid_argument(where + ": a row of " + std::to_string(row.size()) +
                                  " values for " + std::to_string(t.columns.size()) + " columns");
    packed.insert(packed.end(), row.begin(), row.end());
  }
  const H5::CompType type = row_type(t.columns);
  const hsize_t rows = t.rows.size(), unlimited = H5S_UNLIMITED;
  const hsize_t chunk = std::clamp<hsize_t>(65536 / type.getSize(), 1, std::max<hsize_t>(rows, 1));
  H5::DSetCreatPropList properties;
  properties.setChunk(1, &chunk);
  properties.setFletcher32();
  const H5::DataSpace space(1, &rows, &unlimited);
  const H5::DataSet table = group.createDataSet("table", type, space, properties);
  if (rows > 0) table.write(packed.data(), type);
}

// The table of cpm 0.1: values[rows][columns] in a 2D dataset of doubles.
void read_legacy_table(const H5::DataSet& dataset, const std::string& path, NamedTable& t) {
  std::vector<hsize_t> shape;
  const std::vector<double> values = hdf5::read_doubles(dataset, shape);
  if (shape.size() != 2 || shape[1] != t.columns.size())
    throw InputError(path + ": " + t.name + "/table: shape does not match its columns");
  for (hsize_t r = 0; r < shape[0]; ++r)
    t.rows.emplace_back(values.begin() + r * shape[1], values.begin() + (r + 1) * shape[1]);
}

void read_compound_table(const H5::DataSet& dataset, const std::string& path, NamedTable& t) {
  const H5::CompType stored = dataset.getCompType();
  if (t.columns.empty())
    for (int m = 0; m < stored.getNmembers(); ++m)
      t.columns.push_back(stored.getMemberName(static_cast<unsigned>(m)));
  for (const std::string& column : t.columns)
    if (stored.getMemberIndex(column) < 0)
      throw InputError(path + ": " + t.name + "/table: no column " + column);
  const H5::DataSpace space = dataset.getSpace();
  if (space.getSimpleExtentNdims() != 1)
    throw InputError(path + ": " + t.name + "/table: a table of rows must be one-dimensional");
  hsize_t rows = 0;
  space.getSimpleExtentDims(&rows);
  std::vector<double> packed(rows * t.columns.size());
  if (rows > 0) dataset.read(packed.data(), row_type(t.columns));
  for (hsize_t r = 0; r < rows; ++r)
    t.rows.emplace_back(packed.begin() + r * t.columns.size(),
                        packed.begin() + (r + 1) * t.columns.size());
}

}  // namespace

void write_hdf5_tables(const std::string& path, const ParameterSet& parameters,
                       const std::vector<NamedTable>& tables) {
  hdf5::record_library_errors();
  H5::H5File file(path, H5F_ACC_TRUNC);
  write_parameters(file, parameters);
  for (const NamedTable& t : tables) {
    const H5::Group group = hdf5::require_group(file, t.name);
    hdf5::write_attribute(group, "columns", t.columns);
    write_table(group, path + ": " + t.name, t);
  }
}

NamedTable read_hdf5_table(const std::string& path, const std::string& name) {
  if (!std::filesystem::is_regular_file(path)) throw InputError(path + ": no such file");
  hdf5::record_library_errors();
  try {
    const H5::H5File file(path, H5F_ACC_RDONLY);
    if (!file.nameExists(name)) throw InputError(path + ": holds no table " + name);
    const H5::Group group = file.openGroup(name);
    NamedTable t{name, {}, {}};
    if (group.attrExists("columns")) t.columns = hdf5::read_strings_attribute(group, "columns");
    const H5::DataSet dataset = group.openDataSet("table");
    if (dataset.getTypeClass() == H5T_COMPOUND) {
      read_compound_table(dataset, path, t);
    } else {
      if (t.columns.empty()) throw InputError(path + ": " + name + ": no attribute columns");
      read_legacy_table(dataset, path, t);
    }
    return t;
  } catch (const H5::Exception&) {
    throw InputError(path + ": " + name + ": " + hdf5::last_library_error());
  }
}

}  // namespace cpm
