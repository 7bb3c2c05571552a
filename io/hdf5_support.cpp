#include "io/hdf5_support.hpp"

#include <algorithm>
#include <functional>
#include <numeric>
#include <stdexcept>

namespace cpm::hdf5 {

namespace {

hsize_t product(const std::vector<hsize_t>& shape) {
  return std::accumulate(shape.begin(), shape.end(), hsize_t{1}, std::multiplies<>());
}

// Chunks of at most ~1 MiB: small frames are grouped (up to 1024 per chunk, ~16 KiB), large
// frames are split along their leading axes.
std::vector<hsize_t> chunk_shape(const std::vector<hsize_t>& frame_shape,
                                 std::size_t element_bytes) {
  constexpr hsize_t small_chunk_bytes = 16 * 1024, max_chunk_bytes = 1024 * 1024;
  std::vector<hsize_t> chunk = frame_shape;
  for (hsize_t& c : chunk) c = std::max<hsize_t>(c, 1);
  const hsize_t frame_bytes = product(chunk) * element_bytes;
  hsize_t frames = std::clamp<hsize_t>(small_chunk_bytes / frame_bytes, 1, 1024);
  for (std::size_t a = 0; product(chunk) * element_bytes > max_chunk_bytes;
       a = (a + 1) % chunk.size())
    chunk[a] = std::max<hsize_t>(1, (chunk[a] + 1) / 2);
  chunk.insert(chunk.begin(), frames);
  return chunk;
}

H5::DSetCreatPropList checksummed_chunks(const std::vector<hsize_t>& chunk) {
  H5::DSetCreatPropList properties;
  properties.setChunk(static_cast<int>(chunk.size()), chunk.data());
  properties.setFletcher32();
  return properties;
}

H5::Attribute open_or_create(const H5::H5Object& object, const std::string& name,
                             const H5::DataType& type, const H5::DataSpace& space) {
  if (object.attrExists(name)) {
    H5::Attribute existing = object.openAttribute(name);
    if (existing.getDataType() == type &&
        existing.getSpace().getSimpleExtentNpoints() == space.getSimpleExtentNpoints())
      return existing;
    existing.close();
    object.removeAttr(name);
  }
  return object.createAttribute(name, type, space);
}

H5::DataSpace vector_space(std::size_t n) {
  const hsize_t dims[1] = {n};
  return H5::DataSpace(1, dims);
}

void require_class(const H5::AbstractDs& data, H5T_class_t expected, const std::string& what) {
  if (data.getTypeClass() != expected)
    throw std::runtime_error(what + " has an unexpected data type");
}

std::vector<hsize_t> dims_of(const H5::DataSpace& space) {
  std::vector<hsize_t> dims(static_cast<std::size_t>(space.getSimpleExtentNdims()));
  if (!dims.empty()) space.getSimpleExtentDims(dims.data());
  return dims;
}

thread_local std::string last_error;

herr_t record_deepest_error(hid_t stack, void*) {
  H5Ewalk2(
      stack, H5E_WALK_DOWNWARD,
      [](unsigned, const H5E_error2_t* error, void*) -> herr_t {
        if (error->desc && *error->desc) last_error = error->desc;
        return 0;
      },
      nullptr);
  return 0;
}

}  // namespace

void record_library_errors() {
  H5Eset_auto2(H5E_DEFAULT, record_deepest_error, nullptr);
}

std::string last_library_error() {
  return last_error;
}

std::string last_library_error_line() {
  const std::string marker = "error message = '";
  if (const std::size_t at = last_error.find(marker); at != std::string::npos) {
    const std::size_t begin = at + marker.size();
    return last_error.substr(begin, last_error.find('\'', begin) - begin);
  }
  std::string line = last_error;
  std::replace(line.begin(), line.end(), '\n', ' ');
  return line;
}

void clear_last_library_error() {
  last_error.clear();
}

H5::Group require_group(const H5::Group& parent, const std::string& name) {
  const std::size_t slash = name.find('/');
  const std::string head = name.substr(0, slash);
  const H5::Group child =
      parent.nameExists(head) ? parent.openGroup(head) : parent.createGroup(head);
  return slash == std::string::npos ? child : require_group(child, name.substr(slash + 1));
}

void write_attribute(const H5::H5Object& object, const std::string& name, std::int64_t value) {
  open_or_create(object, name, H5::PredType::NATIVE_INT64, H5::DataSpace())
      .write(H5::PredType::NATIVE_INT64, &value);
}

void write_attribute(const H5::H5Object& object, const std::string& name, std::uint64_t value) {
  open_or_create(object, name, H5::PredType::NATIVE_UINT64, H5::DataSpace())
      .write(H5::PredType::NATIVE_UINT64, &value);
}

void write_attribute(const H5::H5Object& object, const std::string& name, double value) {
  open_or_create(object, name, H5::PredType::NATIVE_DOUBLE, H5::DataSpace())
      .write(H5::PredType::NATIVE_DOUBLE, &value);
}

void write_attribute(const H5::H5Object& object, const std::string& name,
                     const std::vector<double>& values) {
  open_or_create(object, name, H5::PredType::NATIVE_DOUBLE, vector_space(values.size()))
      .write(H5::PredType::NATIVE_DOUBLE, values.data());
}

void write_attribute(const H5::H5Object& object, const std::string& name,
                     const std::vector<std::int64_t>& values) {
  open_or_create(object, name, H5::PredType::NATIVE_INT64, vector_space(values.size()))
      .write(H5::PredType::NATIVE_INT64, values.data());
}

void write_attribute(const H5::H5Object& object, const std::string& name, const std::string& value,
                     bool variable_length) {
  if (variable_length) {
    const H5::StrType type(H5::PredType::C_S1, H5T_VARIABLE);
    open_or_create(object, name, type, H5::DataSpace()).write(type, value);
    return;
  }
  const H5::StrType type(H5::PredType::C_S1, std::max<std::size_t>(value.size(), 1));
  open_or_create(object, name, type, H5::DataSpace()).write(type, value);
}

void write_attribute(const H5::H5Object& object, const std::string& name,
                     const std::vector<std::string>& values) {
  std::size_t width = 1;
  for (const std::string& v : values) width = std::max(width, v.size());
  std::vector<char> packed(width * values.size(), '\0');
  for (std::size_t i = 0; i < values.size(); ++i)
    std::copy(values[i].begin(), values[i].end(), packed.begin() + static_cast<long>(i * width));
  H5::StrType type(H5::PredType::C_S1, width);
  type.setStrpad(H5T_STR_NULLPAD);
  open_or_create(object, name, type, vector_space(values.size())).write(type, packed.data());
}

std::int64_t read_int64_attribute(const H5::H5Object& object, const std::string& name) {
  const H5::Attribute a = object.openAttribute(name);
  require_class(a, H5T_INTEGER, "attribute " + name);
  if (a.getSpace().getSimpleExtentNpoints() != 1)
    throw std::runtime_error("attribute " + name + " is not a scalar");
  std::int64_t value = 0;
  a.read(H5::PredType::NATIVE_INT64, &value);
  return value;
}

std::uint64_t read_uint64_attribute(const H5::H5Object& object, const std::string& name) {
  const H5::Attribute a = object.openAttribute(name);
  require_class(a, H5T_INTEGER, "attribute " + name);
  if (a.getSpace().getSimpleExtentNpoints() != 1)
    throw std::runtime_error("attribute " + name + " is not a scalar");
  std::uint64_t value = 0;
  a.read(H5::PredType::NATIVE_UINT64, &value);
  return value;
}

double read_double_attribute(const H5::H5Object& object, const std::string& name) {
  const H5::Attribute a = object.openAttribute(name);
  require_class(a, H5T_FLOAT, "attribute " + name);
  if (a.getSpace().getSimpleExtentNpoints() != 1)
    throw std::runtime_error("attribute " + name + " is not a scalar");
  double value = 0.0;
  a.read(H5::PredType::NATIVE_DOUBLE, &value);
  return value;
}

std::vector<double> read_doubles_attribute(const H5::H5Object& object, const std::string& name) {
  const H5::Attribute a = object.openAttribute(name);
  require_class(a, H5T_FLOAT, "attribute " + name);
  std::vector<double> values(static_cast<std::size_t>(a.getSpace().getSimpleExtentNpoints()));
  if (!values.empty()) a.read(H5::PredType::NATIVE_DOUBLE, values.data());
  return values;
}

std::vector<std::int64_t> read_int64s_attribute(const H5::H5Object& object,
                                                const std::string& name) {
  const H5::Attribute a = object.openAttribute(name);
  require_class(a, H5T_INTEGER, "attribute " + name);
  std::vector<std::int64_t> values(static_cast<std::size_t>(a.getSpace().getSimpleExtentNpoints()));
  if (!values.empty()) a.read(H5::PredType::NATIVE_INT64, values.data());
  return values;
}

std::string read_string_attribute(const H5::H5Object& object, const std::string& name) {
  const H5::Attribute a = object.openAttribute(name);
  require_class(a, H5T_STRING, "attribute " + name);
  // The C++ API reads every element into the one string's buffer (found by fuzzing).
  if (a.getSpace().getSimpleExtentNpoints() != 1)
    throw std::runtime_error("attribute " + name + " is not a scalar");
  std::string value;
  a.read(a.getStrType(), value);
  return value;
}

std::vector<std::string> read_strings_attribute(const H5::H5Object& object,
                                                const std::string& name) {
  const H5::Attribute a = object.openAttribute(name);
  require_class(a, H5T_STRING, "attribute " + name);
  const H5::StrType type = a.getStrType();
  if (type.isVariableStr())
    throw std::runtime_error("attribute " + name + " is not a fixed-length string array");
  const std::size_t width = type.getSize();
  const auto n = static_cast<std::size_t>(a.getSpace().getSimpleExtentNpoints());
  std::vector<char> packed(width * n);
  a.read(type, packed.data());
  std::vector<std::string> values;
  for (std::size_t i = 0; i < n; ++i) {
    const char* begin = packed.data() + i * width;
    values.emplace_back(begin, std::find(begin, begin + width, '\0'));
  }
  return values;
}

namespace {

// Bytes of the chunks that cover one frame when a frame starts a new row of chunks.
hsize_t chunk_row_bytes(const std::vector<hsize_t>& frame_shape, const std::vector<hsize_t>& chunk,
                        std::size_t element_bytes) {
  hsize_t chunks = 1;
  for (std::size_t a = 0; a < frame_shape.size(); ++a)
    chunks *= (std::max<hsize_t>(frame_shape[a], 1) + chunk[a + 1] - 1) / chunk[a + 1];
  return chunks * product(chunk) * element_bytes;
}

}  // namespace

hsize_t FrameDataset::bytes_to_append() const {
  return frames_ % chunk_[0] == 0 ? chunk_row_bytes(frame_shape_, chunk_, element_bytes_) : 0;
}

hsize_t FrameDataset::bytes_of_first_frame(const std::vector<hsize_t>& frame_shape,
                                           std::size_t element_bytes) {
  return chunk_row_bytes(frame_shape, chunk_shape(frame_shape, element_bytes), element_bytes);
}

FrameDataset::FrameDataset(const H5::Group& parent, const std::string& name,
                           const H5::PredType& type, std::vector<hsize_t> frame_shape)
    : frame_shape_(std::move(frame_shape)),
      chunk_(chunk_shape(frame_shape_, type.getSize())),
      element_bytes_(type.getSize()) {
  std::vector<hsize_t> dims = frame_shape_, max_dims = frame_shape_;
  dims.insert(dims.begin(), 0);
  max_dims.insert(max_dims.begin(), H5S_UNLIMITED);
  const H5::DataSpace space(static_cast<int>(dims.size()), dims.data(), max_dims.data());
  dataset_ = parent.createDataSet(name, type, space, checksummed_chunks(chunk_));
}

void FrameDataset::append(const double* frame) {
  append_raw(frame, H5::PredType::NATIVE_DOUBLE);
}
void FrameDataset::append(const std::int64_t* frame) {
  append_raw(frame, H5::PredType::NATIVE_INT64);
}
void FrameDataset::append(const std::uint8_t* frame) {
  append_raw(frame, H5::PredType::NATIVE_UINT8);
}

void FrameDataset::append_raw(const void* frame, const H5::PredType& memory_type) {
  std::vector<hsize_t> dims = frame_shape_, start(frame_shape_.size() + 1, 0), count = frame_shape_;
  dims.insert(dims.begin(), frames_ + 1);
  count.insert(count.begin(), 1);
  start[0] = frames_;
  dataset_.extend(dims.data());
  H5::DataSpace file_space = dataset_.getSpace();
  file_space.selectHyperslab(H5S_SELECT_SET, count.data(), start.data());
  const H5::DataSpace memory_space(static_cast<int>(count.size()), count.data());
  dataset_.write(frame, memory_type, memory_space, file_space);
  ++frames_;
}

void write_dataset(const H5::Group& parent, const std::string& name,
                   const std::vector<hsize_t>& shape, const std::vector<std::uint8_t>& values) {
  if (product(shape) != values.size())
    throw std::invalid_argument(name + ": values do not match the shape");
  std::vector<hsize_t> chunk = chunk_shape(shape, 1);
  chunk.erase(chunk.begin());
  const H5::DataSpace space(static_cast<int>(shape.size()), shape.data());
  H5::DataSet set =
      parent.createDataSet(name, H5::PredType::NATIVE_UINT8, space, checksummed_chunks(chunk));
  set.write(values.data(), H5::PredType::NATIVE_UINT8);
}

namespace {

// cpm writes every value of its datasets, uncompressed: a dataset whose declared size exceeds the
// bytes stored for it is damaged (and reading it would allocate the declared size first).
void require_stored(const H5::DataSet& dataset, const std::vector<hsize_t>& shape,
                    const std::string& what) {
  const hsize_t declared = product(shape) * dataset.getDataType().getSize();
  if (dataset.getStorageSize() < declared)
    throw std::runtime_error(what + " declares " + std::to_string(declared) + " bytes but holds " +
                             std::to_string(dataset.getStorageSize()));
}

template <class T>
std::vector<T> read_all(const H5::DataSet& dataset, std::vector<hsize_t>& shape,
                        const H5::PredType& memory_type, H5T_class_t expected,
                        const std::string& what) {
  require_class(dataset, expected, what);
  shape = dims_of(dataset.getSpace());
  require_stored(dataset, shape, what);
  std::vector<T> values(product(shape));
  if (!values.empty()) dataset.read(values.data(), memory_type);
  return values;
}

}  // namespace

void write_floats(const H5::Group& parent, const std::string& name,
                  const std::vector<float>& values) {
  const H5::DataSet set =
      parent.createDataSet(name, H5::PredType::NATIVE_FLOAT, vector_space(values.size()));
  if (!values.empty()) set.write(values.data(), H5::PredType::NATIVE_FLOAT);
}

std::vector<float> read_floats(const H5::Group& parent, const std::string& name) {
  std::vector<hsize_t> shape;
  return read_all<float>(parent.openDataSet(name), shape, H5::PredType::NATIVE_FLOAT, H5T_FLOAT,
                         name);
}

std::vector<double> read_doubles(const H5::DataSet& dataset, std::vector<hsize_t>& shape) {
  return read_all<double>(dataset, shape, H5::PredType::NATIVE_DOUBLE, H5T_FLOAT,
                          dataset.getObjName());
}

std::vector<std::int64_t> read_int64s(const H5::DataSet& dataset, std::vector<hsize_t>& shape) {
  return read_all<std::int64_t>(dataset, shape, H5::PredType::NATIVE_INT64, H5T_INTEGER,
                                dataset.getObjName());
}

std::vector<std::uint8_t> read_uint8s(const H5::DataSet& dataset, std::vector<hsize_t>& shape) {
  return read_all<std::uint8_t>(dataset, shape, H5::PredType::NATIVE_UINT8, H5T_INTEGER,
                                dataset.getObjName());
}

std::vector<double> read_double_frame(const H5::DataSet& dataset, hsize_t frame) {
  require_class(dataset, H5T_FLOAT, dataset.getObjName());
  H5::DataSpace file_space = dataset.getSpace();
  std::vector<hsize_t> dims = dims_of(file_space);
  if (dims.empty() || frame >= dims[0])
    throw std::runtime_error(dataset.getObjName() + " has no frame " + std::to_string(frame));
  require_stored(dataset, dims, dataset.getObjName());
  std::vector<hsize_t> start(dims.size(), 0), count = dims;
  start[0] = frame;
  count[0] = 1;
  file_space.selectHyperslab(H5S_SELECT_SET, count.data(), start.data());
  const H5::DataSpace memory_space(static_cast<int>(count.size()), count.data());
  std::vector<double> values(product(count));
  dataset.read(values.data(), H5::PredType::NATIVE_DOUBLE, memory_space, file_space);
  return values;
}

}  // namespace cpm::hdf5
