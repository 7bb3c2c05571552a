#pragma once
// Strict reading of one TOML table: every read names its key, wrong types and impossible values
// throw InputError naming the full key, and finish() rejects keys nobody asked for.
#include <toml++/toml.h>
#include <Eigen/Dense>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/enum_names.hpp"
#include "io/input_error.hpp"
#include "io/text_file.hpp"

namespace cpm {

class TomlReader {
 public:
  // Parses TOML text; `source` names the file in error messages.
  static TomlReader parse(const std::string& text, const std::string& source);

  bool has(const std::string& key) const;
  double number(const std::string& key, std::optional<double> fallback = {});
  std::int64_t integer(const std::string& key, std::optional<std::int64_t> fallback = {});
  bool boolean(const std::string& key, std::optional<bool> fallback = {});
  std::string string(const std::string& key, std::optional<std::string> fallback = {});
  // A string that must be one of `choices`.
  std::string choice(const std::string& key, const std::vector<std::string>& choices,
                     std::optional<std::string> fallback = {});
  // One of the names of the enumeration E (core/enum_names.hpp), returned as its enumerator.
  template <class E>
  E enumerated(const std::string& key, std::optional<E> fallback = {}) {
    return enum_from_name<E>(choice(
        key, names(E{}), fallback ? std::optional<std::string>(name_of(*fallback)) : std::nullopt));
  }
  std::vector<double> numbers(const std::string& key,
                              std::optional<std::vector<double>> fallback = {});
  // An array of numbers, or one number read as an array of one.
  std::vector<double> number_or_numbers(const std::string& key);
  std::vector<std::string> strings(const std::string& key,
                                   std::optional<std::vector<std::string>> fallback = {});
  // An array of strings, or one string read as an array of one.
  std::vector<std::string> string_or_strings(const std::string& key,
                                             std::optional<std::vector<std::string>> fallback = {});
  Eigen::VectorXd vector(const std::string& key, std::optional<Eigen::VectorXd> fallback = {});

  // A sub-table; an absent key gives an empty table (every read then falls back).
  TomlReader table(const std::string& key);

  // Throws for the first key in this table that was never read.
  void finish() const;
  [[noreturn]] void fail(const std::string& key, const std::string& reason) const;

  const std::string& source() const { return *source_; }

 private:
  TomlReader(std::shared_ptr<toml::table> root, const toml::table* table, std::string prefix,
             std::shared_ptr<const std::string> source);
  const toml::node* lookup(const std::string& key);
  std::string full(const std::string& key) const {
    return prefix_.empty() ? key : prefix_ + "." + key;
  }

  std::shared_ptr<toml::table> root_;  // keeps the parsed document alive
  const toml::table* table_;           // null for an absent table
  std::string prefix_;
  std::shared_ptr<const std::string> source_;
  std::set<std::string> read_;
};

// Helpers for value checks with uniform messages.
void require(TomlReader& r, bool condition, const std::string& key, const std::string& reason);
// An integer of at least 1 that fits an int.
int positive_count(TomlReader& r, const std::string& key, std::optional<int> fallback = {});
// An integer of at least 0 that fits an int.
int non_negative_count(TomlReader& r, const std::string& key, std::optional<int> fallback = {});

}  // namespace cpm
