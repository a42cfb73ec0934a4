#include "compiler/kernel_choice.h"

#include <cmath>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "builder_worker/codegen/target.h"
#include "builder_worker/register_fit.h"
#include "common/status_macros.h"
#include "tuner_core/records/best_record.h"
#include "tuner_core/records/record_file.h"
#include "tuner_core/templates/nchwc_layout.h"
#include "tuner_core/workloads/conv_workload.h"

namespace tunefleet {
namespace {

std::pair<std::string, std::string> Key(const std::string& workload, const nlohmann::json& args) {
  return {workload, args.dump()};
}

// Candidates of a layout-aware choice kept per workload.
constexpr size_t kMaxCandidates = 48;

// What decides the blocked layouts a record's kernel reads and writes: its
// template and its channel-block knobs (rows are the image's width whatever
// the row tile).
std::string LayoutKey(const Record& record) {
  std::string key = record.task_name;
  for (const nlohmann::json& knob : record.config.value("entity", nlohmann::json::array())) {
    if (!knob.is_array() || knob.size() < 3 || !knob[0].is_string()) continue;
    const std::string name = knob[0].get<std::string>();
    if (name == "tile_ic" || name == "tile_oc" || name == "tile_c") {
      absl::StrAppend(&key, "|", name, "=", knob[2].dump());
    }
  }
  return key;
}

// A dense layer of at most this many rows gets the dot kernel by default.
constexpr int64_t kDotMaxRows = 4;

// How well a config suits a target with no measurement to go by: vectors
// as wide as the target's, channel blocks of about that width, register
// tiles of about 8 columns (the widest tile the knob cuts the output's rows
// into, ConvTileWidth); for dense, the dot kernel for a few rows
// (B, the weights, read in place: nothing packed per call), else B packed
// once, at compile time. Other knobs keep their first choice. A sum of
// per-knob terms, so the best config is each knob's best choice.
double DefaultScore(const Config& config, int lanes, const Workload& workload) {
  double score = 0;
  const nlohmann::json entity = config.ToJson().value("entity", nlohmann::json::array());
  // The workload's canonical args: every default (e.g. dense's layout) filled in.
  const nlohmann::json& args = workload.args();
  const auto* conv = dynamic_cast<const ConvWorkload*>(&workload);
  const int64_t rows = args.value("M", int64_t{0});
  const bool dot = rows > 0 && rows <= kDotMaxRows && args.value("layout", "") == "NK";
  for (const nlohmann::json& knob : entity) {
    if (knob.size() < 3) continue;
    const std::string name = knob[0].get<std::string>();
    if (knob[2].is_string()) {
      const std::string v = knob[2].get<std::string>();
      if (name == "kernel" && (v == "dot") != dot) score -= 1000;
      if (name == "pack_b" && v != "once") score -= 1000;
      continue;
    }
    if (!knob[2].is_number_integer()) continue;
    const double v = knob[2].get<double>();
    if (v <= 0) continue;
    if (name == "vec") score -= 100 * std::abs(std::log2(v) - std::log2(lanes));
    if (name == "tile_oc" || name == "tile_c" || name == "tile_ic") {
      score -= 10 * std::abs(std::log2(v) - std::log2(lanes));
    }
    if (name == "tile_ow") {
      const int64_t width = conv != nullptr
                                ? ConvTileWidth(conv->conv_args(), static_cast<int64_t>(v))
                                : static_cast<int64_t>(v);
      score -= std::abs(static_cast<double>(width) - 8);
    }
    if (rows > 0 && name == "mr") score -= dot ? 10 * std::abs(v - rows) : std::abs(v - 6);
    if (rows > 0 && name == "nr_vecs") score -= std::abs(v - (dot ? 4 : 2));
    if (rows > 0 && name == "unroll_k") score -= std::abs(std::log2(v) - 1);
    if (rows > 0 && name == "kc") score -= std::abs(std::log2(v) - 8);
  }
  return score;
}

// Each knob's best choice under DefaultScore (first choice on a tie).
[[nodiscard]] absl::StatusOr<Config> BestPerKnob(const ConfigSpace& space, int lanes,
                                                 const Workload& workload) {
  int64_t index = 0, stride = 1;  // the first knob is the least significant digit
  for (int i = 0; i < space.num_knobs(); ++i) {
    int64_t best = 0;
    double best_score = -INFINITY;
    for (int64_t c = 0; c < space.knob_size(i); ++c) {
      TF_ASSIGN_OR_RETURN(Config config, space.Get(c * stride));
      const double score = DefaultScore(config, lanes, workload);
      if (score > best_score) {
        best_score = score;
        best = c;
      }
    }
    index += best * stride;
    stride *= space.knob_size(i);
  }
  return space.Get(index);
}

// A config the builder would build for `target`: the template instantiates
// it and its register tile fits the target's vector registers (a tile that
// does not fit spills in the inner loop; builder_worker/register_fit.h).
bool Buildable(const Task& task, const Config& config, const TargetSpec& target) {
  return task.tmpl().Instantiate(task.workload(), config).ok() &&
         CheckRegisterTileFits(task.tmpl(), task.workload(), config, target).ok();
}

[[nodiscard]] absl::StatusOr<Config> DefaultConfig(const Task& task, int lanes) {
  const ConfigSpace& space = task.space();
  TF_ASSIGN_OR_RETURN(TargetSpec target, ParseTarget(task.target()));
  TF_ASSIGN_OR_RETURN(Config best, BestPerKnob(space, lanes, task.workload()));
  if (Buildable(task, best, target)) return best;
  const int64_t size = space.size();
  const int64_t step = std::max<int64_t>(1, size / 20000);
  std::vector<std::pair<double, int64_t>> ranked;
  for (int64_t i = 0; i < size; i += step) {
    TF_ASSIGN_OR_RETURN(Config config, space.Get(i));
    ranked.push_back({-DefaultScore(config, lanes, task.workload()), i});
  }
  std::stable_sort(ranked.begin(), ranked.end());
  // The best-scored config the builder would build for the target. The
  // register check is cheap and rules out most (channel counts such as 58
  // leave only narrow blocks), so every ranked config gets it; at most 256
  // that pass are instantiated.
  int instantiated = 0;
  for (size_t i = 0; i < ranked.size() && instantiated < 256; ++i) {
    TF_ASSIGN_OR_RETURN(Config config, space.Get(ranked[i].second));
    if (!CheckRegisterTileFits(task.tmpl(), task.workload(), config, target).ok()) continue;
    ++instantiated;
    if (task.tmpl().Instantiate(task.workload(), config).ok()) return config;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "template ", task.name(), " found no default config for ", task.workload().Describe()));
}

}  // namespace

[[nodiscard]] absl::StatusOr<RecordSelection> SelectRecords(const std::string& path,
                                                            const std::vector<ModelLayer>& layers,
                                                            const std::string& target) {
  RecordSelection selection;
  selection.path = path;
  if (path.empty()) return selection;
  TF_ASSIGN_OR_RETURN(std::vector<RecordLine> lines, ReadRecordLines(path));
  std::set<std::pair<std::string, std::string>> model_workloads;
  for (const ModelLayer& layer : layers) model_workloads.insert(Key(layer.workload, layer.args));

  std::map<std::string, std::pair<int, int64_t>> other_targets;  // count, first line
  std::map<std::pair<std::string, std::string>, std::vector<std::pair<Record, int64_t>>> matching;
  int64_t for_target = 0;
  for (const RecordLine& line : lines) {
    if (!line.record.ok()) {
      if (line.torn) {
        selection.warnings.push_back(
            absl::StrCat(path, ":", line.line_number, ": torn last line ignored"));
        continue;
      }
      return absl::InvalidArgumentError(absl::StrCat(
          path, ":", line.line_number, ": corrupt record: ", line.record.status().message()));
    }
    const Record& record = *line.record;
    if (record.target != target) {
      auto [it, inserted] = other_targets.try_emplace(record.target, 0, line.line_number);
      ++it->second.first;
      continue;
    }
    ++for_target;
    const auto key = Key(record.workload_name, record.workload_args);
    if (!model_workloads.count(key)) {
      selection.warnings.push_back(absl::StrCat(
          path, ":", line.line_number, ": record of ", record.workload_name, " ",
          record.workload_args.dump(), " ignored: no layer of the model has that workload"));
      continue;
    }
    matching[key].push_back({record, line.line_number});
  }
  for (const auto& [other, count_line] : other_targets) {
    selection.warnings.push_back(absl::StrCat(path, ":", count_line.second, ": ", count_line.first,
                                              " record(s) for target '", other,
                                              "' ignored: compiling for '", target, "'"));
  }
  if (for_target == 0 && !other_targets.empty()) {
    std::vector<std::string> targets;
    for (const auto& [other, unused] : other_targets) targets.push_back("'" + other + "'");
    return absl::FailedPreconditionError(absl::StrCat(path, " has no record for target '", target,
                                                      "'; its records are for ",
                                                      absl::StrJoin(targets, ", ")));
  }
  for (const auto& [key, records] : matching) {
    std::vector<Record> plain;
    for (const auto& r : records) plain.push_back(r.first);
    absl::StatusOr<Record> best = BestRecord(plain, "", nullptr, target);
    if (!best.ok()) continue;  // only failed trials
    int64_t line = 0;
    for (const auto& r : records) {
      if (r.first.ToLine() == best->ToLine()) {
        line = r.second;
        break;
      }
    }
    selection.best[key] = {*best, line};
    std::vector<std::pair<Record, int64_t>>& candidates = selection.candidates[key];
    candidates.push_back({*best, line});
    // Then the fastest record of each other layout the records offer.
    std::vector<const std::pair<Record, int64_t>*> successful;
    for (const auto& r : records) {
      if (r.first.result.ok()) successful.push_back(&r);
    }
    std::stable_sort(successful.begin(), successful.end(), [](const auto* a, const auto* b) {
      return a->first.ReportedCost() < b->first.ReportedCost();
    });
    std::set<std::string> layouts = {LayoutKey(*best)};
    for (const auto* r : successful) {
      if (candidates.size() >= kMaxCandidates) break;
      if (layouts.insert(LayoutKey(r->first)).second) candidates.push_back(*r);
    }
  }
  return selection;
}

[[nodiscard]] absl::StatusOr<KernelChoice> ChooseKernel(const ModelLayer& layer,
                                                        const RecordSelection& records,
                                                        const std::string& target,
                                                        int vector_lanes) {
  KernelChoice choice;
  auto it = records.best.find(Key(layer.workload, layer.args));
  if (it == records.best.end()) {
    TF_ASSIGN_OR_RETURN(choice.task, Task::Make("", layer.workload, layer.args, target));
    TF_ASSIGN_OR_RETURN(choice.config, DefaultConfig(*choice.task, vector_lanes));
    choice.source = "default config";
    return choice;
  }
  return KernelChoiceOfRecord(it->second.first, it->second.second, records.path, target);
}

const std::vector<std::pair<Record, int64_t>>& CandidateRecords(const ModelLayer& layer,
                                                                const RecordSelection& records) {
  static const std::vector<std::pair<Record, int64_t>> kNone;
  auto it = records.candidates.find(Key(layer.workload, layer.args));
  return it == records.candidates.end() ? kNone : it->second;
}

[[nodiscard]] absl::StatusOr<KernelChoice> KernelChoiceOfRecord(const Record& record, int64_t line,
                                                                const std::string& path,
                                                                const std::string& target) {
  KernelChoice choice;
  const std::string where = absl::StrCat(path, ":", line);
  absl::StatusOr<std::unique_ptr<Task>> task =
      Task::Make(record.task_name, record.workload_name, record.workload_args, target);
  if (!task.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": record of task ", record.task_name, ": ", task.status().message()));
  }
  choice.task = *std::move(task);
  absl::StatusOr<Config> config = choice.task->space().FromJson(record.config);
  if (!config.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": config does not fit template ",
                                                   record.task_name, ": ",
                                                   config.status().message()));
  }
  choice.config = *std::move(config);
  choice.tuned = true;
  choice.source = where;
  return choice;
}

}  // namespace tunefleet
