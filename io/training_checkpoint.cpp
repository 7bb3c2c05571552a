#include "io/training_checkpoint.hpp"

#include <H5Cpp.h>

#include <filesystem>

#include "io/hdf5_support.hpp"
#include "io/input_error.hpp"

namespace cpm {

void save_training_checkpoint(const std::string& path, const TrainingCheckpoint& c) {
  hdf5::record_library_errors();
  const std::string partial = path + ".partial";  // renamed once complete
  try {
    H5::H5File file(partial, H5F_ACC_TRUNC);
    H5::Group model = file.createGroup("model");
    write_model_group(model, c.model);
    const H5::Group training = file.createGroup("training");
    hdf5::write_attribute(training, "fingerprint", static_cast<std::uint64_t>(c.fingerprint));
    hdf5::write_attribute(training, "epoch", std::int64_t{c.epoch});
    hdf5::write_attribute(training, "position", c.position);
    hdf5::write_attribute(training, "step", c.step);
    hdf5::write_attribute(training, "smoothed_loss", c.smoothed_loss);
    hdf5::write_attribute(training, "seconds", c.seconds);
    hdf5::write_attribute(training, "tokens", c.tokens);
    hdf5::write_attribute(training, "optimiser_steps", c.optimiser_steps);
    hdf5::write_floats(training, "first_moments", c.first_moments);
    hdf5::write_floats(training, "second_moments", c.second_moments);
  } catch (const H5::Exception& e) {
    throw InputError(partial + ": cannot write the training checkpoint (" +
                     hdf5::last_library_error() + ")");
  }
  std::error_code error;
  std::filesystem::rename(partial, path, error);
  if (error) throw InputError(path + ": cannot write the training checkpoint: " + error.message());
}

TrainingCheckpoint load_training_checkpoint(const std::string& path) {
  hdf5::record_library_errors();
  hdf5::clear_last_library_error();
  TrainingCheckpoint c;
  try {
    H5::H5File file(path, H5F_ACC_RDONLY);
    c.model = read_model_group(file.openGroup("model"));
    const H5::Group training = file.openGroup("training");
    c.fingerprint = hdf5::read_uint64_attribute(training, "fingerprint");
    const std::int64_t epoch = hdf5::read_int64_attribute(training, "epoch");
    c.position = hdf5::read_int64_attribute(training, "position");
    c.step = hdf5::read_int64_attribute(training, "step");
    c.smoothed_loss = hdf5::read_double_attribute(training, "smoothed_loss");
    c.seconds = hdf5::read_double_attribute(training, "seconds");
    c.tokens = hdf5::read_double_attribute(training, "tokens");
    c.optimiser_steps = hdf5::read_int64_attribute(training, "optimiser_steps");
    c.first_moments = hdf5::read_floats(training, "first_moments");
    c.second_moments = hdf5::read_floats(training, "second_moments");
    if (epoch < 0 || epoch > 1'000'000'000 || c.position < 0 || c.step < 0 || c.optimiser_steps < 0)
      throw std::runtime_error("negative or absurd training position");
    c.epoch = static_cast<int>(epoch);
  } catch (const H5::Exception& e) {
    const std::string reason = hdf5::last_library_error();
    throw InputError(path + ": not a readable cpm training checkpoint (" +
                     (reason.empty() ? e.getDetailMsg() : reason) + ")");
  } catch (const std::runtime_error& e) {
    throw InputError(path + ": not a readable cpm training checkpoint (" + e.what() + ")");
  }
  return c;
}

}  // namespace cpm
