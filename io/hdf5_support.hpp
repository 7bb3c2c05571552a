#pragma once
// Small helpers over the HDF5 C++ API shared by the H5MD writer and reader: typed attributes,
// datasets that grow by one frame at a time, and whole-dataset reads.
#include <H5Cpp.h>

#include <cstdint>
#include <string>
#include <vector>

namespace cpm::hdf5 {

// Stops the HDF5 library from printing its error stack; failures surface as exceptions, and the
// innermost reason of the latest failure (e.g. "data error detected by Fletcher32 checksum") is
// kept for last_library_error(). The C++ API's exceptions carry only the outer function's name,
// and the stack itself is cleared by the next library call (a destructor, during unwinding).
void record_library_errors();
std::string last_library_error();
// The same in one line: the system's message for a failed write ("File too large"), or the
// reason with its line breaks made spaces.
std::string last_library_error_line();
void clear_last_library_error();

// Opens `name` below `parent`, creating it (and missing intermediate groups) if absent.
H5::Group require_group(const H5::Group& parent, const std::string& name);

// Attributes, overwritten when they exist. Strings are fixed-length (H5MD's convention) unless
// `variable_length` (the H5MD units module's convention).
void write_attribute(const H5::H5Object& object, const std::string& name, std::int64_t value);
void write_attribute(const H5::H5Object& object, const std::string& name, std::uint64_t value);
void write_attribute(const H5::H5Object& object, const std::string& name, double value);
void write_attribute(const H5::H5Object& object, const std::string& name,
                     const std::vector<double>& values);
void write_attribute(const H5::H5Object& object, const std::string& name,
                     const std::vector<std::int64_t>& values);
void write_attribute(const H5::H5Object& object, const std::string& name, const std::string& value,
                     bool variable_length = false);
void write_attribute(const H5::H5Object& object, const std::string& name,
                     const std::vector<std::string>& values);

std::int64_t read_int64_attribute(const H5::H5Object& object, const std::string& name);
std::uint64_t read_uint64_attribute(const H5::H5Object& object, const std::string& name);
double read_double_attribute(const H5::H5Object& object, const std::string& name);
std::vector<double> read_doubles_attribute(const H5::H5Object& object, const std::string& name);
std::vector<std::int64_t> read_int64s_attribute(const H5::H5Object& object,
                                                const std::string& name);
std::string read_string_attribute(const H5::H5Object& object, const std::string& name);
std::vector<std::string> read_strings_attribute(const H5::H5Object& object,
                                                const std::string& name);

// A chunked dataset whose first dimension is unlimited: `frame_shape` is the shape of one frame
// (empty for scalars); append() writes one frame at the end. Chunks carry a Fletcher-32 checksum,
// so a reader detects damaged data instead of returning it.
class FrameDataset {
 public:
  FrameDataset() = default;
  FrameDataset(const H5::Group& parent, const std::string& name, const H5::PredType& type,
               std::vector<hsize_t> frame_shape);

  void append(const double* frame);
  void append(const std::int64_t* frame);
  void append(const std::uint8_t* frame);
  hsize_t frames() const { return frames_; }
  // The file space the next append() allocates: whole chunks when it starts a new row of them.
  hsize_t bytes_to_append() const;
  // The same for a dataset of `frame_shape` not created yet (its first frame).
  static hsize_t bytes_of_first_frame(const std::vector<hsize_t>& frame_shape,
                                      std::size_t element_bytes);
  const H5::DataSet& dataset() const { return dataset_; }

 private:
  void append_raw(const void* frame, const H5::PredType& memory_type);

  H5::DataSet dataset_;
  std::vector<hsize_t> frame_shape_, chunk_;
  std::size_t element_bytes_ = 0;
  hsize_t frames_ = 0;
};

// A fixed-shape dataset (time-independent H5MD element), chunked and checksummed like FrameDataset.
void write_dataset(const H5::Group& parent, const std::string& name,
                   const std::vector<hsize_t>& shape, const std::vector<std::uint8_t>& values);

// A one-dimensional dataset of floats (contiguous), and its whole content read back.
void write_floats(const H5::Group& parent, const std::string& name,
                  const std::vector<float>& values);
std::vector<float> read_floats(const H5::Group& parent, const std::string& name);

// Whole-dataset reads; `shape` receives the dataset's dimensions.
std::vector<double> read_doubles(const H5::DataSet& dataset, std::vector<hsize_t>& shape);
std::vector<std::int64_t> read_int64s(const H5::DataSet& dataset, std::vector<hsize_t>& shape);
std::vector<std::uint8_t> read_uint8s(const H5::DataSet& dataset, std::vector<hsize_t>& shape);
// One frame (index `frame` of the first dimension) of a rank ≥ 1 dataset of doubles.
std::vector<double> read_double_frame(const H5::DataSet& dataset, hsize_t frame);

}  // namespace cpm::hdf5
