#pragma once
// A structure-aware input for the HDF5 readers: the fuzzer mutates a small text recipe, which is
// turned into a valid HDF5 file, so that the attribute and dataset layer cpm reads is explored
// (missing, mistyped, mis-shaped, oversized and non-finite entries) rather than the HDF5 library's
// own parser. One entry per line ('#' starts a comment; a line that does not parse is skipped):
//
//   group PATH
//   attribute PATH NAME TYPE SHAPE VALUES          (PATH is created as a group if absent)
//   dataset PATH TYPE SHAPE LAYOUT VALUES
//
// TYPE is i8, i32, i64, u8, u64, f32, f64, string (fixed length) or vstring (variable length);
// SHAPE is `scalar` or dimensions such as `16x2`; LAYOUT is `contiguous` or `chunked` (Fletcher-32
// checksummed, first axis unlimited, as cpm writes its frames). VALUES are numbers, repeated to
// fill the shape (`nan`, `inf` allowed), `random SEED` (uniform in [-1, 1] for floats, [0, 100)
// for integers), or `none` (nothing written: a dataset that only claims its size); strings are
// separated by '|', written \|, \\ and \n inside a string. fuzz/hdf5_to_recipe.py writes the
// recipe of a real file (the seed corpus).
#include <string>
#include <string_view>

namespace cpm::fuzz {

// Writes the HDF5 file `path` that `recipe` describes (truncating it).
void write_hdf5_recipe(std::string_view recipe, const std::string& path);

}  // namespace cpm::fuzz
