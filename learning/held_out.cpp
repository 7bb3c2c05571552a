#include "learning/held_out.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/random_stream.hpp"

namespace cpm {

namespace {

LabelledData rows_of(const LabelledData& d, const std::vector<Eigen::Index>& rows) {
  LabelledData out;
  out.classes = d.classes;
  out.x.resize(static_cast<Eigen::Index>(rows.size()), d.x.cols());
  out.y.resize(static_cast<Eigen::Index>(rows.size()));
  for (std::size_t r = 0; r < rows.size(); ++r) {
    out.x.row(static_cast<Eigen::Index>(r)) = d.x.row(rows[r]);
    out.y[static_cast<Eigen::Index>(r)] = d.y[rows[r]];
  }
  return out;
}

}  // namespace

ValidationSplit split_validation(const LabelledData& train, double fraction, std::uint64_t seed) {
  const Eigen::Index n = train.size();
  if (n < 3) throw std::invalid_argument("validation split: needs at least three rows");
  if (!(fraction > 0.0 && fraction < 1.0))
    throw std::invalid_argument("validation split: the fraction must lie in (0, 1)");
  const auto held = std::clamp<Eigen::Index>(
      static_cast<Eigen::Index>(std::llround(fraction * static_cast<double>(n))), 1, n - 2);
  const std::vector<std::size_t> order = random_permutation(
      static_cast<std::size_t>(n), RandomStream(seed, RandomPurpose::validation_split, 0, 0));
  std::vector<char> is_held(static_cast<std::size_t>(n), 0);
  for (Eigen::Index r = 0; r < held; ++r) is_held[order[static_cast<std::size_t>(r)]] = 1;
  ValidationSplit s;
  std::vector<Eigen::Index> fit_rows;
  for (Eigen::Index i = 0; i < n; ++i)
    (is_held[static_cast<std::size_t>(i)] ? s.validation_rows : fit_rows).push_back(i);
  s.fit = rows_of(train, fit_rows);
  s.validation = rows_of(train, s.validation_rows);
  return s;
}

Eigen::VectorXi permute_labels(const Eigen::VectorXi& labels, std::uint64_t seed) {
  const std::vector<std::size_t> order =
      random_permutation(static_cast<std::size_t>(labels.size()),
                         RandomStream(seed, RandomPurpose::label_permutation, 0, 0));
  Eigen::VectorXi out(labels.size());
  for (Eigen::Index i = 0; i < labels.size(); ++i)
    out[i] = labels[static_cast<Eigen::Index>(order[static_cast<std::size_t>(i)])];
  return out;
}

double effective_rank(const Eigen::MatrixXd& f) {
  const Eigen::MatrixXd gram = f.rows() <= f.cols() ? Eigen::MatrixXd(f * f.transpose())
                                                    : Eigen::MatrixXd(f.transpose() * f);
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(gram, Eigen::EigenvaluesOnly);
  const Eigen::ArrayXd s = eig.eigenvalues().array().max(0.0).sqrt();
  const double total = s.sum();
  if (!(total > 0.0)) return 0.0;
  double entropy = 0.0;
  for (Eigen::Index i = 0; i < s.size(); ++i)
    if (s[i] > 0.0) {
      const double p = s[i] / total;
      entropy -= p * std::log(p);
    }
  return std::exp(entropy);
}

}  // namespace cpm
