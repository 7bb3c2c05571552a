#include "fuzz/hdf5_recipe.hpp"

#include <hdf5.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <sstream>
#include <vector>

namespace cpm::fuzz {

namespace {

// Values actually written per entry; a larger shape is only declared (`none`).
constexpr hsize_t kMaxWrittenElements = hsize_t{1} << 20;
constexpr hsize_t kMaxDimension = hsize_t{1} << 40;

struct Shape {
  bool scalar = true;
  std::vector<hsize_t> dims;
  hsize_t elements() const {
    hsize_t n = 1;
    for (hsize_t d : dims) {
      if (d == 0) return 0;
      n = n > kMaxDimension / d ? kMaxDimension : n * d;
    }
    return n;
  }
};

bool parse_shape(const std::string& text, Shape& shape) {
  if (text == "scalar") return true;
  shape.scalar = false;
  std::istringstream parts(text);
  for (std::string part; std::getline(parts, part, 'x');) {
    if (part.empty() || part.size() > 13 || shape.dims.size() == 8 ||
        part.find_first_not_of("0123456789") != std::string::npos)
      return false;
    const hsize_t d = std::stoull(part);
    if (d > kMaxDimension) return false;
    shape.dims.push_back(d);
  }
  return !shape.dims.empty();
}

hid_t make_space(const Shape& shape, bool unlimited_first) {
  if (shape.scalar) return H5Screate(H5S_SCALAR);
  std::vector<hsize_t> max = shape.dims;
  if (unlimited_first) max[0] = H5S_UNLIMITED;
  return H5Screate_simple(static_cast<int>(shape.dims.size()), shape.dims.data(), max.data());
}

// The memory type and one element's bytes for numeric TYPE names; -1 for an unknown name.
hid_t numeric_type(const std::string& name) {
  if (name == "i8") return H5T_NATIVE_INT8;
  if (name == "i32") return H5T_NATIVE_INT32;
  if (name == "i64") return H5T_NATIVE_INT64;
  if (name == "u8") return H5T_NATIVE_UINT8;
  if (name == "u64") return H5T_NATIVE_UINT64;
  if (name == "f32") return H5T_NATIVE_FLOAT;
  if (name == "f64") return H5T_NATIVE_DOUBLE;
  return -1;
}

// The values of a numeric entry as doubles (converted by HDF5 on writing), `n` of them.
std::vector<double> numeric_values(const std::string& text, hsize_t n, bool floating) {
  std::vector<std::string> words;
  std::istringstream rest(text);
  for (std::string w; rest >> w;) words.push_back(w);
  std::vector<double> values(n, 0.0);
  if (!words.empty() && words[0] == "random") {
    std::mt19937_64 engine(words.size() > 1 ? std::hash<std::string>{}(words[1]) : 0);
    std::uniform_real_distribution<double> unit(-1.0, 1.0);
    for (double& v : values) v = floating ? unit(engine) : static_cast<double>(engine() % 100);
    return values;
  }
  std::vector<double> given;
  for (const auto& w : words) {
    try {
      given.push_back(std::stod(w));
    } catch (const std::exception&) {
      given.push_back(0.0);
    }
  }
  for (hsize_t i = 0; i < n && !given.empty(); ++i) values[i] = given[i % given.size()];
  return values;
}

std::vector<std::string> string_values(std::string line, hsize_t n) {
  if (!line.empty() && line.front() == ' ') line.erase(0, 1);
  std::vector<std::string> given(1);
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '|') {
      given.emplace_back();
    } else if (line[i] == '\\' && i + 1 < line.size()) {
      ++i;
      given.back().push_back(line[i] == 'n' ? '\n' : line[i]);
    } else {
      given.back().push_back(line[i]);
    }
  }
  std::vector<std::string> values(n);
  for (hsize_t i = 0; i < n; ++i) values[i] = given[i % given.size()];
  return values;
}

// Creates the attribute or dataset `name` under `parent` with TYPE/SHAPE and writes its values.
void write_entry(hid_t parent, const std::string& name, const std::string& type_name,
                 const Shape& shape, bool dataset, bool chunked, std::istringstream& rest) {
  const hsize_t n = shape.elements();
  const bool is_string = type_name == "string" || type_name == "vstring";
  hid_t memory_type = is_string ? H5Tcopy(H5T_C_S1) : numeric_type(type_name);
  if (memory_type < 0) return;
  std::string values_text, first;
  std::getline(rest, values_text);
  std::istringstream(values_text) >> first;
  const bool write = first != "none" && n <= kMaxWrittenElements;
  std::vector<std::string> strings;
  if (is_string) {
    strings = string_values(values_text, std::min(n, kMaxWrittenElements));
    std::size_t width = 1;
    for (const auto& s : strings) width = std::max(width, s.size());
    H5Tset_size(memory_type, type_name == "vstring" ? H5T_VARIABLE : width);
  }

  const hid_t space = make_space(shape, dataset && chunked && !shape.scalar);
  hid_t object = -1;
  if (dataset) {
    const hid_t properties = H5Pcreate(H5P_DATASET_CREATE);
    if (chunked && !shape.scalar) {
      std::vector<hsize_t> chunk(shape.dims.size());
      for (std::size_t a = 0; a < chunk.size(); ++a)
        chunk[a] = std::clamp<hsize_t>(shape.dims[a], 1, 64);
      H5Pset_chunk(properties, static_cast<int>(chunk.size()), chunk.data());
      H5Pset_fletcher32(properties);
    }
    object =
        H5Dcreate2(parent, name.c_str(), memory_type, space, H5P_DEFAULT, properties, H5P_DEFAULT);
    H5Pclose(properties);
  } else {
    object = H5Acreate2(parent, name.c_str(), memory_type, space, H5P_DEFAULT, H5P_DEFAULT);
  }
  if (object >= 0 && write && n > 0) {
    const auto put = [&](const void* buffer) {
      if (dataset)
        H5Dwrite(object, memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buffer);
      else
        H5Awrite(object, memory_type, buffer);
    };
    if (type_name == "vstring") {
      std::vector<const char*> pointers;
      for (const auto& s : strings) pointers.push_back(s.c_str());
      put(pointers.data());
    } else if (is_string) {
      const std::size_t width = H5Tget_size(memory_type);
      std::vector<char> packed(width * n, '\0');
      for (hsize_t i = 0; i < n; ++i)
        std::copy(strings[i].begin(), strings[i].end(), packed.begin() + i * width);
      put(packed.data());
    } else {
      const std::vector<double> values =
          numeric_values(values_text, n, type_name == "f32" || type_name == "f64");
      const hid_t converted = H5Tcopy(H5T_NATIVE_DOUBLE);
      // HDF5 converts to the stored type (out-of-range integers saturate).
      if (dataset)
        H5Dwrite(object, converted, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data());
      else
        H5Awrite(object, converted, values.data());
      H5Tclose(converted);
    }
  }
  if (object >= 0) dataset ? H5Dclose(object) : H5Aclose(object);
  H5Sclose(space);
  if (is_string) H5Tclose(memory_type);
}

// Opens the object at `path`, creating it and missing parents as groups when absent.
hid_t open_or_create_group(hid_t file, const std::string& path) {
  if (path == "/" || path.empty()) return H5Oopen(file, "/", H5P_DEFAULT);
  if (const hid_t existing = H5Oopen(file, path.c_str(), H5P_DEFAULT); existing >= 0)
    return existing;
  const hid_t links = H5Pcreate(H5P_LINK_CREATE);
  H5Pset_create_intermediate_group(links, 1);
  const hid_t group = H5Gcreate2(file, path.c_str(), links, H5P_DEFAULT, H5P_DEFAULT);
  H5Pclose(links);
  return group;
}

}  // namespace

void write_hdf5_recipe(std::string_view recipe, const std::string& path) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (file < 0) return;
  std::istringstream lines{std::string(recipe)};
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string kind, object_path;
    if (!(words >> kind >> object_path) || kind.front() == '#') continue;
    if (kind == "group") {
      const hid_t g = open_or_create_group(file, object_path);
      if (g >= 0) H5Oclose(g);
      continue;
    }
    std::string name, type, shape_text, layout;
    if (kind == "attribute" && words >> name >> type >> shape_text) {
      Shape shape;
      const hid_t owner =
          parse_shape(shape_text, shape) ? open_or_create_group(file, object_path) : -1;
      if (owner >= 0) {
        write_entry(owner, name, type, shape, false, false, words);
        H5Oclose(owner);
      }
    } else if (kind == "dataset" && words >> type >> shape_text >> layout) {
      Shape shape;
      const std::size_t slash = object_path.rfind('/');
      const std::string parent_path =
          slash == std::string::npos ? "/" : object_path.substr(0, slash);
      const hid_t parent =
          parse_shape(shape_text, shape) ? open_or_create_group(file, parent_path) : -1;
      if (parent >= 0) {
        write_entry(parent, object_path.substr(slash + 1), type, shape, true, layout == "chunked",
                    words);
        H5Oclose(parent);
      }
    }
  }
  H5Fclose(file);
}

}  // namespace cpm::fuzz
