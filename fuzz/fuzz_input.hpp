#pragma once
// What every fuzz target shares: the input written to a scratch file (cpm's readers take paths),
// and the contract being checked — a reader either returns or throws InputError (the one line and
// exit code 2 of `cpm`); any other exception escapes and libFuzzer reports it as a crash.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "io/input_error.hpp"

namespace cpm::fuzz {

// Writes `bytes` to a file of this process under $TMPDIR (default /tmp) whose name ends in
// `suffix`, and returns its path; the same path is reused by every input.
std::string write_scratch_file(std::string_view bytes, const std::string& suffix);

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

template <class Read>
void expect_input_error_only(Read&& read) {
  try {
    read();
  } catch (const InputError&) {
  }
}

}  // namespace cpm::fuzz
