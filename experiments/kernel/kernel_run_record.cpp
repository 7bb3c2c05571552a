#include "experiments/kernel/kernel_run_record.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace cpm {

namespace {

// Layout: the lengths of norms, grid, curve and trace; the method (its index in
// kernel_method_names()); the seed in two 32-bit halves (a double holds 53 bits); the scalars;
// then norms, grid, curve and trace. One list of fields serves both directions: `f` receives a
// reference to each number.
constexpr std::size_t kHeader = 7;  // the four lengths, the method, the seed's halves

template <class Run, class F>
void scalar_fields(Run& r, F&& f) {
  f(r.label_noise);
  f(r.n);
  f(r.gamma);
  f(r.beta);
  f(r.steps);
  f(r.l2);
  auto& learning = r.learning;
  f(learning.gamma);
  f(learning.alignment_drift);
  f(learning.anchor_precision);
  f(learning.lambda);
  f(learning.repulsion_ratio_initial);
  f(learning.repulsion_ratio_final);
  f(learning.anchor_ratio_initial);
  for (auto* metrics : {&r.validation, &r.test, &r.test_calibrated}) {
    f(metrics->accuracy);
    f(metrics->log_loss);
    f(metrics->brier);
    f(metrics->ece);
    f(metrics->mcc);
  }
  f(r.temperature);
  f(r.alignment_fit);
  f(r.alignment_validation);
  f(r.effective_rank);
  f(r.distances.min);
  f(r.distances.mean);
  f(r.seconds);
}

template <class Point, class F>
void point_fields(Point& p, F&& f) {
  using T = std::remove_const_t<Point>;
  if constexpr (std::is_same_v<T, SelectionPoint>) {
    f(p.gamma);
    f(p.beta);
    f(p.step);
    f(p.l2);
    f(p.accuracy);
    f(p.log_loss);
  } else if constexpr (std::is_same_v<T, CheckpointScore>) {
    f(p.step);
    f(p.validation_accuracy);
    f(p.test_accuracy);
  } else {
    static_assert(std::is_same_v<T, TrainingRecord>);
    f(p.step);
    f(p.alignment);
    f(p.distances.min);
    f(p.distances.mean);
  }
}

// How many numbers the fields of a T take.
template <class T>
std::size_t record_width() {
  T value{};
  std::size_t count = 0;
  if constexpr (std::is_same_v<T, KernelRunResult>)
    scalar_fields(value, [&](auto&) { ++count; });
  else
    point_fields(value, [&](auto&) { ++count; });
  return count;
}

}  // namespace

std::vector<double> kernel_run_record(const KernelRunResult& r) {
  const auto& names = kernel_method_names();
  const auto method = std::find(names.begin(), names.end(), r.method);
  if (method == names.end()) throw std::logic_error("unknown kernel method '" + r.method + "'");
  std::vector<double> out = {
      static_cast<double>(r.norms.size()),         static_cast<double>(r.grid.size()),
      static_cast<double>(r.curve.size()),         static_cast<double>(r.trace.size()),
      static_cast<double>(method - names.begin()), static_cast<double>(r.seed >> 32),
      static_cast<double>(r.seed & 0xffffffffu)};
  const auto put = [&](const auto& v) { out.push_back(static_cast<double>(v)); };
  scalar_fields(r, put);
  for (Eigen::Index k = 0; k < r.norms.size(); ++k) out.push_back(r.norms[k]);
  for (const auto& p : r.grid) point_fields(p, put);
  for (const auto& p : r.curve) point_fields(p, put);
  for (const auto& p : r.trace) point_fields(p, put);
  return out;
}

KernelRunResult kernel_run_from_record(const std::vector<double>& v) {
  const std::size_t size = v.size();
  if (size < kHeader)
    throw std::invalid_argument("a kernel run record of " + std::to_string(size) +
                                " values: too short");
  std::size_t lengths[4];
  for (int k = 0; k < 4; ++k) {
    if (!(v[k] >= 0.0 && v[k] <= static_cast<double>(size) && v[k] == std::floor(v[k])))
      throw std::invalid_argument("a kernel run record with a bad length");
    lengths[k] = static_cast<std::size_t>(v[k]);
  }
  const std::size_t expected = kHeader + record_width<KernelRunResult>() + lengths[0] +
                               lengths[1] * record_width<SelectionPoint>() +
                               lengths[2] * record_width<CheckpointScore>() +
                               lengths[3] * record_width<TrainingRecord>();
  if (size != expected)
    throw std::invalid_argument("a kernel run record of " + std::to_string(size) + " values, not " +
                                std::to_string(expected));
  const auto& names = kernel_method_names();
  if (!(v[4] >= 0.0 && v[4] < static_cast<double>(names.size()) && v[4] == std::floor(v[4])))
    throw std::invalid_argument("a kernel run record with an unknown method");

  KernelRunResult r;
  r.method = names[static_cast<std::size_t>(v[4])];
  r.seed = (static_cast<std::uint64_t>(v[5]) << 32) | static_cast<std::uint64_t>(v[6]);
  std::size_t at = kHeader;
  const auto get = [&](auto& field) {
    field = static_cast<std::decay_t<decltype(field)>>(v[at++]);
  };
  scalar_fields(r, get);
  r.norms.resize(static_cast<Eigen::Index>(lengths[0]));
  for (Eigen::Index k = 0; k < r.norms.size(); ++k) r.norms[k] = v[at++];
  r.grid.resize(lengths[1]);
  for (auto& p : r.grid) point_fields(p, get);
  r.curve.resize(lengths[2]);
  for (auto& p : r.curve) point_fields(p, get);
  r.trace.resize(lengths[3]);
  for (auto& p : r.trace) point_fields(p, get);
  return r;
}

}  // namespace cpm
