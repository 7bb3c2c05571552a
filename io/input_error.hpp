#pragma once
// Bad input: the message is one line naming the key or file and the reason. The command line
// prints it and exits with code 2 before anything is written.
#include <stdexcept>
#include <string>

namespace cpm {

class InputError : public std::runtime_error {
 public:
  explicit InputError(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace cpm
