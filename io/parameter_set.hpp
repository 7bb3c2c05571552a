#pragma once
// The model and run parameters of a run as a flat, sorted map from dotted keys
// ("interaction.s", "particles.n") to numbers, strings or number lists. Output files store it
// (HDF5: one group per key prefix, one attribute per key) and restarts read it back.
#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

namespace cpm {

class ParameterSet {
 public:
  using Value = std::variant<std::int64_t, std::uint64_t, double, std::string, std::vector<double>>;

  // Keys are dot-separated names of letters, digits and '_'; throws std::invalid_argument
  // otherwise.
  void set(const std::string& key, Value value);
  const Value* find(const std::string& key) const;
  const std::map<std::string, Value>& entries() const { return entries_; }
  bool operator==(const ParameterSet&) const = default;

 private:
  std::map<std::string, Value> entries_;
};

}  // namespace cpm
