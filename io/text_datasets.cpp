#include "io/text_datasets.hpp"

#include <algorithm>
#include <fstream>
#include <numeric>

#include "core/random_stream.hpp"
#include "io/idx_reader.hpp"
#include "io/input_error.hpp"

namespace cpm {

namespace {

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> fields;
  std::size_t start = 0;
  while (true) {
    const std::size_t tab = line.find('\t', start);
    fields.push_back(
        line.substr(start, tab == std::string::npos ? std::string::npos : tab - start));
    if (tab == std::string::npos) break;
    start = tab + 1;
  }
  return fields;
}

std::ifstream open_data_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path + ": cannot open the data file");
  return in;
}

void strip_carriage_return(std::string& line) {
  if (!line.empty() && line.back() == '\r') line.pop_back();
}

[[noreturn]] void bad_row(const std::string& path, long line, const std::string& reason) {
  throw InputError(path + ":" + std::to_string(line) + ": " + reason);
}

int binary_label(const std::string& field, const std::string& path, long line) {
  if (field == "0") return 0;
  if (field == "1") return 1;
  bad_row(path, line, "label must be 0 or 1, got '" + field + "'");
}

// Reads a TSV with the expected header; calls row(fields, line) for every data row.
template <class Row>
void read_tsv(const std::string& path, const std::vector<std::string>& header, Row row) {
  std::ifstream in = open_data_file(path);
  std::string line;
  long number = 0;
  if (!std::getline(in, line)) throw InputError(path + ": empty file (expected a header line)");
  ++number;
  strip_carriage_return(line);
  if (split_tabs(line) != header) {
    std::string expected;
    for (const auto& h : header) expected += (expected.empty() ? "" : "<TAB>") + h;
    bad_row(path, number, "header must be '" + expected + "'");
  }
  while (std::getline(in, line)) {
    ++number;
    strip_carriage_return(line);
    if (line.empty()) continue;
    const auto fields = split_tabs(line);
    if (fields.size() != header.size())
      bad_row(path, number,
              "expected " + std::to_string(header.size()) + " tab-separated fields, found " +
                  std::to_string(fields.size()));
    row(fields, number);
  }
}

std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in = open_data_file(path);
  std::vector<std::string> lines;
  std::string line;
  long number = 0;
  while (std::getline(in, line)) {
    ++number;
    strip_carriage_return(line);
    if (line.find_first_not_of(" \t") == std::string::npos) bad_row(path, number, "empty snippet");
    lines.push_back(line);
  }
  return lines;
}

void append(TextExamples& to, const TextExamples& from, const std::vector<std::size_t>& order,
            std::size_t begin, std::size_t end) {
  for (std::size_t i = begin; i < end; ++i) {
    to.text.push_back(from.text[order[i]]);
    to.labels.push_back(from.labels[order[i]]);
  }
}

}  // namespace

TextExamples read_sst2_tsv(const std::string& path) {
  TextExamples out;
  read_tsv(path, {"sentence", "label"}, [&](const std::vector<std::string>& f, long line) {
    out.text.push_back(f[0]);
    out.labels.push_back(binary_label(f[1], path, line));
  });
  if (out.size() == 0) throw InputError(path + ": no data rows");
  return out;
}

TextExamples read_qqp_tsv(const std::string& path) {
  TextExamples out;
  read_tsv(path, {"id", "qid1", "qid2", "question1", "question2", "is_duplicate"},
           [&](const std::vector<std::string>& f, long line) {
             out.text.push_back(f[3]);
             out.pair.push_back(f[4]);
             out.labels.push_back(binary_label(f[5], path, line));
           });
  if (out.size() == 0) throw InputError(path + ": no data rows");
  return out;
}

TextSplits read_rotten_tomatoes(const std::string& positive_path, const std::string& negative_path,
                                std::uint64_t seed) {
  TextExamples all;
  for (const auto& [path, label] : {std::pair{positive_path, 1}, std::pair{negative_path, 0}})
    for (auto& line : read_lines(path)) {
      all.text.push_back(std::move(line));
      all.labels.push_back(label);
    }
  constexpr std::size_t kTrain = 8530, kValidation = 1066, kTest = 1066;
  if (all.size() != kTrain + kValidation + kTest)
    throw InputError(positive_path +
                     ": expected 10,662 snippets in the .pos and .neg files together, found " +
                     std::to_string(all.size()));
  // The split depends on the seed only.
  const std::vector<std::size_t> order =
      random_permutation(all.size(), RandomStream(seed, RandomPurpose::text_split, 0, 0));
  TextSplits s;
  append(s.train, all, order, 0, kTrain);
  append(s.validation, all, order, kTrain, kTrain + kValidation);
  append(s.test, all, order, kTrain + kValidation, all.size());
  return s;
}

PixelSequences read_fashion_mnist(const std::string& directory, const std::string& split,
                                  int levels, int first_token, std::size_t limit) {
  if (split != "train" && split != "test")
    throw InputError("fashion-mnist split must be train or test");
  const std::string prefix = directory + "/" + (split == "train" ? "train" : "t10k");
  const std::string image_path = prefix + "-images-idx3-ubyte.gz",
                    label_path = prefix + "-labels-idx1-ubyte.gz";
  const IdxArray images = read_idx(image_path), labels = read_idx(label_path);
  if (images.shape.size() != 3 || labels.shape.size() != 1 || images.shape[0] != labels.shape[0])
    throw InputError(image_path + ": expected (n, h, w) images matching the n labels of " +
                     label_path);
  const std::size_t n = limit ? std::min<std::size_t>(limit, images.shape[0]) : images.shape[0];
  const std::size_t pixels = static_cast<std::size_t>(images.shape[1] * images.shape[2]);
  PixelSequences out;
  out.tokens.resize(n);
  out.labels.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    out.tokens[i].resize(pixels);
    for (std::size_t p = 0; p < pixels; ++p)
      out.tokens[i][p] = first_token + images.data[i * pixels + p] * levels / 256;
    out.labels[i] = labels.data[i];
    if (out.labels[i] > 9)
      throw InputError(label_path + ": label " + std::to_string(out.labels[i]) + " > 9");
  }
  return out;
}

}  // namespace cpm
