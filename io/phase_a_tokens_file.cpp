#include "io/phase_a_tokens_file.hpp"

#include <algorithm>
#include <cstdint>

#include "io/hdf5_support.hpp"
#include "io/input_error.hpp"

namespace cpm {

namespace {

using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

void write_matrix(const H5::Group& group, const std::string& name, const Eigen::MatrixXd& m) {
  const hsize_t shape[2] = {static_cast<hsize_t>(m.rows()), static_cast<hsize_t>(m.cols())};
  const RowMajor rows = m;
  group.createDataSet(name, H5::PredType::NATIVE_DOUBLE, H5::DataSpace(2, shape))
      .write(rows.data(), H5::PredType::NATIVE_DOUBLE);
}

void write_integers(const H5::Group& group, const std::string& name,
                    const std::vector<std::int64_t>& values) {
  const hsize_t shape[1] = {values.size()};
  group.createDataSet(name, H5::PredType::NATIVE_INT64, H5::DataSpace(1, shape))
      .write(values.data(), H5::PredType::NATIVE_INT64);
}

H5::H5File create(const std::string& path) {
  hdf5::record_library_errors();
  try {
    return H5::H5File(path, H5F_ACC_TRUNC);
  } catch (const H5::Exception&) {
    throw InputError(path + ": cannot write Phase A's tokens (" + hdf5::last_library_error() + ")");
  }
}

}  // namespace

PhaseATokensFile::PhaseATokensFile(const std::string& path,
                                   const std::vector<std::vector<int>>& tokens,
                                   const Eigen::VectorXi& labels)
    : path_(path), file_(create(path)) {
  std::size_t length = 1;
  for (const auto& t : tokens) length = std::max(length, t.size());
  std::vector<std::int64_t> padded(tokens.size() * length, 0), lengths;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    std::copy(tokens[i].begin(), tokens[i].end(), padded.begin() + i * length);
    lengths.push_back(static_cast<std::int64_t>(tokens[i].size()));
  }
  try {
    const hsize_t shape[2] = {tokens.size(), length};
    file_.createDataSet("tokens", H5::PredType::NATIVE_INT64, H5::DataSpace(2, shape))
        .write(padded.data(), H5::PredType::NATIVE_INT64);
    write_integers(file_, "sequence_lengths", lengths);
    write_integers(file_, "labels", std::vector<std::int64_t>(labels.begin(), labels.end()));
  } catch (const H5::Exception&) {
    throw InputError(path + ": cannot write Phase A's tokens (" + hdf5::last_library_error() + ")");
  }
}

void PhaseATokensFile::add_head(int layer, int head, const Eigen::MatrixXd& keys,
                                const Eigen::MatrixXd& queries, const Eigen::MatrixXd& initial,
                                const Eigen::MatrixXd& final) {
  try {
    const H5::Group g = hdf5::require_group(
        file_, "layer_" + std::to_string(layer) + "/head_" + std::to_string(head));
    write_matrix(g, "keys", keys);
    write_matrix(g, "queries", queries);
    write_matrix(g, "initial_particles", initial);
    write_matrix(g, "final_particles", final);
    file_.flush(H5F_SCOPE_LOCAL);
  } catch (const H5::Exception&) {
    throw InputError(path_ + ": cannot write Phase A's tokens (" + hdf5::last_library_error() +
                     ")");
  }
}

}  // namespace cpm
