// Study tables in HDF5: written and read back exactly, with the parameters beside them; bad input
// is reported naming the file.
#include "io/hdf5_table.hpp"

#include <gtest/gtest.h>

#include <H5Cpp.h>

#include <cmath>
#include <fstream>
#include <limits>

#include "io/hdf5_parameters.hpp"
#include "io/hdf5_support.hpp"
#include "io/input_error.hpp"
#include "tests/scratch_directory.hpp"

namespace cpm {
namespace {

TEST(Hdf5Table, TablesAndParametersRoundTripExactly) {
  const std::string path = testing_support::fresh_path("tables.h5");
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const NamedTable a{"tails", {"n", "p", "rate"}, {{4, 0.125, 1.0 / 3.0}, {16, 1e-300, nan}}};
  const NamedTable b{"statistics", {"x"}, {{-2.5}, {7.0}, {0.1}}};
  ParameterSet parameters;
  parameters.set("ldp.ns", std::vector<double>{4, 16});
  parameters.set("interaction.kernel", std::string("log"));
  write_hdf5_tables(path, parameters, {a, b});

  const NamedTable a_back = read_hdf5_table(path, "tails");
  EXPECT_EQ(a_back.columns, a.columns);
  ASSERT_EQ(a_back.rows.size(), 2u);
  EXPECT_EQ(a_back.rows[0], a.rows[0]);
  EXPECT_EQ(a_back.rows[1][1], 1e-300);
  EXPECT_TRUE(std::isnan(a_back.rows[1][2]));
  EXPECT_EQ(read_hdf5_table(path, "statistics"), b);
  const H5::H5File file(path, H5F_ACC_RDONLY);
  EXPECT_EQ(read_parameters(file.openGroup("parameters")), parameters);
}

// Found by fuzz/fuzz_model_checkpoint.cpp: an attribute name that is not a dotted parameter name
// escaped as std::invalid_argument; the readers turn std::runtime_error into InputError.
TEST(Hdf5Table, AnAttributeNameParametersDoNotUseIsAReadError) {
  const std::string path = testing_support::fresh_path("bad_name.h5");
  {
    const H5::H5File file(path, H5F_ACC_TRUNC);
    hdf5::write_attribute(file.createGroup("parameters"), "hea(s", std::int64_t{2});
  }
  const H5::H5File file(path, H5F_ACC_RDONLY);
  EXPECT_THROW(read_parameters(file.openGroup("parameters")), std::runtime_error);
  try {
    read_parameters(file.openGroup("parameters"));
  } catch (const std::invalid_argument&) {
    FAIL() << "std::invalid_argument escaped";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("hea(s"), std::string::npos) << e.what();
  }
}

TEST(Hdf5Table, TableIsACompoundDatasetWithOneNamedFieldPerColumn) {
  const std::string path = testing_support::fresh_path("compound.h5");
  write_hdf5_tables(path, {},
                    {{"tails", {"n", "P_N100_beta1", "rate"}, {{4, 0.5, 2}, {8, 0.25, 3}}}});
  const H5::H5File file(path, H5F_ACC_RDONLY);
  const H5::DataSet table = file.openDataSet("tails/table");
  ASSERT_EQ(table.getTypeClass(), H5T_COMPOUND);
  const H5::CompType type = table.getCompType();
  ASSERT_EQ(type.getNmembers(), 3);
  EXPECT_EQ(type.getMemberName(1), "P_N100_beta1");
  hsize_t rows = 0;
  table.getSpace().getSimpleExtentDims(&rows);
  EXPECT_EQ(rows, 2u);
}

// cpm 0.1 wrote `table` as a 2D array of doubles with the header in `columns`: still readable.
TEST(Hdf5Table, TablesOfTheEarlierTwoDimensionalLayoutAreRead) {
  const std::string path = testing_support::fresh_path("legacy.h5");
  {
    H5::H5File file(path, H5F_ACC_TRUNC);
    const H5::Group group = file.createGroup("convergence");
    hdf5::write_attribute(group, "columns", std::vector<std::string>{"n", "w1_mean"});
    const hsize_t shape[2] = {3, 2};
    const double values[6] = {100, 0.5, 200, 0.25, 400, 0.125};
    group.createDataSet("table", H5::PredType::NATIVE_DOUBLE, H5::DataSpace(2, shape))
        .write(values, H5::PredType::NATIVE_DOUBLE);
  }
  const NamedTable t = read_hdf5_table(path, "convergence");
  EXPECT_EQ(t.columns, (std::vector<std::string>{"n", "w1_mean"}));
  ASSERT_EQ(t.rows.size(), 3u);
  EXPECT_EQ(t.rows[2], (std::vector<double>{400, 0.125}));
}

TEST(Hdf5Table, RowOfTheWrongLengthIsRefused) {
  const std::string path = testing_support::fresh_path("ragged.h5");
  EXPECT_THROW(write_hdf5_tables(path, {}, {{"t", {"a", "b"}, {{1.0, 2.0}, {3.0}}}}),
               std::invalid_argument);
}

TEST(Hdf5Table, MissingTableFileOrDamageNamesTheFile) {
  const std::string path = testing_support::fresh_path("one_table.h5");
  write_hdf5_tables(path, {}, {{"t", {"a"}, {{1.0}}}});
  for (const auto& [file, table] : std::vector<std::pair<std::string, std::string>>{
           {path, "absent"}, {path + ".missing", "t"}}) {
    try {
      read_hdf5_table(file, table);
      FAIL() << file << " " << table;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(file), std::string::npos) << e.what();
    }
  }
  const std::string junk = testing_support::fresh_path("junk.h5");
  std::ofstream(junk) << "not an HDF5 file";
  EXPECT_THROW(read_hdf5_table(junk, "t"), InputError);
}

}  // namespace
}  // namespace cpm
