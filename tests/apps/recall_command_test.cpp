// `cpm recall` on the recall tasks end to end at a tiny size: the tables and the figure, and bad
// input that stops with exit code 2 before anything is written.
#include <gtest/gtest.h>

#include <algorithm>

#include <filesystem>
#include <map>
#include <sstream>
#include <vector>

#include "tests/command_runner.hpp"

namespace cpm {
namespace {

using testing::fresh_directory;
using testing::read_file;
using testing::run_cpm;
using testing::write_file;

std::string tiny(const std::string& data, const std::string& variants,
                 const std::filesystem::path& out) {
  std::ostringstream c;
  c << "[data]\n"
    << data << "train_examples = 256\nvalidation_examples = 32\ntest_examples = 32\n"
    << "[model]\nd_model = 16\nfeatures = [8]\n"
    << "[training]\nsteps = 40\nbatch_size = 16\neval_every = 20\n"
    << "[experiment]\nvariants = [" << variants << "]\nseeds = [1]\n"
    << "[output]\ndirectory = \"" << out.string() << "\"\n";
  return c.str();
}

TEST(RecallCommand, RetrievalWritesTheCapacityTableSummaryAndFigure) {
  const auto dir = fresh_directory("recall_retrieval");
  write_file(dir / "r.toml",
             tiny("dataset = \"associative_retrieval\"\npairs = [4, 8]\n",
                  "\"softmax\", \"uniform\", \"vanilla-favor\", \"trainable-favor\", \"dpfp1\"",
                  dir / "out"));
  const auto r = run_cpm("recall " + (dir / "r.toml").string());
  ASSERT_EQ(r.exit_code, 0) << r.standard_error;
  const std::string table = read_file(dir / "out" / "capacity.csv");
  EXPECT_EQ(table.rfind("task,variant,feature_budget,feature_dim,bandwidth,target,learning_rate,"
                        "seed,size,pairs,accuracy,loss,",
                        0),
            0u);
  std::istringstream lines(table);
  int rows = -1;
  for (std::string line; std::getline(lines, line);) ++rows;
  EXPECT_EQ(rows, 2 * 5);  // two sizes, five arms, one seed
  EXPECT_NE(table.find("associative_retrieval,vanilla-favor,8,8,1,,0.001,1,4,4,"),
            std::string::npos);
  EXPECT_NE(table.find("associative_retrieval,dpfp1,0,32,1,,0.001,1,8,8,"),
            std::string::npos);  // D_φ = 2·1·16
  const std::string summary = read_file(dir / "out" / "summary.md");
  EXPECT_NE(summary.find("Validity gate"), std::string::npos);
  EXPECT_NE(summary.find("Capacity"), std::string::npos);
}

// With normalise_keys every key's features have one length: the capacity diagnostic's spread and
// CV of ‖φ(k)‖ vanish, for the fixed draw and for the particles Phase A aligned on the weights of
// normalised keys.
TEST(RecallCommand, NormalisedKeysHaveOneLength) {
  const auto dir = fresh_directory("recall_normalised");
  std::string text = tiny("dataset = \"associative_retrieval\"\npairs = [4]\n",
                          "\"vanilla-favor\", \"kernel-favor\", \"dpfp1\"", dir / "out");
  text.replace(text.find("features = [8]"), 14, "features = [8]\nnormalise_keys = \"l2\"");
  text += "[phase_a]\nafter_steps = 20\nexamples = 16\n[phase_a.dynamics]\nmax_iterations = 5\n";
  write_file(dir / "n.toml", text);
  const auto r = run_cpm("recall " + (dir / "n.toml").string() + " --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.standard_error;
  std::istringstream lines(read_file(dir / "out" / "capacity.csv"));
  std::string line;
  std::getline(lines, line);
  std::vector<std::string> header;
  for (std::istringstream h(line); std::getline(h, line, ',');) header.push_back(line);
  const auto column = [&](const std::string& name) {
    return std::find(header.begin(), header.end(), name) - header.begin();
  };
  int rows = 0;
  while (std::getline(lines, line)) {
    std::vector<std::string> f;
    for (std::istringstream fields(line); std::getline(fields, line, ',');) f.push_back(line);
    EXPECT_NEAR(std::stod(f[column("norm_spread")]), 0.0, 1e-6) << f[1];
    EXPECT_NEAR(std::stod(f[column("norm_cv")]), 0.0, 1e-6) << f[1];
    EXPECT_GT(std::stod(f[column("effective_temperature")]), 0.0) << f[1];
    if (f[1] == "kernel-favor") {  // Phase A lowered the KL of the normalised weights
      EXPECT_LT(std::stod(f[column("phase_a_kl_after")]),
                std::stod(f[column("phase_a_kl_before")]));
    }
    ++rows;
  }
  EXPECT_EQ(rows, 3);
}

// The rows of capacity.csv as fields, the header first.
std::vector<std::vector<std::string>> table_rows(const std::string& table) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream lines(table);
  for (std::string line; std::getline(lines, line);) {
    rows.emplace_back();
    std::istringstream fields(line);
    for (std::string f; std::getline(fields, f, ',');) rows.back().push_back(f);
    if (line.back() == ',') rows.back().emplace_back();
  }
  return rows;
}

// [model] normalise_keys as a list: every arm with a feature map runs each normalisation, softmax
// and uniform once; each row records its normalisation and the summary names the arm with it. A
// study of the build before the column (one normalise_keys in its settings, none in its records)
// continues with --restart, its runs kept under that normalisation.
TEST(RecallCommand, EveryArmWithFeaturesRunsEachNormalisationAndOlderStudiesRestart) {
  const auto dir = fresh_directory("recall_normalisations");
  const std::string data = "dataset = \"associative_retrieval\"\npairs = [4]\n";
  const std::string arms = "\"softmax\", \"uniform\", \"vanilla-favor\", \"dpfp1\"";
  auto with_keys = [&](const std::string& keys, const std::filesystem::path& out) {
    std::string text = tiny(data, arms, out);
    return text.replace(text.find("features = [8]"), 14,
                        "features = [8]\nnormalise_keys = " + keys);
  };
  write_file(dir / "n.toml", with_keys("[\"none\", \"l2\"]", dir / "both"));
  const auto r = run_cpm("recall " + (dir / "n.toml").string() + " --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.standard_error;
  auto rows = table_rows(read_file(dir / "both" / "capacity.csv"));
  const auto column = [&](const std::string& name) {
    return std::find(rows[0].begin(), rows[0].end(), name) - rows[0].begin();
  };
  ASSERT_LT(column("normalisation"), static_cast<long>(rows[0].size()));
  EXPECT_EQ(rows[0].back(), "selected");
  std::map<std::string, int> runs;
  for (std::size_t i = 1; i < rows.size(); ++i)
    ++runs[rows[i][column("variant")] + " " + rows[i][column("normalisation")]];
  EXPECT_EQ(runs, (std::map<std::string, int>{{"softmax none", 1},
                                              {"uniform none", 1},
                                              {"vanilla-favor none", 1},
                                              {"vanilla-favor l2", 1},
                                              {"dpfp1 none", 1},
                                              {"dpfp1 l2", 1}}));
  const std::string summary = read_file(dir / "both" / "summary.md");
  EXPECT_NE(summary.find("| vanilla-favor [l2] (D=8) |"), std::string::npos) << summary;
  EXPECT_NE(summary.find("| dpfp1 [l2] (D=32) |"), std::string::npos) << summary;
  EXPECT_NE(summary.find("| vanilla-favor (D=8) |"), std::string::npos) << summary;

  // A study of the build before: normalise_keys = "l2" alone, recorded in its settings and not in
  // its tables.
  write_file(dir / "old.toml", with_keys("\"l2\"", dir / "old"));
  ASSERT_EQ(run_cpm("recall " + (dir / "old.toml").string() + " --quiet").exit_code, 0);
  const auto recorded = table_rows(read_file(dir / "old" / "capacity.csv"));
  for (const std::string file : {"capacity.csv", "predictions.csv"}) {
    auto old_rows = table_rows(read_file(dir / "old" / file));
    const auto at =
        std::find(old_rows[0].begin(), old_rows[0].end(), "normalisation") - old_rows[0].begin();
    std::string text;
    for (auto& row : old_rows) {
      row.erase(row.begin() + at);
      for (std::size_t i = 0; i < row.size(); ++i) text += (i ? "," : "") + row[i];
      text += "\n";
    }
    write_file(dir / "old" / file, text);
  }
  std::string settings = read_file(dir / "old" / "study_settings.txt");
  settings.insert(settings.find("model.particle_init"), "model.normalise_keys = l2\n");
  write_file(dir / "old" / "study_settings.txt", settings);
  write_file(dir / "more.toml", with_keys("[\"l2\", \"l1\"]", dir / "old"));
  const auto more = run_cpm("recall " + (dir / "more.toml").string() + " --quiet --restart " +
                            (dir / "old").string());
  ASSERT_EQ(more.exit_code, 0) << more.standard_error;
  rows = table_rows(read_file(dir / "old" / "capacity.csv"));
  EXPECT_EQ(rows.size(), 1u + 2 + 2 * 2);  // softmax, uniform; two arms × l2, l1
  int kept = 0;
  for (std::size_t i = 1; i < rows.size(); ++i)
    for (std::size_t j = 1; j < recorded.size(); ++j)
      if (rows[i][column("variant")] == recorded[j][column("variant")] &&
          rows[i][column("normalisation")] == recorded[j][column("normalisation")]) {
        EXPECT_EQ(rows[i][column("seconds")], recorded[j][column("seconds")])
            << "run again: " << rows[i][column("variant")];
        ++kept;
      }
  EXPECT_EQ(kept, 4);  // softmax and uniform (none), vanilla-favor and dpfp1 (l2)
}

// QK normalisation end to end, on both tasks: the kernel arm's Phase A aligns the particles on
// the normalised, scaled queries and keys (a KL that drops), every arm with a feature map runs
// under "qk", and τ_eff reports the learned scale, which training moved from τ.
TEST(RecallCommand, QkNormalisationRunsEveryMapAndPhaseAOnBothTasks) {
  for (const char* data : {"dataset = \"associative_retrieval\"\npairs = [4]\n",
                           "dataset = \"mqar\"\nlengths = [16]\npairs = [2]\nvocabulary = 64\n"}) {
    const auto dir = fresh_directory("recall_qk");
    std::string text =
        tiny(data, "\"softmax\", \"vanilla-favor\", \"kernel-favor\", \"taylor\"", dir / "out");
    text.replace(text.find("features = [8]"), 14,
                 "features = [8]\nnormalise_keys = \"qk\"\nbandwidths = [0.5]");
    text += "[phase_a]\nafter_steps = 20\nexamples = 16\n[phase_a.dynamics]\nmax_iterations = 5\n";
    write_file(dir / "q.toml", text);
    const auto r = run_cpm("recall " + (dir / "q.toml").string() + " --quiet");
    ASSERT_EQ(r.exit_code, 0) << r.standard_error;
    auto rows = table_rows(read_file(dir / "out" / "capacity.csv"));
    const auto column = [&](const std::string& name) {
      return std::find(rows[0].begin(), rows[0].end(), name) - rows[0].begin();
    };
    ASSERT_EQ(rows.size(), 5u) << data;
    for (std::size_t i = 1; i < rows.size(); ++i) {
      const std::string arm = rows[i][column("variant")];
      EXPECT_EQ(rows[i][column("normalisation")], arm == "softmax" ? "none" : "qk") << arm;
      if (arm == "softmax") continue;
      EXPECT_GT(std::stod(rows[i][column("accuracy")]), 0.0) << arm;
      if (arm == "kernel-favor") {
        EXPECT_LT(std::stod(rows[i][column("phase_a_kl_after")]),
                  std::stod(rows[i][column("phase_a_kl_before")]))
            << data;
      }
      if (arm == "vanilla-favor") {  // the learned s, started at τ = 0.5
        EXPECT_NE(std::stod(rows[i][column("effective_bandwidth")]), 0.5) << data;
      }
    }
    EXPECT_NE(read_file(dir / "out" / "summary.md").find("kernel-favor [qk] (D=8)"),
              std::string::npos);
  }
}

TEST(RecallCommand, MqarTrainsTheCausalDecoder) {
  const auto dir = fresh_directory("recall_mqar");
  write_file(dir / "m.toml",
             tiny("dataset = \"mqar\"\nlengths = [16]\npairs = [2]\nvocabulary = 64\n",
                  "\"softmax\", \"vanilla-softmaxfeat\", \"elu\"", dir / "out"));
  const auto r = run_cpm("recall " + (dir / "m.toml").string());
  ASSERT_EQ(r.exit_code, 0) << r.standard_error;
  const std::string table = read_file(dir / "out" / "capacity.csv");
  EXPECT_NE(table.find("mqar,softmax,0,0,1,,0.001,1,16,2,"), std::string::npos);
  EXPECT_NE(table.find("mqar,elu,0,16,1,,0.001,1,16,2,"), std::string::npos);  // D_φ = d_head
}

// Every scale-sensitive arm runs each bandwidth of the grid and each kernel arm each target; one
// point per arm and size is selected on validation and reported; dpfp (homogeneous) runs once.
TEST(RecallCommand, EveryArmChoosesItsBandwidthAndTargetOnValidation) {
  const auto dir = fresh_directory("recall_grid");
  std::string text = tiny("dataset = \"associative_retrieval\"\npairs = [4, 6]\n",
                          "\"vanilla-favor\", \"kernel-favor\", \"dpfp1\"", dir / "out");
  text.replace(text.find("features = [8]"), 14, "features = [32]\nbandwidths = [0.5, 1.0]");
  text +=
      "[phase_a]\nafter_steps = 20\nexamples = 16\ntargets = [\"matching\", \"capacity\"]\n"
      "[phase_a.dynamics]\nmax_iterations = 5\n";
  write_file(dir / "g.toml", text);
  const auto r = run_cpm("recall " + (dir / "g.toml").string() + " --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.standard_error;
  std::istringstream lines(read_file(dir / "out" / "capacity.csv"));
  std::string line;
  std::getline(lines, line);
  ASSERT_EQ(line.substr(line.rfind(',') + 1), "selected");
  std::map<std::string, int> rows, selected;  // per arm and size
  while (std::getline(lines, line)) {
    std::vector<std::string> f;
    std::istringstream fields(line);
    for (std::string x; std::getline(fields, x, ',');) f.push_back(x);
    const std::string cell = f[1] + " S=" + f[8];
    ++rows[cell];
    selected[cell] += line.back() == '1';
  }
  EXPECT_EQ(rows["vanilla-favor S=4"], 2);  // τ = 0.5, 1
  EXPECT_EQ(rows["kernel-favor S=6"], 4);   // × matching, capacity
  EXPECT_EQ(rows["dpfp1 S=4"], 1);
  for (const auto& [cell, n] : selected) EXPECT_EQ(n, 1) << cell;
  const std::string summary = read_file(dir / "out" / "summary.md");
  EXPECT_NE(summary.find("Validated settings"), std::string::npos);
  EXPECT_NE(summary.find("kernel-favor (D=32), τ = 0.5, capacity"), std::string::npos);
  EXPECT_NE(summary.find("Capacity diagnostic"), std::string::npos);
  EXPECT_NE(summary.find("kernel-favor (D=32) vs dpfp1"), std::string::npos) << summary;
}

// A study continued with --restart from its folder keeps the finished runs and writes the tables
// of a study that ran at once; a restart may add arms and seeds, not change the training.
TEST(RecallCommand, ARestartedStudyWritesTheTablesOfAnUninterruptedOne) {
  const auto dir = fresh_directory("recall_restart");
  const std::string data = "dataset = \"associative_retrieval\"\npairs = [4]\n";
  const std::string all = "\"softmax\", \"vanilla-favor\", \"vanilla-favor@softmax\"";
  write_file(dir / "whole.toml", tiny(data, all, dir / "whole"));
  ASSERT_EQ(run_cpm("recall " + (dir / "whole.toml").string() + " --quiet").exit_code, 0);
  write_file(dir / "part.toml", tiny(data, "\"softmax\"", dir / "part"));
  ASSERT_EQ(run_cpm("recall " + (dir / "part.toml").string() + " --quiet").exit_code, 0);
  write_file(dir / "rest.toml", tiny(data, all, dir / "part"));
  const auto r = run_cpm("recall " + (dir / "rest.toml").string() + " --quiet --restart " +
                         (dir / "part").string());
  ASSERT_EQ(r.exit_code, 0) << r.standard_error;
  EXPECT_EQ(read_file(dir / "part" / "summary.md"), read_file(dir / "whole" / "summary.md"));
  auto without_seconds = [](const std::string& table) {  // column 16 is the wall time
    std::istringstream in(table);
    std::string out;
    for (std::string line; std::getline(in, line);) {
      std::size_t at = 0;
      for (int comma = 0; comma < 15; ++comma) at = line.find(',', at) + 1;
      out += line.substr(0, at) + line.substr(line.find(',', at)) + "\n";
    }
    return out;
  };
  EXPECT_EQ(without_seconds(read_file(dir / "part" / "capacity.csv")),
            without_seconds(read_file(dir / "whole" / "capacity.csv")));
  EXPECT_EQ(read_file(dir / "part" / "predictions.csv"),
            read_file(dir / "whole" / "predictions.csv"));

  std::string changed = tiny(data, all, dir / "part");
  changed.replace(changed.find("steps = 40"), 10, "steps = 60");
  write_file(dir / "changed.toml", changed);
  const auto refused = run_cpm("recall " + (dir / "changed.toml").string() + " --quiet --restart " +
                               (dir / "part").string());
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.standard_error.find("training.steps = 40"), std::string::npos)
      << refused.standard_error;
  write_file(dir / "part" / "predictions.csv",
             "variant,feature_budget,size,bandwidth,target,learning_rate,seed,correct\n"
             "softmax,0,4,1,,0.001,1,01x\n");
  const auto corrupt = run_cpm("recall " + (dir / "rest.toml").string() + " --quiet --restart " +
                               (dir / "part").string());
  EXPECT_EQ(corrupt.exit_code, 2);
  EXPECT_NE(corrupt.standard_error.find("predictions.csv: line 2"), std::string::npos)
      << corrupt.standard_error;
}

TEST(RecallCommand, BadInputStopsWithExitCodeTwoAndWritesNothing) {
  const auto dir = fresh_directory("recall_bad");
  const auto out = dir / "out";
  write_file(dir / "odd.toml",
             tiny("dataset = \"mqar\"\nlengths = [15]\npairs = [2]\n", "\"softmax\"", out));
  write_file(dir / "arm.toml",
             tiny("dataset = \"associative_retrieval\"\npairs = [4]\n", "\"kernel-rff\"", out));
  write_file(dir / "big.toml", tiny("dataset = \"associative_retrieval\"\npairs = [4]\n"
                                    "key_symbols = 3\n",
                                    "\"softmax\"", out));
  for (const char* name : {"odd.toml", "arm.toml", "big.toml"}) {
    const auto r = run_cpm("recall " + (dir / name).string());
    EXPECT_EQ(r.exit_code, 2) << name;
    EXPECT_EQ(r.standard_error.find('\n'), r.standard_error.size() - 1) << r.standard_error;
    EXPECT_FALSE(std::filesystem::exists(out)) << name;
  }
}

TEST(RecallCommand, OutputAndQuietFlagsRedirectAndSilence) {
  const auto dir = fresh_directory("recall_flags");
  write_file(dir / "r.toml", tiny("dataset = \"associative_retrieval\"\npairs = [4]\n",
                                  "\"softmax\", \"kernel-favor\"", dir / "configured"));
  const auto r = run_cpm("recall " + (dir / "r.toml").string() + " --quiet --output " +
                         (dir / "moved").string());
  ASSERT_EQ(r.exit_code, 0) << r.standard_error;
  EXPECT_TRUE(std::filesystem::exists(dir / "moved" / "capacity.csv"));
  EXPECT_FALSE(std::filesystem::exists(dir / "configured"));
  EXPECT_EQ(r.standard_error.find("elapsed"), std::string::npos) << r.standard_error;
  // The folder exists now: a second run needs --overwrite.
  EXPECT_EQ(run_cpm("recall " + (dir / "r.toml").string() + " --quiet --output " +
                    (dir / "moved").string())
                .exit_code,
            2);
  EXPECT_EQ(run_cpm("recall " + (dir / "r.toml").string() + " --quiet --overwrite --output " +
                    (dir / "moved").string())
                .exit_code,
            0);
}

}  // namespace
}  // namespace cpm
