// What TomlDocument writes is TOML that toml++ reads back to the same values: every double to the
// bit, integers as integers, strings with their escapes.
#include "io/toml_writer.hpp"

#include <gtest/gtest.h>

#include <toml++/toml.h>
#include <cmath>
#include <limits>
#include <numbers>

namespace cpm {
namespace {

TEST(TomlWriter, EveryDoubleReadsBackToTheBit) {
  const std::vector<double> values = {0.0,
                                      -0.0,
                                      1.0,
                                      20.0,
                                      0.1,
                                      1e-3,
                                      1.0 / 3,
                                      2e-300,
                                      1.5e300,
                                      -7.25,
                                      1e22,
                                      5e-324,
                                      std::numbers::pi,
                                      1e-8,
                                      123456789012345678.0};
  TomlDocument doc;
  doc.table("numbers").entry("values", toml_floats(values)).entry("one", toml_float(4.0));
  const toml::table parsed = toml::parse(doc.text());
  const toml::array& read = *parsed["numbers"]["values"].as_array();
  ASSERT_EQ(read.size(), values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    ASSERT_TRUE(read[i].is_floating_point()) << toml_float(values[i]);
    const double back = read[i].value<double>().value();
    EXPECT_EQ(std::signbit(back), std::signbit(values[i])) << toml_float(values[i]);
    EXPECT_EQ(back, values[i]) << toml_float(values[i]);
  }
  EXPECT_TRUE(parsed["numbers"]["one"].is_floating_point());
  EXPECT_EQ(toml_float(20.0), "20.0");
  EXPECT_EQ(toml_float(1e300), "1e300");
}

TEST(TomlWriter, InfinitiesIntegersAndStringsReadBack) {
  TomlDocument doc;
  doc.comment("two\nlines")
      .table("a")
      .entry("beta", toml_float(std::numeric_limits<double>::infinity()))
      .entry("n", toml_integer(-9007199254740993))
      .entry("cells", toml_integers({64, 32}))
      .entry("text", toml_string("quote \" backslash \\ tab \t newline \n bell \a"));
  const toml::table parsed = toml::parse(doc.text());
  EXPECT_TRUE(std::isinf(parsed["a"]["beta"].value<double>().value()));
  EXPECT_EQ(parsed["a"]["n"].value<std::int64_t>().value(), -9007199254740993);
  EXPECT_EQ(parsed["a"]["cells"][1].value<std::int64_t>().value(), 32);
  EXPECT_EQ(parsed["a"]["text"].value<std::string>().value(),
            "quote \" backslash \\ tab \t newline \n bell \a");
  EXPECT_EQ(doc.text().rfind("# two\n# lines\n", 0), 0u);
}

}  // namespace
}  // namespace cpm
