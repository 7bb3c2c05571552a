#pragma once
// Word-level tokenizer: lower-cased ASCII, split on white space, every ASCII punctuation mark a
// token of its own. The vocabulary is built from the training split with a minimum count; ids
// 0, 1, 2 are the padding, unknown and separator tokens (the separator joins sentence pairs).
#include <cstddef>
#include <string>
#include <vector>

namespace cpm {

class Tokenizer {
 public:
  static constexpr int kPadding = 0, kUnknown = 1, kSeparator = 2;

  // Words in order of decreasing count (ties alphabetical), those seen at least min_count times,
  // at most max_size entries in all (0: no limit).
  static Tokenizer build(const std::vector<std::string>& texts, int min_count,
                         std::size_t max_size = 0);
  // A tokenizer over a stored vocabulary (index = id, including the three special tokens);
  // std::invalid_argument unless is_vocabulary(vocabulary).
  explicit Tokenizer(std::vector<std::string> vocabulary);
  // Whether `words` starts with the three special tokens, as every vocabulary does.
  static bool is_vocabulary(const std::vector<std::string>& words);

  // The words of a text as the tokenizer splits them.
  static std::vector<std::string> split(const std::string& text);
  // Token ids, at most max_length (the text is truncated; at least the unknown token is returned
  // for an empty text so that every sequence has one position).
  std::vector<int> encode(const std::string& text, std::size_t max_length) const;
  // first <sep> second, each truncated to share max_length.
  std::vector<int> encode_pair(const std::string& first, const std::string& second,
                               std::size_t max_length) const;

  const std::vector<std::string>& vocabulary() const { return vocabulary_; }
  int size() const { return static_cast<int>(vocabulary_.size()); }
  int id(const std::string& word) const;

 private:
  std::vector<std::string> vocabulary_;
  std::vector<std::pair<std::string, int>> sorted_;  // (word, id) for binary search
};

}  // namespace cpm
