// ParameterSet: dotted keys, printing as in TOML, and the comparison a restart relies on.
#include <gtest/gtest.h>

#include <limits>

#include "io/parameter_set.hpp"

namespace cpm {
namespace {

ParameterSet model() {
  ParameterSet p;
  p.set("particles.n", std::int64_t{300});
  p.set("particles.seed", std::uint64_t{1});
  p.set("interaction.kernel", std::string("riesz"));
  p.set("interaction.s", 0.5);
  p.set("dynamics.t_end", 5.0);
  p.set("output.directory", std::string("out"));
  return p;
}

TEST(ParameterSet, KeysMustBeDottedNames) {
  ParameterSet p;
  EXPECT_NO_THROW(p.set("grid.cells_0", 1.0));
  for (const char* bad : {"", ".s", "s.", "a..b", "a/b", "a b"})
    EXPECT_THROW(p.set(bad, 1.0), std::invalid_argument) << bad;
}

TEST(ParameterSet, ValuesPrintAsInToml) {
  EXPECT_EQ(to_string(ParameterSet::Value{0.5}), "0.5");
  EXPECT_EQ(to_string(ParameterSet::Value{std::int64_t{-7}}), "-7");
  EXPECT_EQ(to_string(ParameterSet::Value{std::string("log")}), "\"log\"");
  EXPECT_EQ(to_string(ParameterSet::Value{std::vector<double>{1.0, -2.5}}), "[1, -2.5]");
  EXPECT_EQ(to_string(ParameterSet::Value{std::numeric_limits<double>::infinity()}), "inf");
}

TEST(ParameterSet, FirstDifferenceFindsChangedAddedAndRemovedKeys) {
  EXPECT_EQ(first_difference(model(), model()), std::nullopt);
  ParameterSet changed = model();
  changed.set("interaction.s", 0.75);
  EXPECT_EQ(first_difference(model(), changed), "interaction.s");
  ParameterSet retyped = model();
  retyped.set("particles.n", 300.0);  // same number, another type: a different parameter
  EXPECT_EQ(first_difference(model(), retyped), "particles.n");
  ParameterSet added = model();
  added.set("grid.cells", std::vector<double>{64});
  EXPECT_EQ(first_difference(model(), added), "grid.cells");
  EXPECT_EQ(first_difference(added, model()), "grid.cells");
}

TEST(ParameterSet, FirstDifferenceSkipsIgnoredKeysAndTheirSections) {
  ParameterSet longer = model();
  longer.set("dynamics.t_end", 10.0);
  longer.set("output.directory", std::string("out2"));
  EXPECT_EQ(first_difference(model(), longer, {"dynamics.t_end", "output"}), std::nullopt);
  EXPECT_EQ(first_difference(model(), longer, {"dynamics.t", "output"}), "dynamics.t_end");
}

}  // namespace
}  // namespace cpm
