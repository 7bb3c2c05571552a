// The TOML configuration of every command: run, converge, ldp, kernel, features, train and the
// recall tasks.
#include "config/features_config.hpp"
#include "config/kernel_config.hpp"
#include "config/recall_config.hpp"
#include "config/run_config.hpp"
#include "config/study_config.hpp"
#include "config/train_config.hpp"
#include "fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using cpm::fuzz::expect_input_error_only;
  const std::string text(cpm::fuzz::as_text(data, size));
  const std::string source = "fuzz.toml";
  expect_input_error_only([&] {
    const cpm::RunConfig config = cpm::parse_run_config(text, source);
    cpm::estimated_run_memory(config);
  });
  expect_input_error_only([&] { cpm::parse_convergence_config(text, source); });
  expect_input_error_only([&] { cpm::parse_ldp_config(text, source); });
  expect_input_error_only([&] { cpm::parse_kernel_config(text, source); });
  expect_input_error_only([&] { cpm::parse_features_config(text, source); });
  expect_input_error_only([&] { cpm::parse_kernel_concentration_config(text, source); });
  expect_input_error_only([&] {
    if (cpm::is_recall_config(text, source))
      cpm::parse_recall_config(text, source);
    else
      cpm::parse_train_config(text, source);
  });
  return 0;
}
