#include "tuner_core/records/tvm_record.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "target/target_string.h"
#include "tuner_core/records/tvm_workload.h"
#include "tuner_core/templates/task.h"
#include "tuner_core/templates/template.h"

namespace tunefleet {
namespace {

[[nodiscard]] absl::Status LineError(const std::string& problem) {
  return absl::InvalidArgumentError(absl::StrCat("AutoTVM record: ", problem));
}

// The parts of a line, wherever its version keeps them.
struct TvmLineParts {
  const nlohmann::json* input = nullptr;   // [target, task_name, args, kwargs]
  const nlohmann::json* config = nullptr;  // ConfigEntity.to_json_dict()
  const nlohmann::json* result = nullptr;  // [costs, error_no, all_cost, timestamp]
};

[[nodiscard]] absl::StatusOr<TvmLineParts> SplitLine(const nlohmann::json& line) {
  if (!line.is_object()) return LineError("not a JSON object");
  TvmLineParts parts;
  auto field = [&](const char* key) -> const nlohmann::json* {
    auto it = line.find(key);
    return it == line.end() ? nullptr : &*it;
  };
  if (line.contains("i") || line.contains("v")) {
    // v0.1 ({"i": ..., "r": ..., "v": 0.1}, config keys "i", "c", "e"): TVM
    // itself has skipped these lines since v0.7.
    return LineError("log version 0.1 is not supported (TVM v0.7 and later skip it too)");
  }
  parts.input = field("input");
  parts.config = field("config");
  parts.result = field("result");
  if (parts.input == nullptr) return LineError("no \"input\" field");
  if (parts.config == nullptr) return LineError("no \"config\" field");
  if (parts.result == nullptr) return LineError("no \"result\" field");
  const nlohmann::json& input = *parts.input;
  if (!input.is_array() || input.size() < 3 || !input[0].is_string() || !input[1].is_string()) {
    return LineError("\"input\" is not [target, task_name, args, kwargs]");
  }
  if (input.size() > 3 && !input[3].is_null() && !(input[3].is_object() && input[3].empty())) {
    return LineError(absl::StrCat("task keyword arguments ", input[3].dump(),
                                  " are not supported (TuneFleet tasks take none)"));
  }
  return parts;
}

// AutoTVM's config with its index dropped (it counts in AutoTVM's space)
// and boolean "ot" values (define_knob("unroll_kw", [True, False])) as 1/0.
nlohmann::json PortableConfig(const nlohmann::json& config) {
  nlohmann::json out = config;
  if (!out.is_object()) return out;
  out.erase("index");
  auto entity = out.find("entity");
  if (entity == out.end() || !entity->is_array()) return out;
  for (nlohmann::json& item : *entity) {
    if (item.is_array() && item.size() == 3 && item[1] == "ot" && item[2].is_boolean()) {
      item[2] = item[2].get<bool>() ? 1 : 0;
    }
  }
  return out;
}

}  // namespace

bool IsTvmRecordJson(const nlohmann::json& line) {
  if (!line.is_object()) return false;
  if (line.contains("i") || line.contains("v")) return true;  // v0.1
  auto version = line.find("tvm_version");
  if (version != line.end() && version->is_string()) {
    return !absl::StartsWith(version->get<std::string>(), "tunefleet");
  }
  // Without a version: TuneFleet's args are [workload_name, {args}].
  auto input = line.find("input");
  if (input == line.end() || !input->is_array() || input->size() < 3) return false;
  const nlohmann::json& args = (*input)[2];
  return !(args.is_array() && args.size() == 2 && args[0].is_string() && args[1].is_object());
}

absl::StatusOr<Record> TvmRecordConverter::Convert(std::string_view line) {
  nlohmann::json parsed;
  try {
    parsed = nlohmann::json::parse(line.begin(), line.end());
  } catch (const nlohmann::json::exception& e) {
    return LineError(absl::StrCat("not valid JSON: ", e.what()));
  }
  return ConvertJson(parsed);
}

absl::StatusOr<Record> TvmRecordConverter::ConvertJson(const nlohmann::json& line) {
  TF_ASSIGN_OR_RETURN(TvmLineParts parts, SplitLine(line));
  const std::string target = (*parts.input)[0].get<std::string>();
  const std::string task_name = (*parts.input)[1].get<std::string>();
  TF_ASSIGN_OR_RETURN(WorkloadOfTvmTask workload,
                      WorkloadFromTvmTask(task_name, (*parts.input)[2]));
  TF_ASSIGN_OR_RETURN(std::shared_ptr<const TemplateSpace> space,
                      SpaceFor(task_name, workload.workload_name, workload.workload_args, target));
  absl::StatusOr<Config> config = space->space.FromJson(PortableConfig(*parts.config));
  if (!config.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("config of AutoTVM task ", task_name, " does not fit the space of template ",
                     space->template_name, ": ", config.status().message()));
  }
  // Our own line format checks the result fields (costs, error number in
  // AutoTVM's numbering, which is ours, total time, timestamp).
  nlohmann::json ours = {
      {"input", nlohmann::json::array(
                    {target, space->template_name,
                     nlohmann::json::array({workload.workload_name, workload.workload_args}),
                     nlohmann::json::object()})},
      {"config", config->ToJson()},
      {"result", *parts.result},
  };
  absl::StatusOr<Record> record = Record::FromLine(ours.dump());
  if (!record.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("AutoTVM record of task ", task_name, ": ", record.status().message()));
  }
  return record;
}

absl::StatusOr<std::shared_ptr<const TvmRecordConverter::TemplateSpace>>
TvmRecordConverter::SpaceFor(const std::string& tvm_task_name, const std::string& workload_name,
                             const nlohmann::json& workload_args, const std::string& target) {
  const std::string key = absl::StrCat(tvm_task_name, "\n", workload_args.dump(), "\n",
                                       IsCudaTargetString(target) ? "cuda" : "cpu");
  auto cached = spaces_.find(key);
  if (cached != spaces_.end()) return cached->second;

  // A template of the same name as the AutoTVM task first (the names of
  // TuneFleet's templates follow TVM's), else the workload's default.
  std::string template_name;
  absl::StatusOr<const Template*> same_name = FindTemplate(tvm_task_name);
  if (same_name.ok() && (*same_name)->workload_name() == workload_name) {
    template_name = (*same_name)->name();
  }
  absl::StatusOr<std::unique_ptr<Task>> task =
      Task::Make(template_name, workload_name, workload_args, target);
  absl::StatusOr<std::shared_ptr<const TemplateSpace>> entry =
      task.ok() ? absl::StatusOr<std::shared_ptr<const TemplateSpace>>(
                      std::make_shared<const TemplateSpace>(
                          TemplateSpace{(*task)->name(), (*task)->space()}))
                : absl::InvalidArgumentError(
                      absl::StrCat("no TuneFleet template serves AutoTVM task ", tvm_task_name,
                                   " on \"", target, "\": ", task.status().message()));
  spaces_.emplace(key, entry);
  return entry;
}

}  // namespace tunefleet
