#pragma once
// Names of the enumerations a configuration chooses from (integrators, minimisers, pair-sum
// methods): an enumeration E with the values 0, 1, … declares
//   const std::vector<std::string>& names(E);
// its names in that order, found by argument-dependent lookup. Readers turn a name into E once
// (TomlReader::enumerated); the library compares enumerators, and writes name_of(e).
#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace cpm {

template <class E>
const std::string& name_of(E e) {
  return names(e)[static_cast<std::size_t>(e)];
}

// Whether `name` names an enumerator of E.
template <class E>
bool is_name_of(const std::string& name) {
  const std::vector<std::string>& all = names(E{});
  return std::find(all.begin(), all.end(), name) != all.end();
}

// The enumerator named `name`; std::invalid_argument for another name.
template <class E>
E enum_from_name(const std::string& name) {
  const std::vector<std::string>& all = names(E{});
  const auto it = std::find(all.begin(), all.end(), name);
  if (it == all.end()) throw std::invalid_argument("unknown name '" + name + "'");
  return static_cast<E>(it - all.begin());
}

}  // namespace cpm
