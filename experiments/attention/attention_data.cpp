#include "experiments/attention/attention_data.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "io/input_error.hpp"
#include "io/text_datasets.hpp"
#include "transformer/tokenizer.hpp"

namespace cpm {

namespace {

const std::string kFashionMnistDirectory = "/usr/share/datasets/fashion-mnist";

// The data set's folder: data.directory, else the Fashion-MNIST package folder or
// data_folder()/<name>. A missing folder stops with how to point cpm at it.
std::string data_directory(const DataConfig& c) {
  std::string dir = c.directory;
  if (dir.empty())
    dir = c.dataset == ClassificationDataset::fashion_mnist
              ? kFashionMnistDirectory
              : data_folder() + "/" + name_of(c.dataset);
  if (c.dataset != ClassificationDataset::qqp && !std::filesystem::is_directory(dir))
    throw InputError(dir + ": data folder not found (set data.directory in the configuration, " +
                     (c.dataset == ClassificationDataset::fashion_mnist
                          ? std::string("or install dataset-fashion-mnist)")
                          : std::string("or CPM_DATA_DIR in the environment to the folder "
                                        "holding sst2/ and rotten_tomatoes/)")));
  return dir;
}

void limit(TextExamples& e, std::size_t n) {
  if (n == 0 || n >= e.size()) return;
  e.text.resize(n);
  if (e.has_pairs()) e.pair.resize(n);
  e.labels.resize(n);
}

SequenceSet encode(const Tokenizer& tokenizer, const TextExamples& e, int max_length) {
  SequenceSet s;
  s.labels = e.labels;
  s.tokens.reserve(e.size());
  for (std::size_t i = 0; i < e.size(); ++i)
    s.tokens.push_back(e.has_pairs() ? tokenizer.encode_pair(e.text[i], e.pair[i], max_length)
                                     : tokenizer.encode(e.text[i], max_length));
  return s;
}

}  // namespace

std::string data_folder() {
  const char* environment = std::getenv("CPM_DATA_DIR");
  return environment && *environment ? std::string(environment) : std::string(CPM_DATA_DIR);
}

ExperimentTasks load_experiment_tasks(const TrainConfig& config) {
  const ExperimentConfig& e = config.experiment;
  ExperimentTasks t;
  const std::vector<ClassificationDataset> datasets =
      e.datasets.empty() ? std::vector<ClassificationDataset>{config.data.dataset} : e.datasets;
  for (const ClassificationDataset dataset : datasets) {
    t.datasets.push_back(name_of(dataset));
    DataConfig data = config.data;
    if (dataset != data.dataset) data.directory.clear();
    data.dataset = dataset;
    t.data.push_back(data);
    t.tasks.push_back(load_attention_task(data));
  }
  return t;
}

AttentionTask load_attention_task(const DataConfig& config,
                                  const std::optional<std::vector<std::string>>& vocabulary) {
  AttentionTask task;
  task.dataset = name_of(config.dataset);
  task.max_length = config.max_length;
  const std::string dir = data_directory(config);
  if (config.dataset == ClassificationDataset::fashion_mnist) {
    // Tokens: 0 padding, 1 unknown, 2 separator (unused), then one per grey level.
    constexpr int kFirstPixelToken = 3;
    task.evaluation_split = "test";
    task.classes = 10;
    task.vocabulary_size = kFirstPixelToken + config.pixel_levels;
    task.max_length = 784;
    auto load = [&](const std::string& split, std::size_t n) {
      PixelSequences p = read_fashion_mnist(dir, split, config.pixel_levels, kFirstPixelToken, n);
      return SequenceSet{std::move(p.tokens), std::move(p.labels)};
    };
    if (!vocabulary) task.train = load("train", config.train_limit);
    task.evaluation = load("test", config.eval_limit);
    return task;
  }
  TextExamples train, evaluation;
  const bool need_train = !vocabulary.has_value();
  if (config.dataset == ClassificationDataset::sst2) {
    task.evaluation_split = "dev";
    if (need_train) train = read_sst2_tsv(dir + "/train.tsv");
    evaluation = read_sst2_tsv(dir + "/dev.tsv");
  } else if (config.dataset == ClassificationDataset::rotten_tomatoes) {
    task.evaluation_split = "test";
    TextSplits s =
        read_rotten_tomatoes(dir + "/rt-polarity.pos", dir + "/rt-polarity.neg", config.split_seed);
    train = std::move(s.train);
    evaluation = std::move(s.test);
  } else {  // qqp
    task.evaluation_split = "dev";
    task.pairs = true;
    if (need_train) train = read_qqp_tsv(config.train_path);
    evaluation = read_qqp_tsv(config.eval_path);
  }
  limit(train, config.train_limit);
  limit(evaluation, config.eval_limit);
  Tokenizer tokenizer = vocabulary ? Tokenizer(*vocabulary) : [&] {
    std::vector<std::string> texts = train.text;
    texts.insert(texts.end(), train.pair.begin(), train.pair.end());
    return Tokenizer::build(texts, config.min_count,
                            static_cast<std::size_t>(config.max_vocabulary));
  }();
  task.vocabulary = tokenizer.vocabulary();
  task.vocabulary_size = tokenizer.size();
  task.pairs = task.pairs || evaluation.has_pairs();
  if (need_train) task.train = encode(tokenizer, train, config.max_length);
  task.evaluation = encode(tokenizer, evaluation, config.max_length);
  return task;
}

std::vector<int> encode_text(const std::vector<std::string>& vocabulary, const std::string& text,
                             int max_length, bool pairs) {
  const Tokenizer tokenizer(vocabulary);
  const std::size_t tab = text.find('\t');
  if (pairs && tab != std::string::npos)
    return tokenizer.encode_pair(text.substr(0, tab), text.substr(tab + 1), max_length);
  return tokenizer.encode(text, max_length);
}

}  // namespace cpm
