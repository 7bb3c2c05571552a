#include "io/parameter_set.hpp"

#include <cctype>
#include <stdexcept>

namespace cpm {

namespace {

bool valid_key(const std::string& key) {
  bool part_empty = true;
  for (char c : key) {
    if (c == '.') {
      if (part_empty) return false;
      part_empty = true;
    } else if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') {
      part_empty = false;
    } else {
      return false;
    }
  }
  return !part_empty;
}

}  // namespace

void ParameterSet::set(const std::string& key, Value value) {
  if (!valid_key(key))
    throw std::invalid_argument("parameter key '" + key + "' is not a dotted name");
  entries_[key] = std::move(value);
}

const ParameterSet::Value* ParameterSet::find(const std::string& key) const {
  const auto it = entries_.find(key);
  return it == entries_.end() ? nullptr : &it->second;
}

}  // namespace cpm
