#include "io/model_checkpoint.hpp"

#include <H5Cpp.h>

#include "io/hdf5_parameters.hpp"
#include "io/hdf5_support.hpp"
#include "io/input_error.hpp"

namespace cpm {

namespace {

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

void write_model_group(H5::Group& model, const ModelCheckpoint& c) {
  write_parameters_into(model, c.description);
  hdf5::write_floats(model, "parameters", c.parameters);
  hdf5::write_floats(model, "particles", c.particles);
  const auto bytes = join_words(c.vocabulary);
  hdf5::write_dataset(model, "vocabulary", {bytes.size()}, bytes);
}

ModelCheckpoint read_model_group(const H5::Group& model) {
  ModelCheckpoint c;
  c.description = read_parameters(model);
  c.parameters = hdf5::read_floats(model, "parameters");
  c.particles = hdf5::read_floats(model, "particles");
  std::vector<hsize_t> shape;
  c.vocabulary = split_words(hdf5::read_uint8s(model.openDataSet("vocabulary"), shape));
  return c;
}

void save_model_checkpoint(const std::string& path, const ModelCheckpoint& c) {
  hdf5::record_library_errors();
  try {
    H5::H5File file(path, H5F_ACC_TRUNC);
    H5::Group model = file.createGroup("model");
    write_model_group(model, c);
  } catch (const H5::Exception& e) {
    throw InputError(path + ": cannot write the checkpoint (" + hdf5::last_library_error() + ")");
  }
}

ModelCheckpoint load_model_checkpoint(const std::string& path) {
  hdf5::record_library_errors();
  hdf5::clear_last_library_error();
  try {
    H5::H5File file(path, H5F_ACC_RDONLY);
    return read_model_group(file.openGroup("model"));
  } catch (const H5::Exception& e) {
    const std::string reason = hdf5::last_library_error();
    throw InputError(path + ": not a readable cpm model checkpoint (" +
                     (reason.empty() ? e.getDetailMsg() : reason) + ")");
  } catch (const std::runtime_error& e) {
    throw InputError(path + ": not a readable cpm model checkpoint (" + e.what() + ")");
  }
}

}  // namespace cpm
