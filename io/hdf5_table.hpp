#pragma once
// The numeric tables of a study in one HDF5 file, beside their CSV twins (convergence.h5,
// ldp.h5): per table a group holding the dataset `table`, one compound record per row with one
// double field per column (chunked, checksummed), and the attribute `columns` (the header, in
// order); the study's parameters under `parameters` (io/hdf5_parameters.hpp). Named fields make
// a table a DataFrame in one line:
//
//     pandas.DataFrame(h5py.File("out/ldp.h5")["tails/table"][()])
//
// Files of cpm 0.1 held `table` as a 2D array of doubles [rows][columns]; read_hdf5_table reads
// both layouts.
#include <string>
#include <vector>

#include "io/parameter_set.hpp"

namespace cpm {

struct NamedTable {
  std::string name;  // the group
  std::vector<std::string> columns;
  std::vector<std::vector<double>> rows;  // each of columns.size() values
  bool operator==(const NamedTable&) const = default;
};

// Creates (or replaces) the file. Throws std::invalid_argument for a row of the wrong length.
void write_hdf5_tables(const std::string& path, const ParameterSet& parameters,
                       const std::vector<NamedTable>& tables);

// One table back from such a file; InputError naming the file and object when it is missing or
// damaged.
NamedTable read_hdf5_table(const std::string& path, const std::string& name);

}  // namespace cpm
