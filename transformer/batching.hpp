#pragma once
// Labelled token sequences and the padded batches the classifier reads. A batch of B sequences
// is a (B, L) row-major token array, L the longest of them, shorter rows padded with token 0
// (their lengths mask the padding in attention and pooling).
#include <algorithm>
#include <cstddef>
#include <vector>

#include "transformer/transformer_classifier.hpp"

namespace cpm {

struct SequenceSet {
  std::vector<std::vector<int>> tokens;  // each of length ≥ 1
  std::vector<int> labels;
  std::size_t size() const { return labels.size(); }
  std::size_t max_length() const {
    std::size_t m = 1;
    for (const auto& t : tokens) m = std::max(m, t.size());
    return m;
  }
};

// Buffers reused from batch to batch: nothing is allocated once they have grown to the largest
// batch.
class BatchBuffer {
 public:
  // The sequences rows[0..count) of `data` as one padded batch (labels included).
  TokenBatch gather(const SequenceSet& data, const std::size_t* rows, int count) {
    int length = 1;
    for (int b = 0; b < count; ++b)
      length = std::max(length, static_cast<int>(data.tokens[rows[b]].size()));
    tokens_.assign(static_cast<std::size_t>(count) * length, 0);
    lengths_.assign(count, 0);
    labels_.assign(count, 0);
    for (int b = 0; b < count; ++b) {
      const auto& sequence = data.tokens[rows[b]];
      std::copy(sequence.begin(), sequence.end(),
                tokens_.begin() + static_cast<std::ptrdiff_t>(b) * length);
      lengths_[b] = static_cast<int>(sequence.size());
      labels_[b] = data.labels[rows[b]];
    }
    return {tokens_.data(), lengths_.data(), labels_.data(), count, length};
  }

  // The consecutive sequences first .. first + count − 1.
  TokenBatch gather_range(const SequenceSet& data, std::size_t first, int count) {
    rows_.resize(static_cast<std::size_t>(count));
    for (int b = 0; b < count; ++b) rows_[b] = first + static_cast<std::size_t>(b);
    return gather(data, rows_.data(), count);
  }

 private:
  std::vector<int> tokens_, lengths_, labels_;
  std::vector<std::size_t> rows_;
};

}  // namespace cpm
