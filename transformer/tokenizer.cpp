#include "transformer/tokenizer.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <stdexcept>

namespace cpm {

namespace {
const std::vector<std::string> kSpecial = {"<pad>", "<unk>", "<sep>"};
}

std::vector<std::string> Tokenizer::split(const std::string& text) {
  std::vector<std::string> words;
  std::string current;
  auto flush = [&] {
    if (!current.empty()) words.push_back(current);
    current.clear();
  };
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (std::isspace(c)) {
      flush();
    } else if (c < 128 && std::ispunct(c)) {
      flush();
      words.emplace_back(1, ch);
    } else {
      current.push_back(c < 128 ? static_cast<char>(std::tolower(c)) : ch);
    }
  }
  flush();
  return words;
}

Tokenizer Tokenizer::build(const std::vector<std::string>& texts, int min_count,
                           std::size_t max_size) {
  std::map<std::string, long> counts;
  for (const auto& t : texts)
    for (const auto& w : split(t)) ++counts[w];
  std::vector<std::pair<std::string, long>> entries;
  for (const auto& [w, c] : counts)
    if (c >= min_count && std::find(kSpecial.begin(), kSpecial.end(), w) == kSpecial.end())
      entries.emplace_back(w, c);
  std::stable_sort(entries.begin(), entries.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::vector<std::string> vocabulary = kSpecial;
  for (const auto& e : entries) {
    if (max_size && vocabulary.size() >= max_size) break;
    vocabulary.push_back(e.first);
  }
  return Tokenizer(std::move(vocabulary));
}

bool Tokenizer::is_vocabulary(const std::vector<std::string>& words) {
  return words.size() >= kSpecial.size() &&
         std::equal(kSpecial.begin(), kSpecial.end(), words.begin());
}

Tokenizer::Tokenizer(std::vector<std::string> vocabulary) : vocabulary_(std::move(vocabulary)) {
  if (!is_vocabulary(vocabulary_))
    throw std::invalid_argument("a vocabulary starts with <pad>, <unk>, <sep>");
  for (std::size_t i = 0; i < vocabulary_.size(); ++i)
    sorted_.emplace_back(vocabulary_[i], static_cast<int>(i));
  std::sort(sorted_.begin(), sorted_.end());
}

int Tokenizer::id(const std::string& word) const {
  const auto it = std::lower_bound(sorted_.begin(), sorted_.end(), std::make_pair(word, -1));
  return it != sorted_.end() && it->first == word ? it->second : kUnknown;
}

std::vector<int> Tokenizer::encode(const std::string& text, std::size_t max_length) const {
  std::vector<int> ids;
  for (const auto& w : split(text)) {
    if (ids.size() >= max_length) break;
    ids.push_back(id(w));
  }
  if (ids.empty()) ids.push_back(kUnknown);
  return ids;
}

std::vector<int> Tokenizer::encode_pair(const std::string& first, const std::string& second,
                                        std::size_t max_length) const {
  std::vector<int> a = encode(first, max_length), b = encode(second, max_length);
  if (max_length < 3) {
    a.resize(std::min(a.size(), max_length));
    return a;
  }
  // The separator takes one position; each side gets half of the rest, plus what the other leaves.
  const std::size_t room = max_length - 1, half = room / 2;
  const std::size_t keep_a = std::min(a.size(), std::max(half, room - std::min(b.size(), room)));
  const std::size_t keep_b = std::min(b.size(), room - keep_a);
  a.resize(keep_a);
  a.push_back(kSeparator);
  a.insert(a.end(), b.begin(), b.begin() + static_cast<std::ptrdiff_t>(keep_b));
  return a;
}

}  // namespace cpm
