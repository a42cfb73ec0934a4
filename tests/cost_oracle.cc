#include "tests/cost_oracle.h"

#include <cmath>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "tuner_core/records/record_file.h"

namespace tunefleet {
namespace {

std::string WorkloadKey(const std::string& name, const nlohmann::json& args) {
  return absl::StrCat(name, " ", args.dump());  // nlohmann's objects dump their keys sorted
}

// |log2(a / b)| for positive numbers; 0 if equal, 1 if not, otherwise.
double ValueDistance(const nlohmann::json& a, const nlohmann::json& b) {
  if (a.is_number() && b.is_number()) {
    const double x = a.get<double>(), y = b.get<double>();
    if (x > 0 && y > 0) return std::fabs(std::log2(x / y));
    return x == y ? 0 : 1;
  }
  if (a.is_array() && b.is_array() && a.size() == b.size()) {
    double sum = 0;
    for (size_t i = 0; i < a.size(); ++i) sum += ValueDistance(a[i], b[i]);
    return sum;
  }
  return a == b ? 0 : 1;
}

// Knob by knob over `query`'s entities ([name, kind, value] each).
double EntityDistance(const nlohmann::json& query, const nlohmann::json& recorded) {
  double sum = 0;
  for (const nlohmann::json& knob : query) {
    double d = 1;  // a knob the record lacks
    for (const nlohmann::json& other : recorded) {
      if (other.size() == 3 && knob.size() == 3 && other[0] == knob[0]) {
        d = ValueDistance(knob[2], other[2]);
        break;
      }
    }
    sum += d;
  }
  return sum;
}

}  // namespace

absl::StatusOr<CostOracle> CostOracle::Load(const std::string& path) {
  absl::StatusOr<ReadReport> read = ReadRecords(path);
  if (!read.ok()) return read.status();
  if (!read->warnings.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("cost oracle: ", read->warnings.front(), " (every line must be a record)"));
  }
  absl::StatusOr<CostOracle> oracle = FromRecords(read->records);
  if (!oracle.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", oracle.status().message()));
  }
  return oracle;
}

absl::StatusOr<CostOracle> CostOracle::FromRecords(const std::vector<Record>& records) {
  CostOracle oracle;
  // (workload, entity) -> position in its list: a config measured again
  // keeps its fastest figure.
  absl::flat_hash_map<std::string, size_t> seen;
  for (const Record& r : records) {
    if (!r.result.ok() || !(r.result.MeanCost() > 0) || !r.config.contains("entity")) continue;
    const std::string key = WorkloadKey(r.workload_name, r.workload_args);
    std::vector<Entry>& entries = oracle.workloads_[key];
    const Entry entry{r.config["entity"], r.result.MeanCost(), r.result.all_cost};
    auto [it, added] =
        seen.try_emplace(absl::StrCat(key, " ", entry.entity.dump()), entries.size());
    if (added) {
      entries.push_back(entry);
    } else if (entry.cost_s < entries[it->second].cost_s) {
      entries[it->second] = entry;
    }
    ++oracle.num_records_;
  }
  if (oracle.num_records_ == 0) {
    return absl::InvalidArgumentError(absl::StrCat("cost oracle: none of ", records.size(),
                                                   " records is a successful run with a config"));
  }
  return oracle;
}

absl::StatusOr<CostOracle::Answer> CostOracle::Cost(const std::string& workload_name,
                                                    const std::string& workload_args_json,
                                                    const std::string& config_json) const {
  const nlohmann::json args = nlohmann::json::parse(workload_args_json, nullptr, false);
  if (args.is_discarded() || !args.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat("cost oracle: workload args are not a JSON object: ", workload_args_json));
  }
  nlohmann::json config = nlohmann::json::parse(config_json, nullptr, false);
  if (config.is_object() && config.contains("entity")) config = config["entity"];
  if (config.is_discarded() || !config.is_array()) {
    return absl::InvalidArgumentError(
        absl::StrCat("cost oracle: a config is an object with \"entity\" or the entity list, got ",
                     config_json));
  }
  auto it = workloads_.find(WorkloadKey(workload_name, args));
  if (it == workloads_.end()) {
    return absl::NotFoundError(
        absl::StrCat("cost oracle: no record of workload ", workload_name, " ", args.dump()));
  }
  const Entry* nearest = nullptr;
  double best = std::numeric_limits<double>::infinity();
  for (const Entry& e : it->second) {
    if (e.entity == config) return Answer{e.cost_s, e.trial_s, true};
    const double d = EntityDistance(config, e.entity);
    if (d < best) {
      best = d;
      nearest = &e;
    }
  }
  return Answer{nearest->cost_s, nearest->trial_s, false};
}

}  // namespace tunefleet
