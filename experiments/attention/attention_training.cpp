#include "experiments/attention/attention_training.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <numeric>
#include <sstream>

#include "core/feature_initialisation.hpp"
#include "core/random_stream.hpp"
#include "io/input_error.hpp"
#include "io/csv_table.hpp"
#include "io/model_checkpoint.hpp"
#include "io/output_directory.hpp"
#include "io/progress.hpp"
#include "config/toml_reader.hpp"
#include "transformer/adamw.hpp"

namespace cpm {

namespace {

void initialise_particles(TransformerClassifier<float>& model, const std::string& law,
                          std::uint64_t seed) {
  const ModelShape& s = model.shape();
  for (int l = 0; l < s.layers; ++l)
    for (int h = 0; h < s.heads; ++h) {
      const std::uint64_t replica = static_cast<std::uint64_t>(l) * s.heads + h;
      const Eigen::MatrixXd w =
          law == "gaussian"
              ? gaussian_features(s.features, s.head_size(), 1.0, seed, replica)
              : orthogonal_gaussian_features(s.features, s.head_size(), 1.0, seed, replica);
      float* omega = model.head_particles(l, h);
      for (int k = 0; k < s.features; ++k)
        for (int a = 0; a < s.head_size(); ++a)
          omega[k * s.head_size() + a] = static_cast<float>(w(k, a));
    }
}

std::vector<std::size_t> epoch_order(std::size_t n, std::uint64_t seed, int epoch) {
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  RandomStream stream(seed, RandomPurpose::minibatch, 0xE90C, static_cast<std::uint64_t>(epoch));
  for (std::size_t i = n - 1; i > 0 && n > 1; --i)
    std::swap(order[i], order[static_cast<std::size_t>(stream.uniform() * (i + 1))]);
  return order;
}

const std::vector<std::string> kMetricColumns = {"accuracy", "mcc", "ece", "log_loss", "brier"};

std::vector<double> metric_values(const AttentionMetrics& m) {
  return {m.metrics.accuracy, m.mcc, m.metrics.ece, m.metrics.log_loss, m.metrics.brier};
}

void write_metrics(const std::string& path, const std::vector<EvaluationCondition>& conditions) {
  std::ofstream out(path);
  out << "condition";
  for (const auto& c : kMetricColumns) out << ',' << c;
  out << '\n' << std::setprecision(10);
  for (const auto& c : conditions) {
    out << c.name;
    for (double v : metric_values(c.result)) out << ',' << v;
    out << '\n';
  }
}

void print_metrics(std::ostream& out, const std::vector<EvaluationCondition>& conditions) {
  out << std::left << std::setw(18) << "condition";
  for (const auto& c : kMetricColumns) out << std::setw(10) << c;
  out << '\n' << std::fixed << std::setprecision(4);
  for (const auto& c : conditions) {
    out << std::setw(18) << c.name;
    for (double v : metric_values(c.result)) out << std::setw(10) << v;
    out << '\n';
  }
  out.unsetf(std::ios::fixed);
}

ModelCheckpoint make_checkpoint(const TransformerClassifier<float>& model,
                                const TrainConfig& config, const AttentionTask& task) {
  return {model.shape(),      config.model.variant.name(), task.dataset,
          model.parameters(), model.particles(),           task.vocabulary};
}

}  // namespace

TrainResult train_attention_model(const TrainConfig& config, const AttentionTask& task,
                                  const std::string& directory, bool progress) {
  const TrainingConfig& t = config.training;
  const AttentionVariant& variant = config.model.variant;
  ModelShape shape = model_shape(config, task.vocabulary_size, task.classes, task.max_length);
  try {
    shape.validate();
  } catch (const std::invalid_argument& e) {
    throw InputError(config.source + ": model: " + e.what());
  }
  const int buffer_length = static_cast<int>(std::min<std::size_t>(
      task.max_length, std::max(task.train.max_length(), task.evaluation.max_length())));
  TransformerClassifier<float> model(shape, t.batch_size, buffer_length);
  model.initialise_parameters(t.seed);
  if (shape.attention == AttentionKind::linear)
    initialise_particles(model, config.model.particle_init, t.seed);
  AdamW<float> optimiser(model.weight_decay_mask(),
                         {t.learning_rate, 0.9, 0.999, 1e-8, t.weight_decay});

  const bool phase_a = shape.attention == AttentionKind::linear && variant.learned_particles;
  const int warmup_epochs = phase_a ? config.phase_a.warmup_epochs : 0;
  const int epochs = warmup_epochs + t.epochs;
  const std::size_t n = task.train.size();
  const std::int64_t steps_per_epoch =
      static_cast<std::int64_t>((n + t.batch_size - 1) / t.batch_size);
  const std::int64_t total_steps = steps_per_epoch * epochs;

  TrainResult result;
  CsvTable log(directory + "/training_log.csv",
               {"epoch", "step", "loss", "learning_rate", "gradient_norm", "tokens_per_second"});
  auto run_phase = [&] {
    result.phase_a = run_phase_a(model, task.train, task.classes, config.phase_a, t.seed,
                                 t.batch_size, progress);
    CsvTable table(directory + "/phase_a.csv",
                   {"layer", "head", "alignment_before", "alignment_after", "gamma_effective",
                    "particle_norm", "particle_displacement"});
    for (const auto& h : result.phase_a)
      table.add_row(
          {double(h.layer), double(h.head), h.before, h.after, h.gamma, h.norm, h.displacement});
  };
  bool phase_a_done = !phase_a;
  std::vector<int> tokens, lengths, labels;
  Progress bar("cpm train " + variant.name(),
               static_cast<double>(std::max<std::int64_t>(total_steps, 1)), progress);
  double seconds = 0.0, tokens_seen = 0.0, recent_loss = 0.0;
  std::int64_t step = 0;
  for (int epoch = 0; epoch < epochs; ++epoch) {
    if (!phase_a_done && epoch == warmup_epochs) {
      run_phase();
      phase_a_done = true;
    }
    const auto order = epoch_order(n, t.seed, epoch);
    for (std::int64_t b0 = 0; b0 < static_cast<std::int64_t>(n); b0 += t.batch_size) {
      const auto start = std::chrono::steady_clock::now();
      const int B = static_cast<int>(std::min<std::int64_t>(t.batch_size, n - b0));
      int L = 1;
      for (int b = 0; b < B; ++b)
        L = std::max(L, static_cast<int>(task.train.tokens[order[b0 + b]].size()));
      tokens.assign(static_cast<std::size_t>(B) * L, 0);
      lengths.assign(B, 0);
      labels.assign(B, 0);
      for (int b = 0; b < B; ++b) {
        const auto& seq = task.train.tokens[order[b0 + b]];
        std::copy(seq.begin(), seq.end(), tokens.begin() + static_cast<std::ptrdiff_t>(b) * L);
        lengths[b] = static_cast<int>(seq.size());
        labels[b] = task.train.labels[order[b0 + b]];
        tokens_seen += lengths[b];
      }
      const TokenBatch batch{tokens.data(), lengths.data(), labels.data(), B, L};
      ++step;
      model.zero_gradients();
      const double loss = model.forward(batch, true, static_cast<std::uint64_t>(step), t.seed);
      model.backward(batch);
      const double norm = clip_gradient_norm(model.gradients(), t.clip_norm);
      const double lr = scheduled_learning_rate(t.learning_rate, step, t.warmup_steps, total_steps,
                                                t.min_learning_rate_ratio);
      optimiser.step(model.parameters(), model.gradients(), lr);
      seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      recent_loss = step == 1 ? loss : 0.98 * recent_loss + 0.02 * loss;
      if (!std::isfinite(loss))
        throw std::runtime_error("training loss became non-finite at step " + std::to_string(step));
      if (step % 50 == 0 || step == total_steps) {
        log.add_row({double(epoch + 1), double(step), loss, lr, norm, tokens_seen / seconds});
        std::ostringstream detail;
        detail << "epoch " << epoch + 1 << "/" << epochs << " step " << step << " loss "
               << std::setprecision(4) << recent_loss << " " << std::setprecision(0) << std::fixed
               << tokens_seen / seconds << " tok/s";
        bar.update(static_cast<double>(step), detail.str());
      }
    }
  }
  if (!phase_a_done) run_phase();  // epochs = 0: Phase A on the initial network only
  bar.finish();
  result.final_loss = recent_loss;
  result.seconds = seconds;
  result.tokens_per_second = seconds > 0 ? tokens_seen / seconds : 0.0;
  result.evaluation =
      evaluate_conditions(model, task.evaluation, t.batch_size, config.evaluation.robustness,
                          config.evaluation.perturbation_seed);
  write_metrics(directory + "/metrics.csv", result.evaluation);
  save_model_checkpoint(directory + "/model.h5", make_checkpoint(model, config, task));
  return result;
}

namespace {

struct RunRow {
  std::string dataset, variant;
  std::uint64_t seed;
  TrainResult result;
};

std::string mean_std(const std::vector<double>& v) {
  const double mean = std::accumulate(v.begin(), v.end(), 0.0) / v.size();
  double var = 0.0;
  for (double x : v) var += (x - mean) * (x - mean);
  const double sd = v.size() > 1 ? std::sqrt(var / (v.size() - 1)) : 0.0;
  std::ostringstream o;
  o << std::fixed << std::setprecision(4) << mean << " ± " << sd;
  return o.str();
}

// comparison.md / comparison.csv: mean ± sample std over seeds of every metric, clean and
// perturbed; comparison.png: clean accuracy per variant and data set.
void write_comparison(const std::string& dir, const std::vector<RunRow>& rows,
                      const std::vector<std::string>& datasets,
                      const std::vector<std::string>& variants) {
  std::ofstream raw(dir + "/comparison_runs.csv");
  raw << "dataset,variant,seed,condition,accuracy,mcc,ece,log_loss,brier,tokens_per_second\n"
      << std::setprecision(10);
  for (const auto& r : rows)
    for (const auto& c : r.result.evaluation) {
      raw << r.dataset << ',' << r.variant << ',' << r.seed << ',' << c.name;
      for (double v : metric_values(c.result)) raw << ',' << v;
      raw << ',' << r.result.tokens_per_second << '\n';
    }
  std::ofstream md(dir + "/comparison.md");
  std::ofstream plot(dir + "/comparison_plot.dat");
  plot << "# variant";
  for (const auto& d : datasets) plot << ' ' << d << "_mean " << d << "_std";
  plot << '\n';
  std::map<std::string, std::map<std::string, std::pair<double, double>>>
      accuracy;  // variant → dataset
  for (const auto& d : datasets) {
    md << "### " << d
       << "\n\n| variant | accuracy | MCC | ECE | log loss | Brier | acc. word drop 10% | acc. "
          "word drop 20% | acc. swaps |\n"
       << "|---|---|---|---|---|---|---|---|---|\n";
    for (const auto& v : variants) {
      std::map<std::string, std::vector<std::vector<double>>> by_condition;
      for (const auto& r : rows)
        if (r.dataset == d && r.variant == v)
          for (const auto& c : r.result.evaluation)
            by_condition[c.name].push_back(metric_values(c.result));
      if (by_condition.empty()) continue;
      auto column = [&](const std::string& condition, std::size_t metric) {
        std::vector<double> values;
        for (const auto& m : by_condition[condition]) values.push_back(m[metric]);
        return values;
      };
      md << "| " << v;
      for (std::size_t k = 0; k < kMetricColumns.size(); ++k)
        md << " | " << mean_std(column("clean", k));
      for (const std::string c : {"word_dropout_10", "word_dropout_20", "adjacent_swaps"})
        md << " | " << (by_condition.count(c) ? mean_std(column(c, 0)) : "–");
      md << " |\n";
      const auto acc = column("clean", 0);
      const double mean = std::accumulate(acc.begin(), acc.end(), 0.0) / acc.size();
      double var = 0.0;
      for (double x : acc) var += (x - mean) * (x - mean);
      accuracy[v][d] = {mean, acc.size() > 1 ? std::sqrt(var / (acc.size() - 1)) : 0.0};
    }
    md << "\n";
  }
  for (const auto& v : variants) {
    plot << v;
    for (const auto& d : datasets)
      plot << ' ' << accuracy[v][d].first << ' ' << accuracy[v][d].second;
    plot << '\n';
  }
  plot.close();
  std::ofstream script(dir + "/comparison.gp");
  script << "set terminal pngcairo size 1000,500 noenhanced\nset output '" << dir
         << "/comparison.png'\n"
         << "set title 'clean accuracy (mean ± std over seeds)'\nset style data histogram\n"
         << "set style histogram errorbars gap 1 lw 1\nset style fill solid 0.6 border -1\n"
         << "set xtics rotate by -30\nset ylabel 'accuracy'\nset key top left\nset yrange [0:1]\n"
         << "plot ";
  for (std::size_t i = 0; i < datasets.size(); ++i)
    script << (i ? ", " : "") << "'" << dir << "/comparison_plot.dat' using " << 2 + 2 * i << ":"
           << 3 + 2 * i << (i ? "" : ":xtic(1)") << " title '" << datasets[i] << "'";
  script << "\n";
  script.close();
  if (std::system(("gnuplot '" + dir + "/comparison.gp' 2>/dev/null").c_str()) != 0)
    std::cerr << "cpm train: gnuplot failed; the table is in " << dir << "/comparison.md\n";
}

}  // namespace

void run_train_command(const TrainConfig& config, const TrainOptions& options) {
  prepare_output_directory(config.output_directory, options.overwrite);
  const std::string root = config.output_directory;
  if (!config.is_experiment()) {
    const AttentionTask task = load_attention_task(config.data);
    const TrainResult r = train_attention_model(config, task, root, options.progress);
    std::cout << task.dataset << " " << task.evaluation_split << ", " << config.model.variant.name()
              << ", " << std::fixed << std::setprecision(0) << r.tokens_per_second
              << " training tokens/s\n";
    print_metrics(std::cout, r.evaluation);
    std::cout << "results in " << root << "/ (metrics.csv, training_log.csv, model.h5)\n";
    return;
  }
  const ExperimentConfig& e = config.experiment;
  const std::vector<std::string> datasets =
      e.datasets.empty() ? std::vector<std::string>{config.data.dataset} : e.datasets;
  std::vector<RunRow> rows;
  for (const auto& dataset : datasets) {
    DataConfig data = config.data;
    if (dataset != data.dataset) data.directory.clear();
    data.dataset = dataset;
    const AttentionTask task = load_attention_task(data);
    for (const auto& variant : e.variants)
      for (const auto seed : e.seeds) {
        TrainConfig run = config;
        run.data = data;
        run.model.variant = parse_attention_variant(variant);
        run.training.seed = seed;
        const std::string dir =
            root + "/" + dataset + "/" + variant + "/seed_" + std::to_string(seed);
        std::filesystem::create_directories(dir);
        if (options.progress)
          std::cerr << "== " << dataset << " " << variant << " seed " << seed << '\n';
        rows.push_back(
            {dataset, variant, seed, train_attention_model(run, task, dir, options.progress)});
        write_comparison(root, rows, datasets, e.variants);  // kept current as runs finish
      }
  }
  std::cout << read_text_file(root + "/comparison.md");
  std::cout << "comparison table in " << root << "/comparison.md, chart in " << root
            << "/comparison.png\n";
}

void run_eval_command(const TrainConfig& config, const std::string& checkpoint_path) {
  const std::string path =
      checkpoint_path.empty() ? config.output_directory + "/model.h5" : checkpoint_path;
  const ModelCheckpoint checkpoint = load_model_checkpoint(path);
  const AttentionTask task = load_attention_task(
      config.data, checkpoint.vocabulary.empty()
                       ? std::optional<std::vector<std::string>>{}
                       : std::optional<std::vector<std::string>>{checkpoint.vocabulary});
  const int vocabulary = checkpoint.vocabulary.empty()
                             ? task.vocabulary_size
                             : static_cast<int>(checkpoint.vocabulary.size());
  const ModelShape expected = model_shape(config, vocabulary, task.classes, task.max_length);
  require_same_shape(expected, checkpoint.shape, path);
  const int length =
      static_cast<int>(std::min<std::size_t>(task.max_length, task.evaluation.max_length()));
  TransformerClassifier<float> model(checkpoint.shape, config.training.batch_size, length);
  if (checkpoint.parameters.size() != model.parameters().size() ||
      checkpoint.particles.size() != model.particles().size())
    throw InputError(path +
                      ": parameter count does not match the model shape (damaged checkpoint)");
  model.parameters() = checkpoint.parameters;
  model.particles() = checkpoint.particles;
  const auto conditions =
      evaluate_conditions(model, task.evaluation, config.training.batch_size,
                          config.evaluation.robustness, config.evaluation.perturbation_seed);
  std::cout << task.dataset << " " << task.evaluation_split << " (" << task.evaluation.size()
            << " examples), " << checkpoint.variant << " from " << path << "\n";
  print_metrics(std::cout, conditions);
}

void run_predict_command(const std::string& path, const std::vector<std::string>& texts) {
  const ModelCheckpoint checkpoint = load_model_checkpoint(path);
  if (checkpoint.vocabulary.empty())
    throw InputError(path + ": this model reads pixel sequences, not text (use cpm eval)");
  TransformerClassifier<float> model(checkpoint.shape, 1, checkpoint.shape.max_length);
  if (checkpoint.parameters.size() != model.parameters().size() ||
      checkpoint.particles.size() != model.particles().size())
    throw InputError(path +
                      ": parameter count does not match the model shape (damaged checkpoint)");
  model.parameters() = checkpoint.parameters;
  model.particles() = checkpoint.particles;
  const int K = checkpoint.shape.classes;
  for (const auto& text : texts) {
    std::vector<int> tokens = encode_text(checkpoint.vocabulary, text, checkpoint.shape.max_length,
                                          checkpoint.dataset == "qqp");
    const int length = static_cast<int>(tokens.size());
    model.forward({tokens.data(), &length, nullptr, 1, length});
    int best = 0;
    for (int k = 1; k < K; ++k)
      if (model.probabilities()[k] > model.probabilities()[best]) best = k;
    std::cout << best;
    for (int k = 0; k < K; ++k)
      std::cout << '\t' << std::setprecision(6) << model.probabilities()[k];
    std::cout << '\n';
  }
}

}  // namespace cpm
