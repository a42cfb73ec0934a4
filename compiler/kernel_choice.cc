#include "compiler/kernel_choice.h"

#include <cmath>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "toolchain/codegen/target.h"
#include "toolchain/default_config.h"
#include "tuner_core/records/best_record.h"
#include "tuner_core/records/record_file.h"
#include "tuner_core/templates/nchwc_layout.h"
#include "tuner_core/templates/register_fit.h"
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

// Whether a successful record's config still builds for the target as far as
// its register tile goes: a template that changed how it tiles a workload
// (a strided pointwise convolution's rows joined) can make an older record's
// tile outgrow the target's vector registers. Such a record is passed over
// with `why` set, so an older records file still compiles; a record whose
// template or config does not fit the workload at all is kept, for
// ChooseKernel to name. `tasks` caches one task per template and workload.
bool StillBuilds(const Record& record, const std::string& target, const TargetSpec& spec,
                 std::map<std::string, std::unique_ptr<Task>>* tasks, std::string* why) {
  if (!record.result.ok()) return true;
  const std::string key =
      absl::StrCat(record.task_name, "|", record.workload_name, "|", record.workload_args.dump());
  auto it = tasks->find(key);
  if (it == tasks->end()) {
    absl::StatusOr<std::unique_ptr<Task>> task =
        Task::Make(record.task_name, record.workload_name, record.workload_args, target);
    it = tasks->emplace(key, task.ok() ? *std::move(task) : nullptr).first;
  }
  if (it->second == nullptr) return true;
  const Task& task = *it->second;
  absl::StatusOr<Config> config = task.space().FromJson(record.config);
  if (!config.ok()) return true;
  const absl::Status fits = CheckRegisterTileFits(task.tmpl(), task.workload(), *config, spec);
  if (fits.ok()) return true;
  *why = std::string(fits.message());
  return false;
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
  std::map<std::string, std::unique_ptr<Task>> tasks;
  const absl::StatusOr<TargetSpec> spec = ParseTarget(target);
  int64_t outgrown = 0, first_outgrown = 0;
  std::string outgrown_why;
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
    std::string why;
    if (spec.ok() && !StillBuilds(record, target, *spec, &tasks, &why)) {
      if (outgrown++ == 0) {
        first_outgrown = line.line_number;
        outgrown_why = why;
      }
      continue;
    }
    matching[key].push_back({record, line.line_number});
  }
  if (outgrown > 0) {
    selection.warnings.push_back(
        absl::StrCat(path, ":", first_outgrown, ": ", outgrown,
                     " record(s) ignored whose config no longer builds for '", target,
                     "' (the first: ", outgrown_why, ")"));
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
    // Validated records first (best_record.h's order): a layout's figure is
    // its re-measured record's where it has one, never a luckier search
    // figure of the same layout (a ResNet-18 layer's read 1.37 ms in the
    // search and ran at 1.75 ms, where a validated record of its layout
    // had 1.41 ms).
    std::stable_sort(successful.begin(), successful.end(), [](const auto* a, const auto* b) {
      if (a->first.validated() != b->first.validated()) return a->first.validated();
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
                                                        const std::string& target, int vector_lanes,
                                                        DefaultTile tile) {
  KernelChoice choice;
  auto it = records.best.find(Key(layer.workload, layer.args));
  if (it == records.best.end()) {
    TF_ASSIGN_OR_RETURN(choice.task, Task::Make("", layer.workload, layer.args, target));
    TF_ASSIGN_OR_RETURN(choice.config, DefaultConfig(*choice.task, vector_lanes, tile));
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
