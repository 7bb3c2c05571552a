#include "io/model_checkpoint.hpp"

#include <H5Cpp.h>

#include "io/hdf5_parameters.hpp"
#include "io/hdf5_support.hpp"
#include "io/input_error.hpp"

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

}  // namespace

void save_model_checkpoint(const std::string& path, const ModelCheckpoint& c) {
  hdf5::record_library_errors();
  try {
    H5::H5File file(path, H5F_ACC_TRUNC);
    H5::Group model = file.createGroup("model");
    write_parameters_into(model, c.description);
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
    c.description = read_parameters(model);
    c.parameters = read_floats(model, "parameters");
    c.particles = read_floats(model, "particles");
    std::vector<hsize_t> shape;
    c.vocabulary = split_words(hdf5::read_uint8s(model.openDataSet("vocabulary"), shape));
  } catch (const H5::Exception& e) {
    const std::string reason = hdf5::last_library_error();
    throw InputError(path + ": not a readable cpm model checkpoint (" +
                     (reason.empty() ? e.getDetailMsg() : reason) + ")");
  } catch (const std::runtime_error& e) {
    throw InputError(path + ": not a readable cpm model checkpoint (" + e.what() + ")");
  }
  return c;
}

}  // namespace cpm
