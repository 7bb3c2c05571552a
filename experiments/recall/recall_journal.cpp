#include "experiments/recall/recall_journal.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>
#include <stdexcept>

#include "io/input_error.hpp"

namespace cpm {

namespace {

const char* const kTableHeader =
    "task,variant,feature_budget,feature_dim,bandwidth,target,learning_rate,seed,size,pairs,"
    "accuracy,loss,"
    "validation_accuracy,validation_loss,best_step,seconds,phase_a_kl_before,phase_a_kl_after,"
    "effective_bandwidth,margin,own_key_wins,norm_spread,coherence_mean,coherence_max,"
    "effective_rank,capacity_sequences,norm_cv,effective_temperature,normalisation,selected";
// The headers of earlier builds, whose rows still read: before the normalisation column (every
// run then has the study's one normalisation), and before that also without norm_cv and
// effective_temperature (those two not measured).
const char* const kTableHeaderWithoutNormalisation =
    "task,variant,feature_budget,feature_dim,bandwidth,target,learning_rate,seed,size,pairs,"
    "accuracy,loss,"
    "validation_accuracy,validation_loss,best_step,seconds,phase_a_kl_before,phase_a_kl_after,"
    "effective_bandwidth,margin,own_key_wins,norm_spread,coherence_mean,coherence_max,"
    "effective_rank,capacity_sequences,norm_cv,effective_temperature,selected";
const char* const kTableHeaderWithoutLengths =
    "task,variant,feature_budget,feature_dim,bandwidth,target,learning_rate,seed,size,pairs,"
    "accuracy,loss,"
    "validation_accuracy,validation_loss,best_step,seconds,phase_a_kl_before,phase_a_kl_after,"
    "effective_bandwidth,margin,own_key_wins,norm_spread,coherence_mean,coherence_max,"
    "effective_rank,capacity_sequences,selected";
const char* const kPredictionsHeader =
    "variant,feature_budget,size,bandwidth,target,learning_rate,seed,normalisation,correct";
const char* const kPredictionsHeaderWithoutNormalisation =
    "variant,feature_budget,size,bandwidth,target,learning_rate,seed,correct";

// Every double with the digits that read back to the same value.
std::string exact(double x) {
  char text[40];
  std::snprintf(text, sizeof text, "%.17g", x);
  return text;
}

std::string table_row(const RecallRun& r, const std::string& selected) {
  const CapacityDiagnostic& c = r.capacity;
  std::ostringstream o;
  o << name_of(r.task) << ',' << r.variant << ',' << r.feature_budget << ',' << r.feature_dim << ','
    << exact(r.setting.bandwidth) << ',' << name_of(r.setting.target) << ','
    << exact(r.setting.learning_rate) << ',' << r.seed << ',' << r.size << ',' << r.pairs << ','
    << exact(r.accuracy) << ',' << exact(r.loss) << ',' << exact(r.validation_accuracy) << ','
    << exact(r.validation_loss) << ',' << r.best_step << ',' << exact(r.seconds) << ','
    << exact(r.phase_a_kl_before) << ',' << exact(r.phase_a_kl_after) << ','
    << exact(r.effective_bandwidth) << ',' << exact(c.margin) << ',' << exact(c.own_key_wins) << ','
    << exact(c.norm_spread) << ',' << exact(c.coherence_mean) << ',' << exact(c.coherence_max)
    << ',' << exact(c.effective_rank) << ',' << c.sequences << ',' << exact(c.norm_cv) << ','
    << exact(c.effective_temperature) << ',' << name_of(r.normalisation) << ',' << selected << '\n';
  return o.str();
}

std::string predictions_row(const RecallRun& r) {
  std::string bits;
  bits.reserve(r.correct.size());
  for (bool right : r.correct) bits.push_back(right ? '1' : '0');
  std::ostringstream o;
  o << r.variant << ',' << r.feature_budget << ',' << r.size << ',' << exact(r.setting.bandwidth)
    << ',' << name_of(r.setting.target) << ',' << exact(r.setting.learning_rate) << ',' << r.seed
    << ',' << name_of(r.normalisation) << ',' << bits << '\n';
  return o.str();
}

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> fields;
  std::string field;
  std::istringstream in(line);
  while (std::getline(in, field, ',')) fields.push_back(field);
  if (!line.empty() && line.back() == ',') fields.emplace_back();
  return fields;
}

// The fields of one line of a record, found by the names of its file's header.
class Record {
 public:
  Record(const std::vector<std::string>& header, const std::vector<std::string>& fields)
      : header_(header), fields_(fields) {
    if (fields.size() != header.size())
      throw std::invalid_argument("expected " + std::to_string(header.size()) + " fields");
  }
  bool has(const std::string& column) const {
    return std::find(header_.begin(), header_.end(), column) != header_.end();
  }
  const std::string& operator[](const std::string& column) const {
    return fields_[std::find(header_.begin(), header_.end(), column) - header_.begin()];
  }

 private:
  const std::vector<std::string>& header_;
  const std::vector<std::string>& fields_;
};

// Reads `path` line by line after its header, which must be one of `headers` (the current one
// first, then those of earlier builds); `row` parses one line's Record.
template <class Row>
void read_rows(const std::string& path, const std::vector<std::string>& headers, Row row) {
  std::ifstream in(path);
  if (!in)
    throw InputError(path + ": cannot be read (a --restart needs the stopped study's folder)");
  std::string line;
  if (!std::getline(in, line) || std::find(headers.begin(), headers.end(), line) == headers.end())
    throw InputError(path + ": not a recall study's record (unexpected header)");
  const std::vector<std::string> header = split(line);
  for (int number = 2; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    try {
      row(Record(header, split(line)));
    } catch (const std::exception& e) {
      throw InputError(path + ": line " + std::to_string(number) + ": " + e.what());
    }
  }
}

double number(const std::string& field) {
  std::size_t used = 0;
  const double x = std::stod(field, &used);
  if (used != field.size()) throw std::invalid_argument("'" + field + "' is not a number");
  return x;
}

int integer(const std::string& field) {
  const double x = number(field);
  if (x != static_cast<int>(x)) throw std::invalid_argument("'" + field + "' is not an integer");
  return static_cast<int>(x);
}

}  // namespace

std::string recall_run_key(const RecallRun& r) {
  return r.variant + '|' + name_of(r.normalisation) + '|' + std::to_string(r.feature_budget) + '|' +
         std::to_string(r.size) + '|' + exact(r.setting.bandwidth) + '|' +
         name_of(r.setting.target) + '|' + exact(r.setting.learning_rate) + '|' +
         std::to_string(r.seed);
}

RecallJournal::RecallJournal(const std::string& directory, const std::vector<RecallRun>& earlier)
    : table_(directory + "/capacity.csv"), predictions_(directory + "/predictions.csv") {
  table_ << kTableHeader << '\n';
  predictions_ << kPredictionsHeader << '\n';
  for (const RecallRun& r : earlier) {
    predictions_ << predictions_row(r);
    table_ << table_row(r, "");
  }
  predictions_.flush();
  table_.flush();
}

void RecallJournal::add(const RecallRun& run) {
  predictions_ << predictions_row(run);  // first: a table row always has its predictions
  predictions_.flush();
  table_ << table_row(run, "");
  table_.flush();
}

void write_recall_table(const std::string& directory, const std::vector<RecallRun>& runs) {
  std::ofstream out(directory + "/capacity.csv");
  out << kTableHeader << '\n';
  for (const RecallRun& r : runs) out << table_row(r, r.selected ? "1" : "0");
}

std::vector<RecallRun> read_recall_journal(const std::string& directory,
                                           RecallNormalisation older) {
  // Without the column: the study's one normalisation, which arms without features ignored.
  auto normalisation = [&](const Record& f) {
    if (f.has("normalisation")) return enum_from_name<RecallNormalisation>(f["normalisation"]);
    return parse_recall_variant(f["variant"]).attention == AttentionKind::linear
               ? older
               : RecallNormalisation::none;
  };
  // The fields that name a run (recall_run_key), in both files.
  auto read_run_key = [&](const Record& f, RecallRun& r) {
    r.variant = f["variant"];
    r.normalisation = normalisation(f);
    r.feature_budget = integer(f["feature_budget"]);
    r.size = integer(f["size"]);
    r.setting = {number(f["bandwidth"]), enum_from_name<AlignmentTarget>(f["target"]),
                 number(f["learning_rate"])};
    r.seed = std::stoull(f["seed"]);
  };
  std::map<std::string, std::vector<bool>> predictions;
  read_rows(directory + "/predictions.csv",
            {kPredictionsHeader, kPredictionsHeaderWithoutNormalisation}, [&](const Record& f) {
              RecallRun key;
              read_run_key(f, key);
              std::vector<bool> bits;
              for (char c : f["correct"]) {
                if (c != '0' && c != '1') throw std::invalid_argument("predictions not 0/1");
                bits.push_back(c == '1');
              }
              predictions[recall_run_key(key)] = bits;
            });
  std::vector<RecallRun> runs;
  read_rows(directory + "/capacity.csv",
            {kTableHeader, kTableHeaderWithoutNormalisation, kTableHeaderWithoutLengths},
            [&](const Record& f) {
              RecallRun r;
              r.task = enum_from_name<RecallTask>(f["task"]);
              read_run_key(f, r);
              r.feature_dim = integer(f["feature_dim"]);
              r.pairs = integer(f["pairs"]);
              r.accuracy = number(f["accuracy"]);
              r.loss = number(f["loss"]);
              r.validation_accuracy = number(f["validation_accuracy"]);
              r.validation_loss = number(f["validation_loss"]);
              r.best_step = integer(f["best_step"]);
              r.seconds = number(f["seconds"]);
              r.phase_a_kl_before = number(f["phase_a_kl_before"]);
              r.phase_a_kl_after = number(f["phase_a_kl_after"]);
              r.effective_bandwidth = number(f["effective_bandwidth"]);
              CapacityDiagnostic& c = r.capacity;
              c.margin = number(f["margin"]);
              c.own_key_wins = number(f["own_key_wins"]);
              c.norm_spread = number(f["norm_spread"]);
              c.coherence_mean = number(f["coherence_mean"]);
              c.coherence_max = number(f["coherence_max"]);
              c.effective_rank = number(f["effective_rank"]);
              c.sequences = integer(f["capacity_sequences"]);
              // NaN: not measured by an older build
              c.norm_cv = f.has("norm_cv") ? number(f["norm_cv"]) : std::nan("");
              c.effective_temperature = f.has("effective_temperature")
                                            ? number(f["effective_temperature"])
                                            : std::nan("");
              const auto p = predictions.find(recall_run_key(r));
              if (p == predictions.end()) return;  // stopped between the two lines: run again
              r.correct = p->second;
              runs.push_back(std::move(r));
            });
  return runs;
}

}  // namespace cpm
