// Data set loaders: the real SST-2 and Rotten Tomatoes files of ../shared/data, QQP and malformed
// rows from fixtures written here, Fashion-MNIST pixel sequences when the package is installed.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <numeric>

#include "io/input_error.hpp"
#include "io/text_datasets.hpp"
#include "tests/data_sets.hpp"

namespace cpm {
namespace {

const std::string kData = CPM_DATA_DIR;

std::string fixture(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() / ("cpm_text_datasets_" + name);
  std::ofstream(path) << text;
  return path.string();
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(TextDatasets, Sst2DevHasTheGlueCounts) {
  CPM_SKIP_WITHOUT_DATA_SET("sst2");
  const TextExamples dev = read_sst2_tsv(kData + "/sst2/dev.tsv");
  ASSERT_EQ(dev.size(), 872u);
  EXPECT_EQ(std::accumulate(dev.labels.begin(), dev.labels.end(), 0), 444);
  EXPECT_FALSE(dev.has_pairs());
}

TEST(TextDatasets, MalformedRowsNameTheFileAndLine) {
  const std::string bad_label =
      fixture("bad_label.tsv", "sentence\tlabel\ngood film\t1\nbad film\t2\n");
  EXPECT_NE(
      error_of([&] { read_sst2_tsv(bad_label); }).find(bad_label + ":3: label must be 0 or 1"),
      std::string::npos);
  const std::string bad_fields =
      fixture("bad_fields.tsv", "sentence\tlabel\nfine\t0\nfine\t0\nno label here\n");
  EXPECT_NE(
      error_of([&] { read_sst2_tsv(bad_fields); }).find(":4: expected 2 tab-separated fields"),
      std::string::npos);
  const std::string bad_header = fixture("bad_header.tsv", "text\tlabel\nfine\t0\n");
  EXPECT_NE(error_of([&] { read_sst2_tsv(bad_header); }).find(":1: header"), std::string::npos);
  EXPECT_NE(error_of([&] { read_sst2_tsv("/nonexistent/sst2.tsv"); }).find("cannot open"),
            std::string::npos);
}

TEST(TextDatasets, QqpFixtureGivesSentencePairs) {
  const std::string path =
      fixture("qqp.tsv",
              "id\tqid1\tqid2\tquestion1\tquestion2\tis_duplicate\n"
              "0\t1\t2\tHow do I learn C++?\tWhat is the best way to learn C++?\t1\n"
              "1\t3\t4\tWhy is the sky blue?\tHow tall is Everest?\t0\n");
  const TextExamples q = read_qqp_tsv(path);
  ASSERT_EQ(q.size(), 2u);
  EXPECT_TRUE(q.has_pairs());
  EXPECT_EQ(q.pair[1], "How tall is Everest?");
  EXPECT_EQ(q.labels, (std::vector<int>{1, 0}));
  const std::string bad = fixture(
      "qqp_bad.tsv", "id\tqid1\tqid2\tquestion1\tquestion2\tis_duplicate\n0\t1\t2\ta\tb\tyes\n");
  EXPECT_NE(error_of([&] { read_qqp_tsv(bad); }).find(":2: label must be 0 or 1"),
            std::string::npos);
}

TEST(TextDatasets, RottenTomatoesSeededSplitIs8530And1066And1066) {
  CPM_SKIP_WITHOUT_DATA_SET("rotten_tomatoes");
  const std::string dir = kData + "/rotten_tomatoes/";
  const TextSplits a = read_rotten_tomatoes(dir + "rt-polarity.pos", dir + "rt-polarity.neg", 1);
  const TextSplits b = read_rotten_tomatoes(dir + "rt-polarity.pos", dir + "rt-polarity.neg", 1);
  const TextSplits c = read_rotten_tomatoes(dir + "rt-polarity.pos", dir + "rt-polarity.neg", 2);
  EXPECT_EQ(a.train.size(), 8530u);
  EXPECT_EQ(a.validation.size(), 1066u);
  EXPECT_EQ(a.test.size(), 1066u);
  EXPECT_EQ(a.test.text, b.test.text);
  EXPECT_NE(a.test.text, c.test.text);
  const int positives = std::accumulate(a.train.labels.begin(), a.train.labels.end(), 0) +
                        std::accumulate(a.validation.labels.begin(), a.validation.labels.end(), 0) +
                        std::accumulate(a.test.labels.begin(), a.test.labels.end(), 0);
  EXPECT_EQ(positives, 5331);
}

TEST(TextDatasets, FashionMnistImagesBecome784PixelTokens) {
  const std::string dir = "/usr/share/datasets/fashion-mnist";
  if (!std::filesystem::exists(dir + "/t10k-images-idx3-ubyte.gz"))
    GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  const PixelSequences p = read_fashion_mnist(dir, "test", 16, 3, 5);
  ASSERT_EQ(p.tokens.size(), 5u);
  for (const auto& t : p.tokens) {
    ASSERT_EQ(t.size(), 784u);
    for (int v : t) {
      EXPECT_GE(v, 3);
      EXPECT_LT(v, 19);
    }
  }
  EXPECT_EQ(p.labels[0], 9);  // the first test image is an ankle boot
}

}  // namespace
}  // namespace cpm
