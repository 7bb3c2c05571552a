#pragma once
// The model and run parameters of a run as a flat, sorted map from dotted keys
// ("interaction.s", "particles.n") to numbers, strings or number lists. Output files store it
// (HDF5: one group per key prefix, one attribute per key) and restarts read it back.
#include <cstdint>
#include <map>
#include <optional>
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
  void erase(const std::string& key) { entries_.erase(key); }
  const std::map<std::string, Value>& entries() const { return entries_; }
  bool operator==(const ParameterSet&) const = default;

 private:
  std::map<std::string, Value> entries_;
};

// The value as it would be written in the TOML configuration: 0.5, 7, "riesz", [1, 2].
std::string to_string(const ParameterSet::Value& value);

// The first key (in sorted order) whose value differs between `a` and `b`, or that only one of
// them holds, skipping keys equal to or below an entry of `ignored` ("output" skips
// "output.directory"). A restart uses it to refuse a checkpoint written with another model.
std::optional<std::string> first_difference(const ParameterSet& a, const ParameterSet& b,
                                            const std::vector<std::string>& ignored = {});

}  // namespace cpm
