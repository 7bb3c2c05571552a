#include "io/idx_reader.hpp"

#include <zlib.h>

#include <algorithm>
#include <memory>

#include "io/input_error.hpp"

namespace cpm {

namespace {

struct GzCloser {
  void operator()(gzFile_s* f) const { gzclose(f); }
};
using GzFile = std::unique_ptr<gzFile_s, GzCloser>;

void read_exactly(gzFile f, void* buffer, std::size_t bytes, const std::string& path,
                  const char* what) {
  auto* out = static_cast<unsigned char*>(buffer);
  while (bytes > 0) {
    const unsigned chunk = static_cast<unsigned>(std::min<std::size_t>(bytes, 1u << 30));
    const int got = gzread(f, out, chunk);
    if (got <= 0) throw InputError(path + ": truncated IDX file (" + what + ")");
    out += got;
    bytes -= static_cast<std::size_t>(got);
  }
}

}  // namespace

IdxArray read_idx(const std::string& path) {
  GzFile f(gzopen(path.c_str(), "rb"));  // zlib reads uncompressed files transparently
  if (!f) throw InputError(path + ": cannot open the file");
  unsigned char magic[4];
  read_exactly(f.get(), magic, 4, path, "header");
  if (magic[0] != 0 || magic[1] != 0 || magic[3] == 0 || magic[3] > 8)
    throw InputError(path + ": not an IDX file (bad magic number)");
  if (magic[2] != 0x08)
    throw InputError(path + ": unsupported IDX element type (only unsigned bytes, 0x08)");
  IdxArray a;
  std::int64_t count = 1;
  for (int i = 0; i < magic[3]; ++i) {
    unsigned char b[4];
    read_exactly(f.get(), b, 4, path, "dimensions");
    const std::int64_t size = (std::int64_t{b[0]} << 24) | (b[1] << 16) | (b[2] << 8) | b[3];
    a.shape.push_back(size);
    // At most 2^34 bytes; checked before multiplying (eight 32-bit sizes overflow 64 bits).
    if (size > 0 && count > (std::int64_t{1} << 34) / size)
      throw InputError(path + ": IDX array too large");
    count *= size;
  }
  // Read in blocks, so that memory follows the data present, not the size the header claims.
  constexpr std::size_t block = std::size_t{1} << 20;
  for (std::size_t done = 0; done < static_cast<std::size_t>(count);) {
    const std::size_t n = std::min(block, static_cast<std::size_t>(count) - done);
    a.data.resize(done + n);
    read_exactly(f.get(), a.data.data() + done, n, path, "data");
    done += n;
  }
  unsigned char extra;
  if (gzread(f.get(), &extra, 1) > 0)
    throw InputError(path + ": IDX file has data beyond its declared shape");
  return a;
}

void write_idx(const std::string& path, const IdxArray& a) {
  const bool compress = path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0;
  GzFile f(gzopen(path.c_str(), compress ? "wb" : "wbT"));
  if (!f) throw InputError(path + ": cannot write the file");
  std::vector<unsigned char> header = {0, 0, 0x08, static_cast<unsigned char>(a.shape.size())};
  for (std::int64_t s : a.shape)
    for (int shift : {24, 16, 8, 0})
      header.push_back(static_cast<unsigned char>((s >> shift) & 0xff));
  if (gzwrite(f.get(), header.data(), static_cast<unsigned>(header.size())) <= 0 ||
      (!a.data.empty() &&
       gzwrite(f.get(), a.data.data(), static_cast<unsigned>(a.data.size())) <= 0))
    throw InputError(path + ": cannot write the file");
}

Eigen::MatrixXd idx_rows(const IdxArray& images, const std::string& path) {
  if (images.shape.size() < 2)
    throw InputError(path + ": expected an IDX array of images (n, ...)");
  const Eigen::Index n = images.shape[0];
  const Eigen::Index per_row = n > 0 ? static_cast<Eigen::Index>(images.data.size()) / n : 0;
  Eigen::MatrixXd x(n, per_row);
  for (Eigen::Index i = 0; i < n; ++i)
    for (Eigen::Index j = 0; j < per_row; ++j) x(i, j) = images.data[i * per_row + j] / 255.0;
  return x;
}

Eigen::VectorXi idx_labels(const IdxArray& labels, const std::string& path) {
  if (labels.shape.size() != 1)
    throw InputError(path + ": expected a one-dimensional IDX label array");
  Eigen::VectorXi y(labels.shape[0]);
  for (Eigen::Index i = 0; i < y.size(); ++i) y[i] = labels.data[i];
  return y;
}

}  // namespace cpm
