// The run file of `cpm run` (run.h5, H5MD): the recipe (fuzz/hdf5_recipe.hpp) becomes an HDF5
// file, read as a whole, as the checkpoint `--restart` continues from, and for its FFT wisdom.
#include "fuzz/fuzz_input.hpp"
#include "fuzz/hdf5_recipe.hpp"
#include "io/h5md_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using cpm::fuzz::expect_input_error_only;
  const std::string path = cpm::fuzz::write_scratch_file({}, "-run.h5");
  cpm::fuzz::write_hdf5_recipe(cpm::fuzz::as_text(data, size), path);
  expect_input_error_only([&] { cpm::read_h5md(path); });
  expect_input_error_only([&] { cpm::read_checkpoint(path); });
  cpm::read_checkpoint_fft_wisdom(path);
  return 0;
}
