#include "parallel/launch_environment.hpp"

#include <cstdlib>

namespace cpm {

int launched_ranks() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"})
    if (const char* value = std::getenv(name)) {
      const int ranks = std::atoi(value);
      if (ranks >= 1) return ranks;
    }
  return 1;
}

}  // namespace cpm
