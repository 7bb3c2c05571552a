// The tokenizer: a vocabulary built from the input's lines, a tokenizer over a stored word list
// (the special tokens, then the lines: what a checkpoint holds once checkpoint_shape accepted
// it), and the encoding of single texts and pairs.
#include <sstream>

#include "fuzz/fuzz_input.hpp"
#include "transformer/tokenizer.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const int min_count = 1 + data[0] % 3;
  const std::size_t max_length = data[1] % 64;
  std::istringstream stream(std::string(cpm::fuzz::as_text(data + 2, size - 2)));
  std::vector<std::string> lines;
  for (std::string line; std::getline(stream, line);) lines.push_back(line);
  cpm::fuzz::expect_input_error_only([&] {
    const cpm::Tokenizer built = cpm::Tokenizer::build(lines, min_count, data[0] / 3);
    std::vector<std::string> stored_words = {"<pad>", "<unk>", "<sep>"};
    stored_words.insert(stored_words.end(), lines.begin(), lines.end());
    const cpm::Tokenizer stored(stored_words);
    for (const auto& line : lines) {
      built.encode(line, max_length);
      stored.encode(line, max_length);
      built.encode_pair(line, lines.front(), max_length);
    }
  });
  return 0;
}
