#include "experiments/recall/recall_journal.hpp"

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
    "effective_rank,capacity_sequences,norm_cv,effective_temperature,selected";
// The header before norm_cv and effective_temperature: its rows still read (those two not
// measured).
const char* const kTableHeaderWithoutLengths =
    "task,variant,feature_budget,feature_dim,bandwidth,target,learning_rate,seed,size,pairs,"
    "accuracy,loss,"
    "validation_accuracy,validation_loss,best_step,seconds,phase_a_kl_before,phase_a_kl_after,"
    "effective_bandwidth,margin,own_key_wins,norm_spread,coherence_mean,coherence_max,"
    "effective_rank,capacity_sequences,selected";
const char* const kPredictionsHeader =
    "variant,feature_budget,size,bandwidth,target,learning_rate,seed,correct";
constexpr int kTableColumns = 29, kTableColumnsWithoutLengths = 27;

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
    << exact(c.effective_temperature) << ',' << selected << '\n';
  return o.str();
}

std::string predictions_row(const RecallRun& r) {
  std::string bits;
  bits.reserve(r.correct.size());
  for (bool right : r.correct) bits.push_back(right ? '1' : '0');
  std::ostringstream o;
  o << r.variant << ',' << r.feature_budget << ',' << r.size << ',' << exact(r.setting.bandwidth)
    << ',' << name_of(r.setting.target) << ',' << exact(r.setting.learning_rate) << ',' << r.seed
    << ',' << bits << '\n';
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

// Reads `path` line by line after its header (`header`, or `older` when not empty); `row` parses
// the fields of one line.
template <class Row>
void read_rows(const std::string& path, const std::string& header, const std::string& older,
               Row row) {
  std::ifstream in(path);
  if (!in)
    throw InputError(path + ": cannot be read (a --restart needs the stopped study's folder)");
  std::string line;
  if (!std::getline(in, line) || (line != header && (older.empty() || line != older)))
    throw InputError(path + ": not a recall study's record (unexpected header)");
  for (int number = 2; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    try {
      row(split(line));
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
  return r.variant + '|' + std::to_string(r.feature_budget) + '|' + std::to_string(r.size) + '|' +
         exact(r.setting.bandwidth) + '|' + name_of(r.setting.target) + '|' +
         exact(r.setting.learning_rate) + '|' + std::to_string(r.seed);
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

std::vector<RecallRun> read_recall_journal(const std::string& directory) {
  std::map<std::string, std::vector<bool>> predictions;
  read_rows(directory + "/predictions.csv", kPredictionsHeader, "",
            [&](const std::vector<std::string>& f) {
              if (f.size() != 8) throw std::invalid_argument("expected 8 fields");
              RecallRun key;
              key.variant = f[0];
              key.feature_budget = integer(f[1]);
              key.size = integer(f[2]);
              key.setting = {number(f[3]), enum_from_name<AlignmentTarget>(f[4]), number(f[5])};
              key.seed = std::stoull(f[6]);
              std::vector<bool> bits;
              for (char c : f[7]) {
                if (c != '0' && c != '1') throw std::invalid_argument("predictions not 0/1");
                bits.push_back(c == '1');
              }
              predictions[recall_run_key(key)] = bits;
            });
  std::vector<RecallRun> runs;
  read_rows(
      directory + "/capacity.csv", kTableHeader, kTableHeaderWithoutLengths,
      [&](const std::vector<std::string>& f) {
        if (f.size() != kTableColumns && f.size() != kTableColumnsWithoutLengths)
          throw std::invalid_argument("expected " + std::to_string(kTableColumns) + " fields");
        RecallRun r;
        r.task = enum_from_name<RecallTask>(f[0]);
        r.variant = f[1];
        r.feature_budget = integer(f[2]);
        r.feature_dim = integer(f[3]);
        r.setting = {number(f[4]), enum_from_name<AlignmentTarget>(f[5]), number(f[6])};
        r.seed = std::stoull(f[7]);
        r.size = integer(f[8]);
        r.pairs = integer(f[9]);
        r.accuracy = number(f[10]);
        r.loss = number(f[11]);
        r.validation_accuracy = number(f[12]);
        r.validation_loss = number(f[13]);
        r.best_step = integer(f[14]);
        r.seconds = number(f[15]);
        r.phase_a_kl_before = number(f[16]);
        r.phase_a_kl_after = number(f[17]);
        r.effective_bandwidth = number(f[18]);
        CapacityDiagnostic& c = r.capacity;
        c.margin = number(f[19]);
        c.own_key_wins = number(f[20]);
        c.norm_spread = number(f[21]);
        c.coherence_mean = number(f[22]);
        c.coherence_max = number(f[23]);
        c.effective_rank = number(f[24]);
        c.sequences = integer(f[25]);
        const bool lengths = f.size() == kTableColumns;  // NaN: not measured by an older build
        c.norm_cv = lengths ? number(f[26]) : std::nan("");
        c.effective_temperature = lengths ? number(f[27]) : std::nan("");
        const auto p = predictions.find(recall_run_key(r));
        if (p == predictions.end()) return;  // stopped between the two lines: run again
        r.correct = p->second;
        runs.push_back(std::move(r));
      });
  return runs;
}

}  // namespace cpm
