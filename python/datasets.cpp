// The classification data sets of `cpm train` from Python: read and tokenised by the command
// line's own reader (experiments/attention/attention_data.hpp), in the data folder found when the
// call runs (CPM_DATA_DIR in the environment, else the build's default).
#include <algorithm>

#include "experiments/attention/attention_data.hpp"
#include "io/input_error.hpp"
#include "python/bindings.hpp"

namespace cpm::python {

namespace {

// {"tokens": (n, L) int32 right-padded with 0, "lengths": (n,), "labels": (n,)}.
py::dict split_arrays(const SequenceSet& set) {
  const auto n = static_cast<py::ssize_t>(set.size());
  const auto length = static_cast<py::ssize_t>(set.max_length());
  py::array_t<std::int32_t> tokens({n, length}), lengths(n), labels(n);
  auto t = tokens.mutable_unchecked<2>();
  for (py::ssize_t i = 0; i < n; ++i) {
    const std::vector<int>& row = set.tokens[static_cast<std::size_t>(i)];
    for (py::ssize_t j = 0; j < length; ++j)
      t(i, j) = j < static_cast<py::ssize_t>(row.size()) ? row[static_cast<std::size_t>(j)] : 0;
    lengths.mutable_at(i) = static_cast<std::int32_t>(row.size());
    labels.mutable_at(i) = set.labels[static_cast<std::size_t>(i)];
  }
  py::dict out;
  out["tokens"] = tokens;
  out["lengths"] = lengths;
  out["labels"] = labels;
  return out;
}

}  // namespace

void bind_datasets(py::module_& m) {
  m.def("data_folder", &data_folder,
        "The folder holding the text data sets: CPM_DATA_DIR in the environment, else the\n"
        "build's default.");
  m.def(
      "load_classification",
      [](const std::string& dataset, const std::string& directory, int max_length, int min_count,
         int max_vocabulary, std::size_t train_limit, std::size_t eval_limit,
         std::uint64_t split_seed) {
        DataConfig c;
        const auto& known = names(ClassificationDataset{});
        const auto it = std::find(known.begin(), known.end(), dataset);
        if (it == known.end())
          throw InputError("dataset: unknown data set '" + dataset +
                           "' (sst2, rotten_tomatoes, "
                           "qqp, fashion_mnist)");
        c.dataset = static_cast<ClassificationDataset>(it - known.begin());
        c.directory = directory;
        if (max_length < 1) throw InputError("max_length: must be >= 1");
        if (min_count < 1) throw InputError("min_count: must be >= 1");
        if (max_vocabulary < 0) throw InputError("max_vocabulary: must be >= 0");
        c.max_length = max_length;
        c.min_count = min_count;
        c.max_vocabulary = max_vocabulary;
        c.train_limit = train_limit;
        c.eval_limit = eval_limit;
        c.split_seed = split_seed;
        const AttentionTask task = without_gil([&] { return load_attention_task(c); });
        py::dict out;
        out["train"] = split_arrays(task.train);
        out["evaluation"] = split_arrays(task.evaluation);
        out["evaluation_split"] = task.evaluation_split;
        out["classes"] = task.classes;
        out["vocabulary"] = task.vocabulary;
        out["vocabulary_size"] = task.vocabulary_size;
        return out;
      },
      py::arg("dataset") = "sst2", py::arg("directory") = "", py::arg("max_length") = 64,
      py::arg("min_count") = 2, py::arg("max_vocabulary") = 0, py::arg("train_limit") = 0,
      py::arg("eval_limit") = 0, py::arg("split_seed") = 1,
      "A classification data set as cpm train reads it ([data] keys of the same names):\n"
      "{train, evaluation: {tokens (n, L) int32 right-padded with 0, lengths, labels},\n"
      "evaluation_split, classes, vocabulary (the tokenizer's words), vocabulary_size}.\n"
      "directory '': data_folder()/<dataset>.");
}

}  // namespace cpm::python
