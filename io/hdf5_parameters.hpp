#pragma once
// A ParameterSet in HDF5: under `parameters`, one group per dotted-key prefix and one attribute
// per key ("interaction.s" → parameters/interaction, attribute s). Run files (run.h5) and study
// tables (convergence.h5, ldp.h5) store their parameters this way.
#include <H5Cpp.h>

#include "io/parameter_set.hpp"

namespace cpm {

// Creates the group `parameters` below `parent` and writes every entry.
void write_parameters(const H5::Group& parent, const ParameterSet& parameters);
// Writes every entry into `group` itself (keys without a dot become its own attributes).
void write_parameters_into(const H5::Group& group, const ParameterSet& parameters);

// Reads back what write_parameters wrote into `group` (the `parameters` group itself), or what
// write_parameters_into wrote; datasets in the group are skipped. Throws std::runtime_error for an
// attribute of a type parameters do not use.
ParameterSet read_parameters(const H5::Group& group);

}  // namespace cpm
