#include "experiments/kernel/kernel_selection.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <limits>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "core/feature_initialisation.hpp"
#include "frequencies/feature_generator.hpp"
#include "learning/held_out.hpp"
#include "learning/linear_classifier.hpp"
#include "physics/alignment.hpp"

namespace cpm {

KernelRunData prepare_run_data(const KernelConfig& config, const DataSplit& split,
                               std::uint64_t seed) {
  KernelRunData d;
  ValidationSplit v = split_validation(split.train, config.selection.validation_fraction, seed);
  d.fit = std::move(v.fit);
  d.validation = std::move(v.validation);
  d.test = split.test;
  d.classes = split.train.classes;
  d.fit_x = std::make_shared<const Eigen::MatrixXd>(d.fit.x);
  d.fit_targets = alignment_targets(d.fit.y, d.classes);
  d.scored_fit_targets = d.fit_targets;
  d.scored_validation_targets = alignment_targets(d.validation.y, d.classes);
  if (config.alignment.centred) {
    centre_targets(d.scored_fit_targets);
    centre_targets(d.scored_validation_targets);
  }
  return d;
}

ImportancePool make_importance_pool(const KernelConfig& config, const KernelRunData& data,
                                    std::uint64_t seed) {
  ImportancePool p;
  const Eigen::Index m = config.baselines.pool;
  p.candidates = gaussian_features(m, data.fit.dim(), config.features.scale, seed, /*replica=*/2);
  p.map = make_feature_map(config.features, m, seed, 2);
  const Eigen::VectorXd scores =
      particle_scores(p.map, data.fit.x, data.scored_fit_targets, p.candidates);
  const Eigen::VectorXd q = importance_weights(scores, config.baselines.rho);
  const Eigen::Index largest =
      *std::max_element(config.features.n.begin(), config.features.n.end());
  p.order = sample_indices(q, largest, seed);
  return p;
}

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool better(const ClassificationMetrics& a, const ClassificationMetrics& b) {
  return a.accuracy > b.accuracy || (a.accuracy == b.accuracy && a.log_loss < b.log_loss);
}

ClassifierSettings classifier_settings(const KernelClassifierConfig& c, double l2) {
  ClassifierSettings s;
  s.kind = c.kind == "ridge" ? ClassifierSettings::Kind::ridge : ClassifierSettings::Kind::logistic;
  s.l2 = l2;
  s.max_iterations = c.max_iterations;
  return s;
}

// Features of the fit and validation rows for one set of particles.
struct HeldOutFeatures {
  Eigen::MatrixXd fit, validation;
};
HeldOutFeatures held_out_features(const FeatureMap& map, const KernelRunData& d,
                                  const Eigen::MatrixXd& w) {
  return {map.features(d.fit.x, w), map.features(d.validation.x, w)};
}

struct Fitted {
  LinearClassifier model;
  ClassificationMetrics validation;
};
Fitted fit_and_validate(const KernelConfig& c, const KernelRunData& d, const HeldOutFeatures& f,
                        double l2) {
  Fitted r{LinearClassifier::fit(f.fit, d.fit.y, d.classes, classifier_settings(c.classifier, l2)),
           {}};
  r.validation = classification_metrics(r.model.probabilities(f.validation), d.validation.y);
  return r;
}

double reference_l2(const std::vector<double>& grid) {
  std::vector<double> sorted = grid;
  std::sort(sorted.begin(), sorted.end());
  return sorted[sorted.size() / 2];
}

LearningSettings learning_settings(const KernelConfig& c, const KernelRunData& d, double gamma,
                                   double beta, bool repulsion, std::uint64_t seed,
                                   std::vector<int> checkpoints) {
  LearningSettings s;
  Eigen::Index batch = c.alignment.batch_size;
  if (batch >= d.fit.size()) batch = 0;
  s.alignment = {gamma, c.alignment.centred, batch, seed, c.alignment.objective, c.alignment.alpha,
                 0.0};
  s.relative_gamma = c.alignment.relative_gamma;
  s.anchor = c.alignment.anchor;
  s.prior_scale = c.features.scale;
  s.repulsion = c.repulsion;
  s.drift_fraction = c.repulsion_scale.drift_fraction;
  if (!repulsion) {
    s.repulsion.lambda = 0.0;
    s.drift_fraction = -1.0;
  }
  s.dynamics = c.dynamics;
  s.dynamics.beta = beta;
  if (std::isfinite(beta)) s.dynamics.integrator = Integrator::langevin;
  s.dynamics.steps = checkpoints.empty() ? c.dynamics.steps : checkpoints.back();
  s.radius = c.learning.radius;
  s.record_every = c.learning.record_every;
  s.seed = seed;
  s.source = c.source;
  s.checkpoints = std::move(checkpoints);
  return s;
}

}  // namespace

MethodOutcome evaluate_method(const MethodContext& ctx, const std::string& method, Eigen::Index n) {
  const KernelConfig& c = *ctx.config;
  const KernelRunData& d = *ctx.data;
  const auto start = std::chrono::steady_clock::now();
  const int dim = static_cast<int>(d.fit.dim());
  const double scale = c.features.scale;
  MethodOutcome out;
  out.method = method;
  out.n = n;
  out.gamma = out.beta = kNaN;
  FeatureMap map = make_feature_map(c.features, n, ctx.seed);
  Eigen::MatrixXd particles;
  std::vector<std::pair<int, Eigen::MatrixXd>> snapshots;  // the chosen run's checkpoints
  const double l2_reference = reference_l2(c.selection.l2);
  std::optional<Fitted> chosen;
  HeldOutFeatures chosen_features;

  const bool learned = method.rfind("learned", 0) == 0;
  if (!learned) {
    if (method == "iid") {
      particles = gaussian_features(n, dim, scale, ctx.seed);
    } else if (method == "orthogonal") {
      particles = orthogonal_gaussian_features(n, dim, scale, ctx.seed);
    } else if (method == "sobol" || method == "halton" || method == "coulomb") {
      // frequencies/feature_generator.hpp for N(0, I), scaled to N(0, scale² I).
      particles = scale * initial_features(method, n, dim, ctx.seed, 0);
    } else if (method == "importance") {
      if (!ctx.pool) throw std::logic_error("importance features need the candidate pool");
      particles.resize(n, dim);
      Eigen::VectorXd phases(ctx.pool->map.phases().size() ? n : 0);
      for (Eigen::Index k = 0; k < n; ++k) {
        particles.row(k) = ctx.pool->candidates.row(ctx.pool->order[k]);
        if (phases.size()) phases[k] = ctx.pool->map.phases()[ctx.pool->order[k]];
      }
      map = ctx.pool->map.pairs() ? FeatureMap::rff_pairs() : FeatureMap(c.features.map, phases);
    } else {
      throw std::invalid_argument("unknown feature method '" + method + "'");
    }
    chosen_features = held_out_features(map, d, particles);
  } else {
    const Eigen::MatrixXd initial = scale * initial_features(c.features.init, n, dim, ctx.seed, 0);
    std::vector<double> gammas = c.selection.gamma, betas = c.selection.beta;
    std::vector<int> checkpoints = c.selection.checkpoints;
    Eigen::MatrixXd targets = d.fit_targets;
    std::vector<double> l2_stage1 = {l2_reference};
    if (method == "learned-beta-inf") betas = {std::numeric_limits<double>::infinity()};
    if (method == "learned-null") {
      if (!ctx.learned) throw std::logic_error("learned-null needs the outcome of learned");
      gammas = {ctx.learned->gamma};
      betas = {ctx.learned->beta};
      checkpoints = {ctx.learned->steps};
      l2_stage1 = {ctx.learned->l2};
      targets = alignment_targets(permute_labels(d.fit.y, ctx.seed), d.classes);
    }
    const bool repulsion = method != "learned-no-repulsion";
    double best_gamma = kNaN, best_beta = kNaN;
    int best_step = 0;
    ClassificationMetrics best_validation;
    bool have_best = false;
    for (double gamma : gammas)
      for (double beta : betas) {
        std::vector<std::pair<int, Eigen::MatrixXd>> snaps;
        std::vector<TrainingRecord> trace;
        LearningReport report;
        const LearningSettings s =
            learning_settings(c, d, gamma, beta, repulsion, ctx.seed, checkpoints);
        auto on_record = [&](const TrainingRecord& r) {
          if (!ctx.on_progress) return;
          std::ostringstream o;
          o << method << " N=" << n << " gamma=" << gamma << " beta=" << beta << " step " << r.step
            << " A=" << std::setprecision(4) << r.alignment;
          ctx.on_progress(o.str());
        };
        learn_particles(d.fit_x, targets, map, initial, s, &trace, on_record, &report,
                        [&](int step, const Eigen::MatrixXd& w) { snaps.emplace_back(step, w); });
        bool this_run_best = false;
        for (const auto& [step, w] : snaps) {
          const HeldOutFeatures f = held_out_features(map, d, w);
          Fitted fitted = fit_and_validate(c, d, f, l2_stage1.front());
          out.grid.push_back({gamma, beta, step, l2_stage1.front(), fitted.validation.accuracy,
                              fitted.validation.log_loss});
          if (!have_best || better(fitted.validation, best_validation)) {
            have_best = true;
            this_run_best = true;
            best_validation = fitted.validation;
            best_gamma = gamma;
            best_beta = beta;
            best_step = step;
            particles = w;
            chosen_features = f;
            chosen = std::move(fitted);
            out.learning = report;
            out.trace = trace;
          }
        }
        if (this_run_best) snapshots = std::move(snaps);
      }
    out.gamma = best_gamma;
    out.beta = best_beta;
    out.steps = best_step;
  }

  // The classifier's l2 on the validation rows (learned-null keeps learned's).
  const std::vector<double> l2_grid =
      method == "learned-null" ? std::vector<double>{ctx.learned->l2} : c.selection.l2;
  double best_l2 = learned ? (method == "learned-null" ? ctx.learned->l2 : l2_reference) : kNaN;
  for (double l2 : l2_grid) {
    if (learned && l2 == best_l2 && chosen) continue;  // scored in the first stage
    Fitted fitted = fit_and_validate(c, d, chosen_features, l2);
    out.grid.push_back({out.gamma, out.beta, out.steps, l2, fitted.validation.accuracy,
                        fitted.validation.log_loss});
    if (!chosen || better(fitted.validation, chosen->validation)) {
      chosen = std::move(fitted);
      best_l2 = l2;
    }
  }
  out.l2 = best_l2;
  out.validation = chosen->validation;

  // Only now the test rows.
  const Eigen::MatrixXd test_features = map.features(d.test.x, particles);
  out.test = classification_metrics(chosen->model.probabilities(test_features), d.test.y);
  out.temperature =
      fit_temperature(chosen->model.logits(chosen_features.validation), d.validation.y);
  out.test_calibrated = classification_metrics(
      softmax_rows(out.temperature * chosen->model.logits(test_features)), d.test.y);

  // Diagnostics.
  out.alignment_fit = alignment(map, d.fit.x, d.scored_fit_targets, particles);
  out.alignment_validation = alignment(map, d.validation.x, d.scored_validation_targets, particles);
  const Eigen::MatrixXd centred =
      chosen_features.fit.rowwise() - chosen_features.fit.colwise().mean();
  out.effective_rank = effective_rank(centred);
  out.distances = pairwise_distances(particles);
  out.norms = particles.rowwise().norm();
  for (const auto& [step, w] : snapshots) {
    const HeldOutFeatures f = held_out_features(map, d, w);
    const Fitted fitted = fit_and_validate(c, d, f, out.l2);
    out.curve.push_back(
        {step, fitted.validation.accuracy,
         classification_metrics(fitted.model.probabilities(map.features(d.test.x, w)), d.test.y)
             .accuracy});
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace cpm
