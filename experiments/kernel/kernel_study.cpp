#include "experiments/kernel/kernel_study.hpp"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iomanip>
#include <sstream>

#include "core/feature_initialisation.hpp"
#include "experiments/kernel/kernel_datasets.hpp"
#include "experiments/kernel/kernel_report.hpp"
#include "io/output_directory.hpp"
#include "io/progress.hpp"
#include "learning/linear_classifier.hpp"

namespace cpm {

namespace {

struct MethodFeatures {
  Eigen::MatrixXd particles;
  FeatureMap map;
};

ClassifierSettings classifier_settings(const KernelClassifierConfig& c) {
  ClassifierSettings s;
  s.kind = c.kind == "ridge" ? ClassifierSettings::Kind::ridge : ClassifierSettings::Kind::logistic;
  s.l2 = c.l2;
  s.max_iterations = c.max_iterations;
  return s;
}

LearningSettings learning_settings(const KernelConfig& c, double lambda, std::uint64_t seed) {
  LearningSettings s;
  s.alignment = {c.alignment.gamma, c.alignment.centred, c.alignment.batch_size, seed};
  s.repulsion = c.repulsion;
  s.repulsion.lambda = lambda;
  s.dynamics = c.dynamics;
  s.radius = c.learning.radius;
  s.record_every = c.learning.record_every;
  s.seed = seed;
  s.source = c.source;
  return s;
}

}  // namespace

std::vector<KernelRunResult> run_kernel_study(const KernelConfig& config,
                                              const KernelStudyOptions& options) {
  const KernelDataSource source(config.data);  // reads data files: bad input stops here
  check_interaction_dimension(config.repulsion, source.dim(), config.source, "repulsion");
  prepare_output_directory(config.output_directory, options.overwrite);
  const std::string dir = config.output_directory + "/";
  std::ofstream results_csv(dir + "results.csv"), diagnostics_csv(dir + "diagnostics.csv");
  results_csv << "label_noise,seed,n,method,accuracy,log_loss,brier,ece,alignment,min_distance,"
                 "mean_distance,seconds\n"
              << std::setprecision(10);
  diagnostics_csv << "label_noise,seed,n,method,step,alignment,min_distance,mean_distance\n"
                  << std::setprecision(10);

  const auto& methods = config.baselines.methods;
  const double total = static_cast<double>(config.data.label_noise.size() * config.seeds *
                                           config.features.n.size() * methods.size());
  Progress progress("cpm kernel", total, options.progress);
  double done = 0.0;
  const int d = source.dim();
  const FeatureMapKind kind = config.features.map;
  const double scale = config.features.scale;
  const ClassifierSettings classifier = classifier_settings(config.classifier);
  std::vector<KernelRunResult> results;

  for (double noise : config.data.label_noise) {
    for (int r = 0; r < config.seeds; ++r) {
      const std::uint64_t seed = config.seed + static_cast<std::uint64_t>(r);
      const DataSplit data = source.split(noise, seed);
      const int classes = source.classes();
      auto x = std::make_shared<const Eigen::MatrixXd>(data.train.x);
      const Eigen::MatrixXd targets = alignment_targets(data.train.y, classes);
      Eigen::MatrixXd scored_targets = targets;  // as the alignment potential sees them
      if (config.alignment.centred) centre_targets(scored_targets);

      // Importance sampling scores one candidate pool per seed, shared by every N.
      std::vector<Eigen::Index> pool_order;
      Eigen::MatrixXd pool;
      FeatureMap pool_map(kind);
      if (std::find(methods.begin(), methods.end(), "importance") != methods.end()) {
        pool = gaussian_features(config.baselines.pool, d, scale, seed, /*replica=*/2);
        pool_map = FeatureMap::with_random_phases(kind, config.baselines.pool, seed, 2);
        const Eigen::VectorXd scores =
            alignment_moments(pool_map, *x, scored_targets, pool).rowwise().squaredNorm();
        const Eigen::VectorXd q = importance_weights(scores, config.baselines.rho);
        const Eigen::Index largest =
            *std::max_element(config.features.n.begin(), config.features.n.end());
        pool_order = sample_indices(q, largest, seed);
      }

      for (Eigen::Index n : config.features.n) {
        const FeatureMap map = FeatureMap::with_random_phases(kind, n, seed);
        for (const std::string& method : methods) {
          const auto start = std::chrono::steady_clock::now();
          MethodFeatures f{Eigen::MatrixXd(), map};
          if (method == "iid") {
            f.particles = gaussian_features(n, d, scale, seed);
          } else if (method == "orthogonal") {
            f.particles = orthogonal_gaussian_features(n, d, scale, seed);
          } else if (method == "importance") {
            f.particles.resize(n, d);
            Eigen::VectorXd phases(kind == FeatureMapKind::rff ? n : 0);
            for (Eigen::Index k = 0; k < n; ++k) {
              f.particles.row(k) = pool.row(pool_order[k]);
              if (phases.size()) phases[k] = pool_map.phases()[pool_order[k]];
            }
            f.map = FeatureMap(kind, phases);
          } else {
            const double lambda = method == "learned" ? config.repulsion.lambda : 0.0;
            const Eigen::MatrixXd initial = config.features.init == "orthogonal"
                                                ? orthogonal_gaussian_features(n, d, scale, seed)
                                                : gaussian_features(n, d, scale, seed);
            auto on_record = [&](const TrainingRecord& rec) {
              diagnostics_csv << noise << ',' << seed << ',' << n << ',' << method << ','
                              << rec.step << ',' << rec.alignment << ',' << rec.distances.min << ','
                              << rec.distances.mean << '\n';
              std::ostringstream detail;
              detail << method << " N=" << n << " step " << rec.step
                     << " A=" << std::setprecision(4) << rec.alignment
                     << " min|dw|=" << rec.distances.min;
              progress.update(done, detail.str());
            };
            f.particles =
                learn_particles(x, targets, map, initial, learning_settings(config, lambda, seed),
                                nullptr, on_record);
          }
          const Eigen::MatrixXd train_features = f.map.features(data.train.x, f.particles);
          const LinearClassifier model =
              LinearClassifier::fit(train_features, data.train.y, classes, classifier);
          KernelRunResult res;
          res.label_noise = noise;
          res.seed = seed;
          res.n = n;
          res.method = method;
          res.test = classification_metrics(
              model.probabilities(f.map.features(data.test.x, f.particles)), data.test.y);
          res.alignment = alignment(f.map, data.train.x, scored_targets, f.particles);
          res.distances = pairwise_distances(f.particles);
          res.seconds =
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
          results.push_back(res);
          results_csv << noise << ',' << seed << ',' << n << ',' << method << ','
                      << res.test.accuracy << ',' << res.test.log_loss << ',' << res.test.brier
                      << ',' << res.test.ece << ',' << res.alignment << ',' << res.distances.min
                      << ',' << res.distances.mean << ',' << res.seconds << '\n';
          results_csv.flush();
          done += 1.0;
          std::ostringstream detail;
          detail << "noise " << noise << " seed " << seed << " N=" << n << " " << method
                 << " acc=" << std::setprecision(4) << res.test.accuracy;
          progress.update(done, detail.str());
        }
      }
    }
  }
  write_kernel_report(config, results);
  progress.finish("output in " + config.output_directory);
  return results;
}

}  // namespace cpm
