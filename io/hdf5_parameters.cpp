#include "io/hdf5_parameters.hpp"

#include <stdexcept>

#include "io/hdf5_support.hpp"

namespace cpm {

namespace {

ParameterSet::Value read_parameter(const H5::Attribute& a) {
  const bool scalar = a.getSpace().getSimpleExtentType() == H5S_SCALAR;
  switch (a.getTypeClass()) {
    case H5T_INTEGER:
      if (!scalar) break;
      if (a.getIntType().getSign() == H5T_SGN_NONE) {
        std::uint64_t u = 0;
        a.read(H5::PredType::NATIVE_UINT64, &u);
        return u;
      } else {
        std::int64_t i = 0;
        a.read(H5::PredType::NATIVE_INT64, &i);
        return i;
      }
    case H5T_FLOAT: {
      std::vector<double> v(static_cast<std::size_t>(a.getSpace().getSimpleExtentNpoints()));
      if (!v.empty()) a.read(H5::PredType::NATIVE_DOUBLE, v.data());
      if (scalar) return v.at(0);
      return v;
    }
    case H5T_STRING: {
      if (!scalar) break;
      std::string s;
      a.read(a.getStrType(), s);
      return s;
    }
    default:
      break;
  }
  throw std::runtime_error("attribute " + a.getName() + " has a type parameters do not use");
}

void read_below(const H5::Group& group, const std::string& prefix, ParameterSet& out) {
  for (unsigned i = 0; i < static_cast<unsigned>(group.getNumAttrs()); ++i) {
    const H5::Attribute a = group.openAttribute(i);
    try {
      out.set(prefix + a.getName(), read_parameter(a));
    } catch (const std::invalid_argument& e) {  // a name cpm never writes
      throw std::runtime_error(e.what());
    }
  }
  for (hsize_t i = 0; i < group.getNumObjs(); ++i) {
    const std::string name = group.getObjnameByIdx(i);
    if (group.childObjType(name) == H5O_TYPE_GROUP)
      read_below(group.openGroup(name), prefix + name + ".", out);
  }
}

}  // namespace

void write_parameters(const H5::Group& parent, const ParameterSet& parameters) {
  write_parameters_into(parent.createGroup("parameters"), parameters);
}

void write_parameters_into(const H5::Group& group, const ParameterSet& parameters) {
  for (const auto& [key, value] : parameters.entries()) {
    const std::size_t dot = key.rfind('.');
    std::string prefix = dot == std::string::npos ? "" : key.substr(0, dot);
    for (char& c : prefix)
      if (c == '.') c = '/';
    const H5::Group owner = prefix.empty() ? group : hdf5::require_group(group, prefix);
    const std::string name = key.substr(dot + 1);
    std::visit([&](const auto& v) { hdf5::write_attribute(owner, name, v); }, value);
  }
}

ParameterSet read_parameters(const H5::Group& group) {
  ParameterSet p;
  read_below(group, "", p);
  return p;
}

}  // namespace cpm
