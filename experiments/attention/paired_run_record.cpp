#include "experiments/attention/paired_run_record.hpp"

#include <cmath>
#include <cstdint>

#include "io/input_error.hpp"

namespace cpm {

namespace {

constexpr double kHalf = 4294967296.0;  // 2³²

// The fields of a Phase A head, in a fixed order, for both directions.
template <class Head, class Visit>
void head_fields(Head& h, Visit&& visit) {
  visit(h.before), visit(h.after), visit(h.gamma), visit(h.lambda);
  visit(h.repulsion_ratio_start), visit(h.repulsion_ratio_end), visit(h.norm);
  visit(h.displacement), visit(h.fit_residual), visit(h.unabsorbed), visit(h.seconds);
}

}  // namespace

void append_arm_values(const ArmResult& arm, std::vector<double>& values) {
  values.push_back(static_cast<double>(arm.start_digest >> 32));
  values.push_back(static_cast<double>(arm.start_digest & 0xFFFFFFFFu));
  values.push_back(static_cast<double>(arm.pretrain_steps));
  values.push_back(static_cast<double>(arm.steps));
  values.push_back(arm.train_seconds);
  values.push_back(arm.phase_a_seconds);
  values.push_back(static_cast<double>(arm.phase_a.size()));
  for (const HeadAlignment& h : arm.phase_a) {
    values.push_back(h.layer);
    values.push_back(h.head);
    values.push_back(h.steps);
    values.push_back(h.converged ? 1.0 : 0.0);
    head_fields(h, [&](double v) { values.push_back(v); });
  }
  values.push_back(static_cast<double>(arm.evaluation.size()));
  for (const EvaluationCondition& c : arm.evaluation) {
    for (double v : metric_values(c.result)) values.push_back(v);
    values.push_back(static_cast<double>(c.predictions.size()));
    for (Eigen::Index i = 0; i < c.predictions.size(); ++i) values.push_back(c.predictions[i]);
  }
}

ArmResult read_arm_values(const std::vector<double>& values, std::size_t& at,
                          const std::string& arm_name, const std::vector<std::string>& conditions,
                          const std::string& source) {
  const auto damaged = [&] {
    return InputError(source + ": a paired run's record does not hold its arms (damaged file)");
  };
  const auto next = [&] {
    if (at >= values.size()) throw damaged();
    return values[at++];
  };
  const auto count = [&] {
    const double n = next();
    if (!(n >= 0.0) || n != std::floor(n) || n > static_cast<double>(values.size()))
      throw damaged();
    return static_cast<std::size_t>(n);
  };
  ArmResult arm;
  arm.arm = arm_name;
  const double high = next(), low = next();
  if (!(high >= 0.0 && high < kHalf && low >= 0.0 && low < kHalf)) throw damaged();
  arm.start_digest = (static_cast<std::uint64_t>(high) << 32) | static_cast<std::uint64_t>(low);
  arm.pretrain_steps = static_cast<std::int64_t>(next());
  arm.steps = static_cast<std::int64_t>(next());
  arm.train_seconds = next();
  arm.phase_a_seconds = next();
  arm.phase_a.resize(count());
  for (HeadAlignment& h : arm.phase_a) {
    h.layer = static_cast<int>(next());
    h.head = static_cast<int>(next());
    h.steps = static_cast<int>(next());
    h.converged = next() != 0.0;
    head_fields(h, [&](double& v) { v = next(); });
  }
  if (count() != conditions.size()) throw damaged();
  for (const std::string& name : conditions) {
    std::vector<double> metrics(metric_columns().size());
    for (double& v : metrics) v = next();
    EvaluationCondition c{name, metrics_from_values(metrics.data()), {}};
    c.predictions.resize(static_cast<Eigen::Index>(count()));
    for (Eigen::Index i = 0; i < c.predictions.size(); ++i)
      c.predictions[i] = static_cast<int>(next());
    arm.evaluation.push_back(std::move(c));
  }
  return arm;
}

}  // namespace cpm
