#include "compiler/kernel_choice.h"

#include <cmath>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "tuner_core/records/best_record.h"
#include "tuner_core/records/record_file.h"

namespace tunefleet {
namespace {

std::pair<std::string, std::string> Key(const std::string& workload, const nlohmann::json& args) {
  return {workload, args.dump()};
}

// How well a config suits a target with no measurement to go by: vectors
// as wide as the target's, channel blocks of about that width, register
// tiles of about 8 columns; other knobs keep their first choice.
double DefaultScore(const Config& config, int lanes) {
  double score = 0;
  const nlohmann::json entity = config.ToJson().value("entity", nlohmann::json::array());
  for (const nlohmann::json& knob : entity) {
    if (knob.size() < 3 || !knob[2].is_number_integer()) continue;
    const std::string name = knob[0].get<std::string>();
    const double v = knob[2].get<double>();
    if (v <= 0) continue;
    if (name == "vec") score -= 100 * std::abs(std::log2(v) - std::log2(lanes));
    if (name == "tile_oc" || name == "tile_c" || name == "tile_ic") {
      score -= 10 * std::abs(std::log2(v) - std::log2(lanes));
    }
    if (name == "tile_ow") score -= std::abs(v - 8);
  }
  return score;
}

[[nodiscard]] absl::StatusOr<Config> DefaultConfig(const Task& task, int lanes) {
  const ConfigSpace& space = task.space();
  const int64_t size = space.size();
  const int64_t step = std::max<int64_t>(1, size / 20000);
  std::vector<std::pair<double, int64_t>> ranked;
  for (int64_t i = 0; i < size; i += step) {
    TF_ASSIGN_OR_RETURN(Config config, space.Get(i));
    ranked.push_back({-DefaultScore(config, lanes), i});
  }
  std::stable_sort(ranked.begin(), ranked.end());
  // The best-scored config that the template can instantiate.
  for (size_t i = 0; i < ranked.size() && i < 64; ++i) {
    TF_ASSIGN_OR_RETURN(Config config, space.Get(ranked[i].second));
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
  const auto& [record, line] = it->second;
  const std::string where = absl::StrCat(records.path, ":", line);
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
