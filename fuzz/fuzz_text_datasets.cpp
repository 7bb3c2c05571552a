// The text data sets: SST-2 and QQP (GLUE TSV) and Rotten Tomatoes (.pos/.neg snippet files; the
// input's first NUL byte separates the two files).
#include "fuzz/fuzz_input.hpp"
#include "io/text_datasets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using cpm::fuzz::expect_input_error_only;
  using cpm::fuzz::write_scratch_file;
  const std::string_view bytes = cpm::fuzz::as_text(data, size);
  const std::string tsv = write_scratch_file(bytes, ".tsv");
  expect_input_error_only([&] { cpm::read_sst2_tsv(tsv); });
  expect_input_error_only([&] { cpm::read_qqp_tsv(tsv); });
  const std::size_t nul = std::min(bytes.find('\0'), bytes.size());
  const std::string positive = write_scratch_file(bytes.substr(0, nul), ".pos");
  const std::string negative =
      write_scratch_file(nul < bytes.size() ? bytes.substr(nul + 1) : std::string_view{}, ".neg");
  expect_input_error_only([&] { cpm::read_rotten_tomatoes(positive, negative, 1); });
  return 0;
}
