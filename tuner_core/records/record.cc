#include "tuner_core/records/record.h"

#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace tunefleet {
namespace {

constexpr double kFailedCost = 1e9;  // AutoTVM's cost of a failed trial
constexpr int kMaxErrorNo = static_cast<int>(MeasureErrorNo::kUnknown);

[[nodiscard]] absl::Status FieldError(const std::string& field, const std::string& problem) {
  return absl::InvalidArgumentError(absl::StrCat("record field ", field, ": ", problem));
}

// nlohmann::json keeps object keys sorted; records put the keys in AutoTVM's
// order instead so they read the way users know. Only key order changes.
nlohmann::ordered_json Ordered(const nlohmann::json& value) {
  return nlohmann::ordered_json::parse(
      value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

nlohmann::ordered_json OrderedConfig(const nlohmann::json& config) {
  if (!config.is_object()) return Ordered(config);
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const char* key : {"index", "code_hash", "entity"}) {
    auto it = config.find(key);
    if (it != config.end()) out[key] = Ordered(*it);
  }
  for (auto it = config.begin(); it != config.end(); ++it) {
    if (!out.contains(it.key())) out[it.key()] = Ordered(it.value());
  }
  return out;
}

// The "validation" object of a record line (record.h).
[[nodiscard]] absl::StatusOr<Validation> ValidationFromJson(const nlohmann::json& v) {
  if (!v.is_object()) return FieldError("\"validation\"", "expected an object");
  Validation validation;
  auto costs = v.find("pass_costs");
  if (costs == v.end() || !costs->is_array()) {
    return FieldError("\"validation\".pass_costs", "expected an array of costs");
  }
  for (const auto& cost : *costs) {
    if (!cost.is_number() || !(cost.get<double>() > 0) || !std::isfinite(cost.get<double>())) {
      return FieldError("\"validation\".pass_costs", "expected finite costs > 0");
    }
    validation.pass_costs.push_back(cost.get<double>());
  }
  for (const auto& [key, field] : {std::pair{"failed_passes", &validation.failed_passes},
                                   std::pair{"timed_repeats", &validation.timed_repeats}}) {
    auto n = v.find(key);
    if (n == v.end()) continue;
    if (!n->is_number_integer() || n->get<int64_t>() < 0 || n->get<int64_t>() > INT32_MAX) {
      return FieldError(absl::StrCat("\"validation\".", key), "expected a non-negative integer");
    }
    *field = n->get<int>();
  }
  if (auto ci = v.find("max_rel_ci"); ci != v.end()) {
    if (!ci->is_number() || ci->get<double>() < 0) {
      return FieldError("\"validation\".max_rel_ci", "expected a number >= 0");
    }
    validation.max_rel_ci = ci->get<double>();
  }
  return validation;
}

}  // namespace

std::string Record::ToLine() const {
  const bool ok = result.ok();
  nlohmann::ordered_json line = nlohmann::ordered_json::object();
  line["input"] = nlohmann::ordered_json::array(
      {target, task_name, nlohmann::ordered_json::array({workload_name, Ordered(workload_args)}),
       nlohmann::ordered_json::object()});
  line["config"] = OrderedConfig(config);
  line["result"] = nlohmann::ordered_json::array(
      {ok ? nlohmann::ordered_json(result.costs) : nlohmann::ordered_json::array({kFailedCost}),
       static_cast<int>(result.error_no), result.all_cost, result.timestamp});
  line["version"] = kRecordFormatVersion;
  line["tvm_version"] = kRecordProducer;
  if (!ok && !result.error_msg.empty()) line["error_msg"] = result.error_msg;
  // The spread of a success's costs, under one extra key AutoTVM readers ignore.
  if (ok && result.timed_repeats > 0) {
    nlohmann::ordered_json spread = {{"timed_repeats", result.timed_repeats}};
    if (result.cost_stddev_s.has_value()) spread["stddev_s"] = *result.cost_stddev_s;
    if (result.cost_rel_ci.has_value()) spread["rel_ci"] = *result.cost_rel_ci;
    line["spread"] = std::move(spread);
  }
  if (validation.has_value()) {
    nlohmann::ordered_json v = {{"cost_s", validation->cost_s()},
                                {"pass_costs", validation->pass_costs},
                                {"failed_passes", validation->failed_passes},
                                {"timed_repeats", validation->timed_repeats},
                                {"rel_spread", validation->rel_spread()}};
    if (validation->max_rel_ci.has_value()) v["max_rel_ci"] = *validation->max_rel_ci;
    line["validation"] = std::move(v);
  }
  // Replace invalid UTF-8 (e.g. from a compiler's error text) rather than throw.
  return line.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

absl::StatusOr<Record> Record::FromLine(std::string_view line) {
  nlohmann::json parsed;
  try {
    parsed = nlohmann::json::parse(line.begin(), line.end());
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("record is not valid JSON: ", e.what()));
  }
  if (!parsed.is_object()) return absl::InvalidArgumentError("record is not a JSON object");

  Record record;

  // "input": [target, task_name, [workload_name, workload_args], kwargs]
  auto input_it = parsed.find("input");
  if (input_it == parsed.end()) return FieldError("\"input\"", "missing");
  const nlohmann::json& input = *input_it;
  if (!input.is_array() || input.size() < 3) {
    return FieldError("\"input\"", "expected [target, task_name, args, kwargs]");
  }
  if (!input[0].is_string()) return FieldError("\"input\"[0] (target)", "expected a string");
  if (!input[1].is_string()) return FieldError("\"input\"[1] (task_name)", "expected a string");
  const nlohmann::json& args = input[2];
  if (!args.is_array() || args.size() != 2 || !args[0].is_string()) {
    return FieldError("\"input\"[2] (args)", "expected [workload_name, workload_args]");
  }
  record.target = input[0].get<std::string>();
  record.task_name = input[1].get<std::string>();
  record.workload_name = args[0].get<std::string>();
  record.workload_args = args[1];

  auto config_it = parsed.find("config");
  if (config_it == parsed.end()) return FieldError("\"config\"", "missing");
  if (!config_it->is_object()) return FieldError("\"config\"", "expected an object");
  record.config = *config_it;

  // "result": [costs, error_no, all_cost, timestamp]
  auto result_it = parsed.find("result");
  if (result_it == parsed.end()) return FieldError("\"result\"", "missing");
  const nlohmann::json& result = *result_it;
  if (!result.is_array() || result.size() != 4) {
    return FieldError("\"result\"", "expected [costs, error_no, all_cost, timestamp]");
  }
  if (!result[0].is_array() || result[0].empty()) {
    return FieldError("\"result\"[0] (costs)", "expected a non-empty array of numbers");
  }
  for (const nlohmann::json& cost : result[0]) {
    if (!cost.is_number()) return FieldError("\"result\"[0] (costs)", "expected numbers");
    record.result.costs.push_back(cost.get<double>());
  }
  if (!result[1].is_number_integer() || result[1].get<int64_t>() < 0 ||
      result[1].get<int64_t>() > kMaxErrorNo) {
    return FieldError(
        "\"result\"[1] (error_no)",
        absl::StrCat("expected an integer in [0, ", kMaxErrorNo, "], got ", result[1].dump()));
  }
  record.result.error_no = static_cast<MeasureErrorNo>(result[1].get<int>());
  if (!result[2].is_number()) return FieldError("\"result\"[2] (all_cost)", "expected a number");
  if (!result[3].is_number()) return FieldError("\"result\"[3] (timestamp)", "expected a number");
  record.result.all_cost = result[2].get<double>();
  record.result.timestamp = result[3].get<double>();

  auto error_msg_it = parsed.find("error_msg");
  if (error_msg_it != parsed.end()) {
    if (!error_msg_it->is_string()) return FieldError("\"error_msg\"", "expected a string");
    record.result.error_msg = error_msg_it->get<std::string>();
  }

  // "spread": {"timed_repeats": n, "stddev_s": s, "rel_ci": r}, all optional.
  if (auto spread = parsed.find("spread"); spread != parsed.end()) {
    if (!spread->is_object()) return FieldError("\"spread\"", "expected an object");
    if (auto n = spread->find("timed_repeats"); n != spread->end()) {
      if (!n->is_number_integer() || n->get<int64_t>() < 0 || n->get<int64_t>() > INT32_MAX) {
        return FieldError("\"spread\".timed_repeats", "expected a non-negative integer");
      }
      record.result.timed_repeats = n->get<int>();
    }
    for (const auto& [key, field] : {std::pair{"stddev_s", &record.result.cost_stddev_s},
                                     std::pair{"rel_ci", &record.result.cost_rel_ci}}) {
      auto value = spread->find(key);
      if (value == spread->end()) continue;
      if (!value->is_number() || value->get<double>() < 0) {
        return FieldError(absl::StrCat("\"spread\".", key), "expected a number >= 0");
      }
      *field = value->get<double>();
    }
  }
  if (auto v = parsed.find("validation"); v != parsed.end()) {
    TF_ASSIGN_OR_RETURN(record.validation, ValidationFromJson(*v));
  }
  return record;
}

double Record::ReportedCost() const {
  if (!result.ok()) return kFailedCost;
  return validated() ? validation->cost_s() : result.MeanCost();
}

double Record::Gflops(double flops) const {
  if (!result.ok()) return 0.0;
  return flops / result.MeanCost() / 1e9;
}

}  // namespace tunefleet
