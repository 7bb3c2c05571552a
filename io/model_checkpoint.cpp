#include "io/model_checkpoint.hpp"

#include <H5Cpp.h>

#include "io/input_error.hpp"
#include "io/hdf5_support.hpp"

namespace cpm {

namespace {

void write_floats(H5::Group& group, const std::string& name, const std::vector<float>& values) {
  const hsize_t size = values.size();
  H5::DataSpace space(1, &size);
  H5::DataSet set = group.createDataSet(name, H5::PredType::NATIVE_FLOAT, space);
  if (size) set.write(values.data(), H5::PredType::NATIVE_FLOAT);
}

std::vector<float> read_floats(const H5::Group& group, const std::string& name) {
  H5::DataSet set = group.openDataSet(name);
  hsize_t size = 0;
  set.getSpace().getSimpleExtentDims(&size);
  std::vector<float> values(size);
  if (size) set.read(values.data(), H5::PredType::NATIVE_FLOAT);
  return values;
}

// The vocabulary as one byte string, words separated by '\n' (words never contain white space).
std::vector<std::uint8_t> join_words(const std::vector<std::string>& words) {
  std::vector<std::uint8_t> bytes;
  for (const auto& w : words) {
    bytes.insert(bytes.end(), w.begin(), w.end());
    bytes.push_back('\n');
  }
  return bytes;
}

std::vector<std::string> split_words(const std::vector<std::uint8_t>& bytes) {
  std::vector<std::string> words;
  std::string current;
  for (const auto b : bytes) {
    if (b == '\n') {
      words.push_back(current);
      current.clear();
    } else {
      current.push_back(static_cast<char>(b));
    }
  }
  return words;
}

struct ShapeField {
  const char* name;
  int ModelShape::*member;
};
const ShapeField kShapeFields[] = {
    {"vocabulary", &ModelShape::vocabulary}, {"max_length", &ModelShape::max_length},
    {"d_model", &ModelShape::d_model},       {"heads", &ModelShape::heads},
    {"layers", &ModelShape::layers},         {"d_ff", &ModelShape::d_ff},
    {"classes", &ModelShape::classes},       {"features", &ModelShape::features}};

}  // namespace

void save_model_checkpoint(const std::string& path, const ModelCheckpoint& c) {
  hdf5::record_library_errors();
  try {
    H5::H5File file(path, H5F_ACC_TRUNC);
    H5::Group model = file.createGroup("model");
    for (const auto& f : kShapeFields)
      hdf5::write_attribute(model, f.name, std::int64_t{c.shape.*f.member});
    hdf5::write_attribute(
        model, "attention",
        std::string(c.shape.attention == AttentionKind::softmax ? "softmax" : "linear"));
    hdf5::write_attribute(model, "feature_map", feature_map_name(c.shape.feature_map.kind));
    hdf5::write_attribute(model, "feature_epsilon", c.shape.feature_map.epsilon);
    hdf5::write_attribute(model, "qk_tied", std::int64_t{c.shape.qk_tied});
    hdf5::write_attribute(model, "dropout", c.shape.dropout);
    hdf5::write_attribute(model, "variant", c.variant);
    hdf5::write_attribute(model, "dataset", c.dataset);
    write_floats(model, "parameters", c.parameters);
    write_floats(model, "particles", c.particles);
    const auto bytes = join_words(c.vocabulary);
    hdf5::write_dataset(model, "vocabulary", {bytes.size()}, bytes);
  } catch (const H5::Exception& e) {
    throw InputError(path + ": cannot write the checkpoint (" + hdf5::last_library_error() + ")");
  }
}

ModelCheckpoint load_model_checkpoint(const std::string& path) {
  hdf5::record_library_errors();
  hdf5::clear_last_library_error();
  ModelCheckpoint c;
  try {
    H5::H5File file(path, H5F_ACC_RDONLY);
    H5::Group model = file.openGroup("model");
    for (const auto& f : kShapeFields)
      c.shape.*f.member = static_cast<int>(hdf5::read_int64_attribute(model, f.name));
    c.shape.attention = hdf5::read_string_attribute(model, "attention") == "softmax"
                            ? AttentionKind::softmax
                            : AttentionKind::linear;
    c.shape.feature_map.kind = feature_map_kind(hdf5::read_string_attribute(model, "feature_map"));
    c.shape.feature_map.epsilon = hdf5::read_double_attribute(model, "feature_epsilon");
    c.shape.qk_tied = hdf5::read_int64_attribute(model, "qk_tied") != 0;
    c.shape.dropout = hdf5::read_double_attribute(model, "dropout");
    c.variant = hdf5::read_string_attribute(model, "variant");
    c.dataset = hdf5::read_string_attribute(model, "dataset");
    c.parameters = read_floats(model, "parameters");
    c.particles = read_floats(model, "particles");
    std::vector<hsize_t> shape;
    c.vocabulary = split_words(hdf5::read_uint8s(model.openDataSet("vocabulary"), shape));
  } catch (const H5::Exception& e) {
    const std::string reason = hdf5::last_library_error();
    throw InputError(path + ": not a readable cpm model checkpoint (" +
                      (reason.empty() ? e.getDetailMsg() : reason) + ")");
  } catch (const std::invalid_argument& e) {
    throw InputError(path + ": " + e.what());
  }
  return c;
}

void require_same_shape(const ModelShape& expected, const ModelShape& found,
                        const std::string& path) {
  std::string differences;
  for (const auto& f : kShapeFields)
    if (expected.*f.member != found.*f.member)
      differences += std::string(differences.empty() ? "" : ", ") + f.name + " " +
                     std::to_string(found.*f.member) + " (model " +
                     std::to_string(expected.*f.member) + ")";
  if (expected.attention != found.attention)
    differences += std::string(differences.empty() ? "" : ", ") + "attention kind";
  if (expected.qk_tied != found.qk_tied)
    differences += std::string(differences.empty() ? "" : ", ") + "qk_tied";
  if (!differences.empty())
    throw InputError(path + ": checkpoint is for another model size: " + differences);
}

}  // namespace cpm
