#include "config/toml_reader.hpp"

#include <fstream>
#include <limits>
#include <sstream>

namespace cpm {

TomlReader::TomlReader(std::shared_ptr<toml::table> root, const toml::table* table,
                       std::string prefix, std::shared_ptr<const std::string> source)
    : root_(std::move(root)),
      table_(table),
      prefix_(std::move(prefix)),
      source_(std::move(source)) {}

TomlReader TomlReader::parse(const std::string& text, const std::string& source) {
  try {
    auto root = std::make_shared<toml::table>(toml::parse(text, source));
    const toml::table* t = root.get();
    return TomlReader(std::move(root), t, "", std::make_shared<const std::string>(source));
  } catch (const toml::parse_error& e) {
    std::ostringstream o;
    o << source << ":" << e.source().begin.line << ": invalid TOML: " << e.description();
    throw InputError(o.str());
  }
}

void TomlReader::fail(const std::string& key, const std::string& reason) const {
  throw InputError(*source_ + ": " + full(key) + ": " + reason);
}

void require(TomlReader& r, bool condition, const std::string& key, const std::string& reason) {
  if (!condition) r.fail(key, reason);
}

namespace {

// An integer of at least `minimum` that fits an int.
int count_at_least(TomlReader& r, const std::string& key, std::optional<int> fallback,
                   int minimum) {
  const auto v = r.integer(key, fallback ? std::optional<std::int64_t>(*fallback) : std::nullopt);
  require(r, v >= minimum, key, "must be at least " + std::to_string(minimum));
  require(r, v <= std::numeric_limits<int>::max(), key,
          "must be at most " + std::to_string(std::numeric_limits<int>::max()));
  return static_cast<int>(v);
}

}  // namespace

int positive_count(TomlReader& r, const std::string& key, std::optional<int> fallback) {
  return count_at_least(r, key, fallback, 1);
}

int non_negative_count(TomlReader& r, const std::string& key, std::optional<int> fallback) {
  return count_at_least(r, key, fallback, 0);
}

bool TomlReader::has(const std::string& key) const {
  return table_ && table_->contains(key);
}

const toml::node* TomlReader::lookup(const std::string& key) {
  read_.insert(key);
  return table_ ? table_->get(key) : nullptr;
}

double TomlReader::number(const std::string& key, std::optional<double> fallback) {
  const toml::node* n = lookup(key);
  if (!n) {
    if (!fallback) fail(key, "missing (a number is required)");
    return *fallback;
  }
  if (auto v = n->value_exact<double>()) return *v;
  if (auto v = n->value_exact<std::int64_t>()) return static_cast<double>(*v);
  // TOML's inf/nan are floats; strings such as "inf" are accepted for β = ∞.
  if (auto s = n->value_exact<std::string>()) {
    if (*s == "inf" || *s == "infinity") return std::numeric_limits<double>::infinity();
  }
  fail(key, "expected a number");
}

std::int64_t TomlReader::integer(const std::string& key, std::optional<std::int64_t> fallback) {
  const toml::node* n = lookup(key);
  if (!n) {
    if (!fallback) fail(key, "missing (an integer is required)");
    return *fallback;
  }
  if (auto v = n->value_exact<std::int64_t>()) return *v;
  fail(key, "expected an integer");
}

bool TomlReader::boolean(const std::string& key, std::optional<bool> fallback) {
  const toml::node* n = lookup(key);
  if (!n) {
    if (!fallback) fail(key, "missing (true or false is required)");
    return *fallback;
  }
  if (auto v = n->value_exact<bool>()) return *v;
  fail(key, "expected true or false");
}

std::string TomlReader::string(const std::string& key, std::optional<std::string> fallback) {
  const toml::node* n = lookup(key);
  if (!n) {
    if (!fallback) fail(key, "missing (a string is required)");
    return *fallback;
  }
  if (auto v = n->value_exact<std::string>()) return *v;
  fail(key, "expected a string");
}

std::string TomlReader::choice(const std::string& key, const std::vector<std::string>& choices,
                               std::optional<std::string> fallback) {
  std::string value = string(key, std::move(fallback));
  for (const auto& c : choices)
    if (c == value) return value;
  std::string list;
  for (const auto& c : choices) list += (list.empty() ? "" : ", ") + c;
  fail(key, "unknown value '" + value + "' (expected one of: " + list + ")");
}

std::vector<double> TomlReader::numbers(const std::string& key,
                                        std::optional<std::vector<double>> fallback) {
  const toml::node* n = lookup(key);
  if (!n) {
    if (!fallback) fail(key, "missing (an array of numbers is required)");
    return *fallback;
  }
  const toml::array* arr = n->as_array();
  if (!arr) fail(key, "expected an array of numbers");
  std::vector<double> out;
  for (const auto& e : *arr) {
    if (auto v = e.value_exact<double>())
      out.push_back(*v);
    else if (auto i = e.value_exact<std::int64_t>())
      out.push_back(static_cast<double>(*i));
    else
      fail(key, "expected an array of numbers");
  }
  return out;
}

std::vector<double> TomlReader::number_or_numbers(const std::string& key) {
  const toml::node* n = lookup(key);
  if (n && !n->is_array()) {
    if (auto v = n->value_exact<double>()) return {*v};
    if (auto i = n->value_exact<std::int64_t>()) return {static_cast<double>(*i)};
    fail(key, "expected a number or an array of numbers");
  }
  return numbers(key);
}

std::vector<std::string> TomlReader::strings(const std::string& key,
                                             std::optional<std::vector<std::string>> fallback) {
  const toml::node* n = lookup(key);
  if (!n) {
    if (!fallback) fail(key, "missing (an array of strings is required)");
    return *fallback;
  }
  const toml::array* arr = n->as_array();
  if (!arr) fail(key, "expected an array of strings");
  std::vector<std::string> out;
  for (const auto& e : *arr) {
    if (auto v = e.value_exact<std::string>())
      out.push_back(*v);
    else
      fail(key, "expected an array of strings");
  }
  return out;
}

std::vector<std::string> TomlReader::string_or_strings(
    const std::string& key, std::optional<std::vector<std::string>> fallback) {
  const toml::node* n = lookup(key);
  if (n && !n->is_array()) {
    if (auto v = n->value_exact<std::string>()) return {*v};
    fail(key, "expected a string or an array of strings");
  }
  return strings(key, std::move(fallback));
}

Eigen::VectorXd TomlReader::vector(const std::string& key,
                                   std::optional<Eigen::VectorXd> fallback) {
  std::optional<std::vector<double>> fb;
  if (fallback) fb = std::vector<double>(fallback->data(), fallback->data() + fallback->size());
  const std::vector<double> v = numbers(key, fb);
  return Eigen::Map<const Eigen::VectorXd>(v.data(), static_cast<Eigen::Index>(v.size()));
}

TomlReader TomlReader::table(const std::string& key) {
  const toml::node* n = lookup(key);
  if (n && !n->is_table()) fail(key, "expected a table");
  return TomlReader(root_, n ? n->as_table() : nullptr, full(key), source_);
}

void TomlReader::finish() const {
  if (!table_) return;
  for (const auto& [k, v] : *table_) {
    const std::string key(k.str());
    if (!read_.count(key)) fail(key, "unknown key");
  }
}

}  // namespace cpm
