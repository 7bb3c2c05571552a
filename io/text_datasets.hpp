#pragma once
// Loaders of the classification data sets of the attention study (docs/model.md §2). Bad input (a
// missing file, a malformed row) throws InputError with one line naming the file and, for a row,
// its line number.
#include <cstdint>
#include <string>
#include <vector>

namespace cpm {

// Texts with integer labels; `pair` is empty unless the task has sentence pairs (QQP).
struct TextExamples {
  std::vector<std::string> text, pair;
  std::vector<int> labels;
  std::size_t size() const { return labels.size(); }
  bool has_pairs() const { return !pair.empty(); }
};

// SST-2 in the GLUE TSV format: a header `sentence<TAB>label`, then rows with label 0 or 1.
TextExamples read_sst2_tsv(const std::string& path);

// QQP in the GLUE TSV format: a header `id qid1 qid2 question1 question2 is_duplicate`.
TextExamples read_qqp_tsv(const std::string& path);

struct TextSplits {
  TextExamples train, validation, test;
};

// Rotten Tomatoes (Pang & Lee): one snippet per line, label 1 in the .pos file, 0 in the .neg
// file. The 10,662 snippets are shuffled by a permutation keyed by `seed` and split 8,530 /
// 1,066 / 1,066 (train / validation / test).
TextSplits read_rotten_tomatoes(const std::string& positive_path, const std::string& negative_path,
                                std::uint64_t seed);

// Images as sequences of pixel tokens: one sequence of h·w tokens per image, each pixel byte
// quantised to `levels` grey levels, token = first_token + level. Labels 0..9.
struct PixelSequences {
  std::vector<std::vector<int>> tokens;
  std::vector<int> labels;
};

// Fashion-MNIST from `directory` (train-images-idx3-ubyte.gz etc.); split "train" or "test";
// at most `limit` images (0: all).
PixelSequences read_fashion_mnist(const std::string& directory, const std::string& split,
                                  int levels, int first_token, std::size_t limit = 0);

}  // namespace cpm
