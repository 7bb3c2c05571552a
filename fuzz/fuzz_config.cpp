// The TOML configuration of every command that writes results, read as the command reads it
// (experiments/result_commands.hpp), and the memory estimate of `cpm run`.
#include "config/run_config.hpp"
#include "experiments/result_commands.hpp"
#include "fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using cpm::fuzz::expect_input_error_only;
  const std::string text(cpm::fuzz::as_text(data, size));
  const std::string source = "fuzz.toml";
  expect_input_error_only([&] {
    const cpm::RunConfig config = cpm::parse_run_config(text, source);
    cpm::estimated_run_memory(config);
  });
  for (const std::string& command : cpm::result_command_names())
    expect_input_error_only([&] { cpm::prepare_command(command, text, source); });
  return 0;
}
