#pragma once
// Reader for the IDX format of (Fashion-)MNIST (LeCun et al.): a big-endian header — two zero
// bytes, a type byte (0x08: unsigned byte), the number of dimensions — then one 32-bit size per
// dimension and the data. gzip-compressed files (.gz) are read through zlib, plain files as they
// are. Bad input (missing file, wrong magic, unsupported type, truncated data) throws InputError
// naming the file.
#include <Eigen/Dense>
#include <cstdint>
#include <string>
#include <vector>

namespace cpm {

struct IdxArray {
  std::vector<std::int64_t> shape;
  std::vector<std::uint8_t> data;  // row-major, as stored
};

IdxArray read_idx(const std::string& path);
// Writes an unsigned-byte IDX file, gzip-compressed when the name ends in .gz (for tests and
// for users preparing their own data).
void write_idx(const std::string& path, const IdxArray& array);

// An image array (n, h, w, ...) as an (n, h·w·...) matrix of values in [0, 1] (bytes / 255).
Eigen::MatrixXd idx_rows(const IdxArray& images, const std::string& path);
// A one-dimensional label array as integers.
Eigen::VectorXi idx_labels(const IdxArray& labels, const std::string& path);

}  // namespace cpm
