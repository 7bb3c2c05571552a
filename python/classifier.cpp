// A trained classifier on token sequences: the TransformerClassifier<float> of a `cpm train`
// model.h5 (transformer/classifier_checkpoint.hpp), run as `cpm predict` and `cpm eval` run it
// (inference, no dropout) on a right-padded batch. Its logits are what a PyTorch copy of the
// model (cpm.torch.TransformerClassifier) is compared with.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "io/input_error.hpp"
#include "io/model_checkpoint.hpp"
#include "python/bindings.hpp"
#include "transformer/classifier_checkpoint.hpp"
#include "transformer/transformer_classifier.hpp"

namespace cpm::python {

namespace {

using IntegerArray = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>;

// An integer array of the given rank, C-ordered int64 (converted if it is not); InputError naming
// the argument for another rank or a dtype that is not an integer.
IntegerArray integer_argument(const py::handle& value, const std::string& name, int rank) {
  const py::array a = py::array::ensure(value);
  if (!a || (a.dtype().kind() != 'i' && a.dtype().kind() != 'u'))
    throw InputError(name + ": expected an integer array");
  if (a.ndim() != rank)
    throw InputError(name + ": expected a " + std::to_string(rank) + "-D array, got " +
                     std::to_string(a.ndim()) + "-D");
  return IntegerArray::ensure(a);
}

// A padded batch as the classifier reads it: tokens (size, length) row-major, right-padded.
struct Batch {
  std::vector<int> tokens, lengths;
  int size = 0, length = 0;
};

// tokens (B, T) and lengths (B), each length in [1, T]; the tokens are checked against the model
// later (check_against).
Batch batch_argument(const py::handle& tokens, const py::handle& lengths) {
  const IntegerArray t = integer_argument(tokens, "tokens", 2);
  const IntegerArray n = integer_argument(lengths, "lengths", 1);
  Batch b;
  b.size = static_cast<int>(t.shape(0));
  b.length = static_cast<int>(t.shape(1));
  if (b.size < 1 || b.length < 1) throw InputError("tokens: expected at least one token per row");
  if (n.shape(0) != b.size)
    throw InputError("lengths: expected " + std::to_string(b.size) +
                     " entries (one per row of tokens), got " + std::to_string(n.shape(0)));
  for (py::ssize_t i = 0; i < n.shape(0); ++i) {
    const std::int64_t len = n.at(i);
    if (len < 1 || len > b.length)
      throw InputError("lengths: entry " + std::to_string(i) + " is " + std::to_string(len) +
                       ", not in [1, " + std::to_string(b.length) + "]");
    b.lengths.push_back(static_cast<int>(len));
  }
  // ids outside [0, INT_MAX] become −1, which check_against refuses
  const std::int64_t* data = t.data();
  for (py::ssize_t i = 0; i < t.size(); ++i)
    b.tokens.push_back(
        data[i] < 0 || data[i] > std::numeric_limits<int>::max() ? -1 : static_cast<int>(data[i]));
  return b;
}

// InputError unless every token lies in [0, vocabulary) and T ≤ the model's max_length.
void check_against(const Batch& b, const ModelShape& shape) {
  if (b.length > shape.max_length)
    throw InputError("tokens: " + std::to_string(b.length) + " positions, more than the model's " +
                     "max_length = " + std::to_string(shape.max_length));
  for (std::size_t i = 0; i < b.tokens.size(); ++i)
    if (b.tokens[i] < 0 || b.tokens[i] >= shape.vocabulary)
      throw InputError("tokens: entry (" + std::to_string(i / b.length) + ", " +
                       std::to_string(i % b.length) + ") is not a token id in [0, " +
                       std::to_string(shape.vocabulary) + ")");
}

// (B, classes) logits, row-major.
struct Logits {
  std::vector<float> values;
  int classes = 0;
};

// The logits of the model in `path` on the batch.
Logits classifier_logits(const std::string& path, const Batch& b) {
  const ModelCheckpoint checkpoint = load_model_checkpoint(path);
  const ModelShape shape = checkpoint_shape(checkpoint, path);
  check_against(b, shape);
  TransformerClassifier<float> model(shape, b.size, b.length);
  load_weights(model, checkpoint, path);
  model.forward({b.tokens.data(), b.lengths.data(), nullptr, b.size, b.length});
  const float* logits = model.logits();
  return {{logits, logits + static_cast<std::size_t>(b.size) * shape.classes}, shape.classes};
}

}  // namespace

void bind_classifier(py::module_& m) {
  m.def(
      "classifier_logits",
      [](const std::string& model_file, const py::handle& tokens, const py::handle& lengths) {
        const Batch b = batch_argument(tokens, lengths);
        const Logits logits = without_gil([&] { return classifier_logits(model_file, b); });
        py::array_t<float> out({py::ssize_t{b.size}, py::ssize_t{logits.classes}});
        std::copy(logits.values.begin(), logits.values.end(), out.mutable_data());
        return out;
      },
      py::arg("model_file"), py::arg("tokens"), py::arg("lengths"),
      "Logits (B, classes), float32, of the classifier a `cpm train` run saved in model_file\n"
      "(model.h5), on tokens (B, T) right-padded integer ids and lengths (B,) in [1, T]; the\n"
      "forward pass of `cpm predict` (no dropout).");
}

}  // namespace cpm::python
