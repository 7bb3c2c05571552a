// The density file of `[grid.initial] kind = "file"`: the first two bytes give the grid's number of
// cells, the rest is the file.
#include "fuzz/fuzz_input.hpp"
#include "io/density_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const Eigen::Index cells = data[0] | data[1] << 8;
  const std::string path =
      cpm::fuzz::write_scratch_file(cpm::fuzz::as_text(data + 2, size - 2), ".txt");
  cpm::fuzz::expect_input_error_only([&] { cpm::read_density_file(path, cells); });
  return 0;
}
