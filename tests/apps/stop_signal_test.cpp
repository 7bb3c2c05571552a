// A clean stop: SIGTERM during `cpm run` stops it at the next particle step with a last frame
// there, keeps every frame, prints one line saying how to continue and exits with 128 + 15; the
// restart from that run.h5 ends bit for bit where an uninterrupted run ends. A second signal
// stops at once (a minimisation, which is not stopped between its iterations). During
// `cpm ldp` and `cpm converge` the replicas under way finish and the finished ones are saved; the
// restart writes the tables an uninterrupted study writes, byte for byte. During `cpm train` the
// step under way finishes and the model and optimiser state are saved; `--restart` ends with the
// parameters, metrics and training log of an uninterrupted run, and a comparison experiment of
// several runs ends with the tables of an uninterrupted one.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <sstream>
#include <thread>
#include <vector>

#include "io/h5md_reader.hpp"
#include "io/model_checkpoint.hpp"
#include "tests/stopped_command.hpp"

namespace cpm {
namespace {

using testing::fresh_directory;
using testing::read_file;
using testing::run_cpm;
using testing::start_cpm;
using testing::stop_line;
using testing::stopped_by_sigterm;
using testing::table_without;
using testing::wait_for;
using testing::wait_for_text;
using testing::write_file;

std::string config(const std::filesystem::path& out, int n = 400, int outputs = 400) {
  return "[particles]\nn = " + std::to_string(n) +
         "\nseed = 2\n[domain]\nkind = \"ball\"\ncentre = [0.0, 0.0]\n"
         "radius = 2.0\n[interaction]\nkernel = \"log\"\n[initial]\nlaw = \"gaussian\"\n"
         "std = 0.5\n[dynamics]\nbeta = 50.0\nstep = 1e-3\nt_end = 4.0\noutputs = " +
         std::to_string(outputs) + "\n[output]\ndirectory = \"" + out.string() + "\"\n";
}

// Particles of a run of about five seconds on one core (config's 4,000 steps), and of a
// minimisation of a few seconds.
constexpr int kLongRunParticles = 3000;
constexpr int kMinimisedParticles = 3000;

pid_t start_run(const std::filesystem::path& toml, const std::filesystem::path& err,
                bool progress = false) {
  return start_cpm("run", toml, err, progress);
}

// Runs dir/stopped.toml, sends SIGTERM `delay` after its loop started, expects exit 128 + 15 and
// returns the run's standard error.
std::string sigterm_run_after(const std::filesystem::path& dir, std::chrono::milliseconds delay) {
  const pid_t pid = start_run(dir / "stopped.toml", dir / "err.txt");
  EXPECT_GT(pid, 0);
  EXPECT_TRUE(wait_for(dir / "stopped" / "run_info.txt"));
  std::this_thread::sleep_for(delay);
  kill(pid, SIGTERM);
  int status = 0;
  waitpid(pid, &status, 0);
  const std::string err = read_file(dir / "err.txt");
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 128 + SIGTERM) << err;
  return err;
}

// Runs `whole_config` (the stopped run's configuration writing to dir/whole) uninterrupted and
// the restart from dir/stopped/run.h5; expects both to end on the same step with the same bits,
// and returns the continued run.
H5mdRun expect_restart_ends_as_the_whole_run(const std::filesystem::path& dir,
                                             const std::string& whole_config) {
  write_file(dir / "whole.toml", whole_config);
  EXPECT_EQ(run_cpm("run " + (dir / "whole.toml").string() + " --quiet").exit_code, 0);
  const auto continued =
      run_cpm("run " + (dir / "stopped.toml").string() + " --quiet --restart " +
              (dir / "stopped" / "run.h5").string() + " --output " + (dir / "continued").string());
  EXPECT_EQ(continued.exit_code, 0) << continued.standard_error;
  const H5mdRun whole = read_h5md((dir / "whole" / "run.h5").string());
  const H5mdRun rest = read_h5md((dir / "continued" / "run.h5").string());
  EXPECT_EQ(whole.position_clock.step.back(), rest.position_clock.step.back());
  EXPECT_TRUE(whole.positions.back() == rest.positions.back());
  return rest;
}

TEST(StopSignal, SigtermStopsCleanlyAndTheRunContinuesBitForBit) {
  const auto dir = fresh_directory("stop_sigterm");
  write_file(dir / "stopped.toml", config(dir / "stopped"));
  const std::string err = sigterm_run_after(dir, std::chrono::milliseconds(200));
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  EXPECT_NE(err.find("stopped by SIGTERM; run.h5 holds every frame up to t = "), std::string::npos)
      << err;
  EXPECT_NE(err.find("--restart " + (dir / "stopped").string() + "/run.h5"), std::string::npos)
      << err;
  const H5mdRun stopped = read_h5md((dir / "stopped" / "run.h5").string());
  ASSERT_FALSE(stopped.positions.empty());
  EXPECT_LT(stopped.position_clock.time.back(), 4.0);
  expect_restart_ends_as_the_whole_run(dir, config(dir / "whole"));
}

// One output interval of seconds: SIGTERM two seconds in stops the run at the step under way,
// not at the interval's end (the last frame lies strictly inside it), and the restart from that
// frame ends bit for bit where the uninterrupted run ends.
TEST(StopSignal, SigtermInsideALongOutputIntervalStopsAtTheNextStep) {
  const auto dir = fresh_directory("stop_prompt");
  const double t_end = 4.0;
  write_file(dir / "stopped.toml", config(dir / "stopped", kLongRunParticles, 1));
  const std::string err = sigterm_run_after(dir, std::chrono::seconds(2));
  const H5mdRun stopped = read_h5md((dir / "stopped" / "run.h5").string());
  ASSERT_EQ(stopped.positions.size(), 2u) << err;  // t = 0 and the stop
  const double stop_time = stopped.position_clock.time.back();
  EXPECT_GT(stop_time, 0.0);
  EXPECT_LT(stop_time, t_end);
  EXPECT_NE(err.find("run.h5 holds every frame up to t = "), std::string::npos) << err;
  const H5mdRun rest =
      expect_restart_ends_as_the_whole_run(dir, config(dir / "whole", kLongRunParticles, 1));
  ASSERT_FALSE(rest.position_clock.time.empty());
  EXPECT_EQ(rest.position_clock.time.front(), stop_time);
  std::filesystem::remove_all(dir);
}

// A run spread over MPI ranks: SIGTERM to the ranks (what a batch system's cancel sends; Open
// MPI's mpirun itself kills its ranks on SIGTERM) stops every rank at the same step, the first
// rank saying how to continue; the run continues on another rank count to the particles of an
// uninterrupted run (to rounding: the sums run in another order over ranks).
TEST(StopSignal, SigtermToTheRanksStopsASpreadRunThatContinuesOnAnotherRankCount) {
  const auto dir = fresh_directory("stop_ranks");
  // 500 steps, a frame after each (about 2 s over 2 ranks).
  auto short_run = [](const std::filesystem::path& out) {
    std::string text = config(out, 200, 500);
    return text.replace(text.find("t_end = 4.0"), 11, "t_end = 0.5");
  };
  write_file(dir / "stopped.toml", short_run(dir / "stopped"));
  const std::string binary = CPM_BINARY, toml = (dir / "stopped.toml").string();
  std::vector<std::string> words = {"/usr/bin/env",
                                    "-i",
                                    "PATH=/usr/bin:/bin",
                                    "OMPI_ALLOW_RUN_AS_ROOT=1",
                                    "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
                                    "OMP_NUM_THREADS=1",
                                    "mpirun",
                                    "--oversubscribe",
                                    "-np",
                                    "2",
                                    binary,
                                    "run",
                                    toml,
                                    "--quiet"};
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  const std::string err_path = (dir / "err.txt").string();
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  pid_t pid = -1;
  ASSERT_EQ(posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&actions);
  ASSERT_TRUE(wait_for(dir / "stopped" / "run_info.txt"));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const std::string ranks = testing::read_command_output("pgrep -P " + std::to_string(pid));
  std::istringstream children(ranks);
  int signalled = 0;
  for (pid_t child; children >> child; ++signalled) kill(child, SIGTERM);
  EXPECT_EQ(signalled, 2) << ranks;
  int status = 0;
  waitpid(pid, &status, 0);
  const std::string err = read_file(dir / "err.txt");
  ASSERT_TRUE(WIFEXITED(status)) << err;
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGTERM) << err;
  std::size_t lines = 0;
  for (auto at = err.find("cpm: "); at != std::string::npos; at = err.find("cpm: ", at + 1))
    ++lines;
  EXPECT_EQ(lines, 1u) << err;
  EXPECT_NE(err.find("stopped by SIGTERM; run.h5 holds every frame up to t = "), std::string::npos)
      << err;

  write_file(dir / "whole.toml", short_run(dir / "whole"));
  ASSERT_EQ(run_cpm("run " + (dir / "whole.toml").string() + " --quiet").exit_code, 0);
  const auto continued = testing::run_cpm_mpi(3, "run " + toml + " --quiet --restart " +
                                                     (dir / "stopped" / "run.h5").string() +
                                                     " --output " + (dir / "continued").string());
  ASSERT_EQ(continued.exit_code, 0) << continued.standard_error;
  const H5mdRun whole = read_h5md((dir / "whole" / "run.h5").string());
  const H5mdRun rest = read_h5md((dir / "continued" / "run.h5").string());
  EXPECT_EQ(whole.position_clock.step.back(), rest.position_clock.step.back());
  EXPECT_LT((whole.positions.back() - rest.positions.back()).cwiseAbs().maxCoeff(), 1e-9);
  std::filesystem::remove_all(dir);
}

TEST(StopSignal, ASecondSignalStopsAtOnce) {
  // A minimisation of seconds: the first signal would wait for it to converge.
  const auto dir = fresh_directory("stop_twice");
  std::string minimise = config(dir / "out", kMinimisedParticles, 1);
  minimise.replace(minimise.find("beta = 50.0\nstep = 1e-3"), 23,
                   "beta = \"inf\"\nintegrator = \"minimize\"");
  write_file(dir / "run.toml", minimise);
  const pid_t pid = start_run(dir / "run.toml", dir / "err.txt", true);
  ASSERT_GT(pid, 0);
  ASSERT_TRUE(wait_for(dir / "out" / "run_info.txt"));  // minimising
  kill(pid, SIGTERM);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  kill(pid, SIGTERM);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status)) << read_file(dir / "err.txt");
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
}

// A study of `replicas` replicas per N that takes a few seconds on one core.
std::string study_config(const std::string& command, const std::filesystem::path& out) {
  const std::string model =
      "[particles]\nseed = 4\n[domain]\nkind = \"ball\"\ncentre = [0.0]\nradius = 3.0\n"
      "[potential]\nkind = \"quadratic\"\nstrength = 1.0\n[interaction]\nkernel = "
      "\"quadratic\"\nkappa = 1.0\nlambda = 1.0\n[initial]\nlaw = \"gaussian\"\n"
      "centre = [0.0]\nstd = 0.5\n[dynamics]\nbeta = 10.0\nintegrator = \"langevin\"\n"
      "step = 1e-3\nt_end = 1.0\n";
  const std::string study =
      command == "ldp"
          ? "[ldp]\nns = [100, 200]\nreplicas = 60\nstatistic = \"mean\"\n"
            "deltas = [0.05, 0.1]\n"
          : "outputs = 2\n[grid]\ncells = [64]\n[convergence]\nn_min = 100\nn_max = 200\n"
            "n_count = 2\nreplicas = 60\n";
  return model + study + "[output]\ndirectory = \"" + out.string() + "\"\n";
}

// SIGTERM once the study is 10 % through its replicas; then the restart it names, and the same
// study uninterrupted: the tables `files` must be the same bytes.
void expect_study_continues(const std::string& command, const std::string& progress_label,
                            const std::vector<std::string>& files) {
  const auto dir = fresh_directory("stop_" + command);
  write_file(dir / "study.toml", study_config(command, dir / "stopped"));
  const std::string err = stopped_by_sigterm(command, dir / "study.toml", progress_label);
  ASSERT_FALSE(err.empty());
  const std::string checkpoint = (dir / "stopped" / "replicas.checkpoint").string();
  const std::string last_line = stop_line(err);
  EXPECT_NE(last_line.find(" replicas saved in " + checkpoint + "; continue with: cpm " + command),
            std::string::npos)
      << err;
  EXPECT_NE(last_line.find("--restart " + checkpoint), std::string::npos) << err;
  EXPECT_FALSE(std::filesystem::exists(dir / "stopped" / files.front()));

  const auto continued =
      run_cpm(command + " " + (dir / "study.toml").string() + " --quiet --restart " + checkpoint);
  ASSERT_EQ(continued.exit_code, 0) << continued.standard_error;
  EXPECT_FALSE(std::filesystem::exists(checkpoint));  // a finished study keeps no checkpoint
  const auto whole = run_cpm(command + " " + (dir / "study.toml").string() + " --quiet --output " +
                             (dir / "whole").string());
  ASSERT_EQ(whole.exit_code, 0) << whole.standard_error;
  for (const std::string& file : files) {
    EXPECT_EQ(read_file(dir / "stopped" / file), read_file(dir / "whole" / file)) << file;
    EXPECT_FALSE(read_file(dir / "whole" / file).empty()) << file;
  }
}

TEST(StopSignal, SigtermStopsALdpStudyAndTheRestartWritesTheSameTables) {
  expect_study_continues("ldp", "cpm ldp", {"ldp_tails.csv", "ldp_statistics.csv"});
}

TEST(StopSignal, SigtermStopsAConvergenceStudyAndTheRestartWritesTheSameTables) {
  expect_study_continues("converge", "cpm converge: particles",
                         {"convergence.csv", "convergence_rates.csv"});
}

TEST(StopSignal, AReplicaCheckpointOfAnotherStudyIsRefusedInOneLine) {
  const auto dir = fresh_directory("stop_foreign");
  write_file(dir / "ldp.toml", study_config("ldp", dir / "a"));
  write_file(dir / "replicas.checkpoint",
             "cpm replica checkpoint 1\nstudy converge\nfingerprint 1\ntable 120 1\n");
  const auto r = run_cpm("ldp " + (dir / "ldp.toml").string() + " --quiet --restart " +
                         (dir / "replicas.checkpoint").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.standard_error.find("the replicas of another study"), std::string::npos)
      << r.standard_error;
  write_file(dir / "replicas.checkpoint", "cpm replica checkpoint 1\nstudy ldp\n");
  EXPECT_EQ(run_cpm("ldp " + (dir / "ldp.toml").string() + " --quiet --restart " +
                    (dir / "replicas.checkpoint").string())
                .exit_code,
            2);
}

// A training run of a few seconds on a data folder written here (SST-2's TSV layout), Phase A
// after the first epoch.
std::string train_config(const std::filesystem::path& dir, const std::filesystem::path& out) {
  std::string rows = "sentence\tlabel\n";
  for (int i = 0; i < 4000; ++i)
    rows += std::string(i % 2 ? "a fine warm film " : "a dull cold film ") +
            std::to_string(i % 37) + (i % 3 ? " indeed" : "") + "\t" + std::to_string(i % 2) + "\n";
  std::filesystem::create_directories(dir / "data");
  write_file(dir / "data" / "train.tsv", rows);
  write_file(dir / "data" / "dev.tsv", rows.substr(0, rows.find('\n', 2000) + 1));
  return "[data]\ndataset = \"sst2\"\nmax_length = 24\ndirectory = \"" + (dir / "data").string() +
         "\"\n[model]\nd_model = 64\nheads = 2\nlayers = 2\nd_ff = 128\nfeatures = 16\n"
         "attention = \"kernel-favor\"\n[training]\nepochs = 3\nbatch_size = 16\n"
         "warmup_steps = 5\n[phase_a]\nwarmup_epochs = 1\nsequences = 64\n"
         "[phase_a.dynamics]\nsteps = 5\n[output]\ndirectory = \"" +
         out.string() + "\"\n";
}

// The training log without its timing column.
std::string log_without_timing(const std::filesystem::path& file) {
  std::istringstream in(read_file(file));
  std::string kept;
  for (std::string line; std::getline(in, line);) kept += line.substr(0, line.rfind(',')) + "\n";
  return kept;
}

TEST(StopSignal, SigtermStopsATrainingRunAndTheRestartEndsBitForBit) {
  const auto dir = fresh_directory("stop_train");
  write_file(dir / "train.toml", train_config(dir, dir / "stopped"));
  const std::string err = stopped_by_sigterm("train", dir / "train.toml", "cpm train");
  ASSERT_FALSE(err.empty());
  const std::string checkpoint = (dir / "stopped" / "training_checkpoint.h5").string();
  EXPECT_NE(err.find("saved in " + checkpoint + "; continue with: cpm train"), std::string::npos)
      << err;
  EXPECT_FALSE(std::filesystem::exists(dir / "stopped" / "model.h5"));

  const auto continued =
      run_cpm("train " + (dir / "train.toml").string() + " --quiet --restart " + checkpoint);
  ASSERT_EQ(continued.exit_code, 0) << continued.standard_error;
  EXPECT_FALSE(std::filesystem::exists(checkpoint));
  const auto whole = run_cpm("train " + (dir / "train.toml").string() + " --quiet --output " +
                             (dir / "whole").string());
  ASSERT_EQ(whole.exit_code, 0) << whole.standard_error;
  const ModelCheckpoint a = load_model_checkpoint((dir / "stopped" / "model.h5").string());
  const ModelCheckpoint b = load_model_checkpoint((dir / "whole" / "model.h5").string());
  EXPECT_TRUE(a.parameters == b.parameters);
  EXPECT_TRUE(a.particles == b.particles);
  EXPECT_EQ(read_file(dir / "stopped" / "metrics.csv"), read_file(dir / "whole" / "metrics.csv"));
  EXPECT_EQ(log_without_timing(dir / "stopped" / "training_log.csv"),
            log_without_timing(dir / "whole" / "training_log.csv"));
}

// A comparison experiment of two runs stopped inside the second: the first is kept in
// replicas.checkpoint, the second in its own training_checkpoint.h5; the restart ends with the
// tables and the models of an uninterrupted experiment.
TEST(StopSignal, SigtermStopsAComparisonExperimentAndTheRestartEndsBitForBit) {
  const auto dir = fresh_directory("stop_experiment");
  write_file(dir / "exp.toml", train_config(dir, dir / "stopped") +
                                   "[experiment]\nvariants = [\"vanilla-favor\", \"softmax\"]\n"
                                   "seeds = [3]\n");
  const std::string err = stopped_by_sigterm("train", dir / "exp.toml", "cpm train softmax");
  ASSERT_FALSE(err.empty());
  const std::string checkpoint = (dir / "stopped" / "replicas.checkpoint").string();
  EXPECT_NE(
      stop_line(err).find("1 of 2 runs saved in " + checkpoint + "; continue with: cpm train " +
                          (dir / "exp.toml").string() + " --output " + (dir / "stopped").string() +
                          " --restart " + checkpoint),
      std::string::npos)
      << err;
  const auto second = dir / "stopped" / "sst2" / "softmax" / "seed_3";
  EXPECT_TRUE(std::filesystem::exists(second / "training_checkpoint.h5"));
  EXPECT_FALSE(std::filesystem::exists(second / "model.h5"));

  const auto continued =
      run_cpm("train " + (dir / "exp.toml").string() + " --quiet --restart " + checkpoint);
  ASSERT_EQ(continued.exit_code, 0) << continued.standard_error;
  EXPECT_FALSE(std::filesystem::exists(checkpoint));
  EXPECT_FALSE(std::filesystem::exists(second / "training_checkpoint.h5"));
  const auto whole = run_cpm("train " + (dir / "exp.toml").string() + " --quiet --output " +
                             (dir / "whole").string());
  ASSERT_EQ(whole.exit_code, 0) << whole.standard_error;
  EXPECT_EQ(read_file(dir / "stopped" / "comparison.md"),
            read_file(dir / "whole" / "comparison.md"));
  EXPECT_EQ(log_without_timing(dir / "stopped" / "comparison_runs.csv"),
            log_without_timing(dir / "whole" / "comparison_runs.csv"));
  for (const std::string arm : {"vanilla-favor", "softmax"}) {
    const auto run = std::filesystem::path("sst2") / arm / "seed_3";
    const ModelCheckpoint a = load_model_checkpoint((dir / "stopped" / run / "model.h5").string());
    const ModelCheckpoint b = load_model_checkpoint((dir / "whole" / run / "model.h5").string());
    EXPECT_TRUE(a.parameters == b.parameters) << arm;
    EXPECT_EQ(read_file(dir / "stopped" / run / "metrics.csv"),
              read_file(dir / "whole" / run / "metrics.csv"))
        << arm;
  }
}

// The paired protocol stopped in its second run (a control): the first (both arms of a map) is
// kept in replicas.checkpoint; the restart trains the control again and writes the tables of an
// uninterrupted experiment.
TEST(StopSignal, SigtermStopsAPairedExperimentAndTheRestartWritesTheSameTables) {
  const auto dir = fresh_directory("stop_paired");
  std::string config = train_config(dir, dir / "stopped");
  config.replace(config.find("epochs = 3"), 10, "epochs = 1");
  write_file(dir / "paired.toml", config +
                                      "[experiment]\nprotocol = \"paired\"\n"
                                      "variants = [\"kernel-favor\", \"uniform\"]\nseeds = [3]\n"
                                      "bootstrap_samples = 100\n");
  const std::string err =
      stopped_by_sigterm("train", dir / "paired.toml", "== sst2 seed 3 uniform");
  ASSERT_FALSE(err.empty());
  const std::string checkpoint = (dir / "stopped" / "replicas.checkpoint").string();
  EXPECT_NE(
      stop_line(err).find("1 of 2 runs saved in " + checkpoint + "; continue with: cpm train " +
                          (dir / "paired.toml").string() + " --output " +
                          (dir / "stopped").string() + " --restart " + checkpoint),
      std::string::npos)
      << err;

  const auto continued =
      run_cpm("train " + (dir / "paired.toml").string() + " --quiet --restart " + checkpoint);
  ASSERT_EQ(continued.exit_code, 0) << continued.standard_error;
  EXPECT_FALSE(std::filesystem::exists(checkpoint));
  const auto whole = run_cpm("train " + (dir / "paired.toml").string() + " --quiet --output " +
                             (dir / "whole").string());
  ASSERT_EQ(whole.exit_code, 0) << whole.standard_error;
  // Wall times, and two ratios of a residual at the rounding level (~1e-16), whose last digits
  // follow the summation order of the least-squares fit.
  const std::vector<std::string> timing = {"train_seconds", "phase_a_seconds", "seconds",
                                           "linear_fit_residual", "unabsorbed_fraction"};
  for (const std::string file : {"paired_runs.csv", "phase_a_runs.csv"})
    EXPECT_EQ(table_without(dir / "stopped" / file, timing),
              table_without(dir / "whole" / file, timing))
        << file;
  // paired.md up to its Phase A table (whose last column is a wall time): McNemar's counts come
  // from the restored arms' per-example predictions.
  const auto tables = [](const std::filesystem::path& file) {
    const std::string text = read_file(file);
    return text.substr(0, text.find("| map | alignment after"));
  };
  EXPECT_EQ(tables(dir / "stopped" / "paired.md"), tables(dir / "whole" / "paired.md"));
  EXPECT_NE(tables(dir / "whole" / "paired.md").find("McNemar"), std::string::npos);
  EXPECT_EQ(read_file(dir / "stopped" / "sst2/seed_3/uniform/predictions.csv"),
            read_file(dir / "whole" / "sst2/seed_3/uniform/predictions.csv"));
}

}  // namespace
}  // namespace cpm
