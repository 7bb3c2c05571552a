// The IDX reader of (Fashion-)MNIST, plain and gzip-compressed (the first byte chooses), with
// the conversions to images and labels.
#include "fuzz/fuzz_input.hpp"
#include "io/idx_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::string path = cpm::fuzz::write_scratch_file(
      cpm::fuzz::as_text(data + 1, size - 1), data[0] & 1 ? "-idx3-ubyte.gz" : "-idx3-ubyte");
  cpm::fuzz::expect_input_error_only([&] {
    const cpm::IdxArray array = cpm::read_idx(path);
    if (array.shape.size() == 1)
      cpm::idx_labels(array, path);
    else
      cpm::idx_rows(array, path);
  });
  return 0;
}
