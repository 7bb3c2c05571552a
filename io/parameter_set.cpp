#include "io/parameter_set.hpp"

#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>
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

namespace {

struct ValuePrinter {
  std::ostringstream& out;
  void operator()(std::int64_t v) const { out << v; }
  void operator()(std::uint64_t v) const { out << v; }
  void operator()(double v) const { out << v; }
  void operator()(const std::string& v) const { out << '"' << v << '"'; }
  void operator()(const std::vector<double>& v) const {
    out << '[';
    for (std::size_t i = 0; i < v.size(); ++i) out << (i ? ", " : "") << v[i];
    out << ']';
  }
};

bool is_ignored(const std::string& key, const std::vector<std::string>& ignored) {
  return std::any_of(ignored.begin(), ignored.end(), [&](const std::string& prefix) {
    return key == prefix || key.rfind(prefix + ".", 0) == 0;
  });
}

}  // namespace

std::string to_string(const ParameterSet::Value& value) {
  std::ostringstream out;
  out.precision(17);
  std::visit(ValuePrinter{out}, value);
  return out.str();
}

std::optional<std::string> first_difference(const ParameterSet& a, const ParameterSet& b,
                                            const std::vector<std::string>& ignored) {
  std::set<std::string> keys;
  for (const auto& entry : a.entries()) keys.insert(entry.first);
  for (const auto& entry : b.entries()) keys.insert(entry.first);
  for (const std::string& key : keys) {
    if (is_ignored(key, ignored)) continue;
    const ParameterSet::Value *in_a = a.find(key), *in_b = b.find(key);
    if (!in_a || !in_b || *in_a != *in_b) return key;
  }
  return std::nullopt;
}

}  // namespace cpm
