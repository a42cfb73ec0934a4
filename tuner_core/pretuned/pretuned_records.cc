#include "tuner_core/pretuned/pretuned_records.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <string_view>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/file_util.h"
#include "common/status_macros.h"
#include "tuner_core/pretuned/shipped_records.h"
#include "tuner_core/records/record.h"
#include "tuner_core/selective/similarity.h"

namespace tunefleet {
namespace {

// How far workload `b`'s args are from `a`'s: the sum over numeric args of
// |log((a + 1) / (b + 1))| (pads and zero-sized args count too), infinite
// when a non-numeric arg differs or the two have different args.
double WorkloadDistance(const nlohmann::json& a, const nlohmann::json& b) {
  if (!a.is_object() || !b.is_object() || a.size() != b.size()) {
    return std::numeric_limits<double>::infinity();
  }
  double distance = 0;
  for (auto it = a.begin(); it != a.end(); ++it) {
    auto other = b.find(it.key());
    if (other == b.end()) return std::numeric_limits<double>::infinity();
    if (it->is_number() && other->is_number()) {
      const double x = it->get<double>();
      const double y = other->get<double>();
      if (x <= -1 || y <= -1) {
        if (x != y) distance += 1;
        continue;
      }
      distance += std::abs(std::log((x + 1) / (y + 1)));
    } else if (*it != *other) {
      return std::numeric_limits<double>::infinity();
    }
  }
  return distance;
}

}  // namespace

absl::StatusOr<std::shared_ptr<const PretunedRecords>> PretunedRecords::Shipped(
    absl::string_view family) {
  return ParseShippedOnce<PretunedRecords>(family, ShippedRecordFiles(), "the records");
}

std::vector<std::string> PretunedRecords::ShippedFamilies() {
  return FamiliesOf(ShippedRecordFiles());
}

absl::StatusOr<PretunedRecords> PretunedRecords::ReadFile(const std::string& path) {
  TF_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path, kMaxRecordLogBytes));
  return Parse(text, path);
}

absl::StatusOr<PretunedRecords> PretunedRecords::Parse(absl::string_view text,
                                                       absl::string_view source) {
  PretunedRecords records;
  // (template, workload name, args dump) -> its entry in by_template_.
  std::map<std::tuple<std::string, std::string, std::string>, size_t> index;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    if (line.find_first_not_of(" \t\r") == absl::string_view::npos) continue;
    absl::StatusOr<Record> record = Record::FromLine(std::string_view(line.data(), line.size()));
    if (!record.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(source, " line ", line_number, ": ", record.status().message()));
    }
    if (!record->result.ok()) continue;
    std::vector<Workload>& workloads = records.by_template_[record->task_name];
    const auto key =
        std::make_tuple(record->task_name, record->workload_name, record->workload_args.dump());
    auto [it, added] = index.emplace(key, workloads.size());
    if (added) {
      workloads.push_back({record->workload_name, record->workload_args, {}});
    }
    workloads[it->second].configs.emplace_back(record->ReportedCost(), record->config);
    ++records.num_records_;
  }
  for (auto& [name, workloads] : records.by_template_) {
    for (Workload& w : workloads) {
      std::stable_sort(w.configs.begin(), w.configs.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
    }
  }
  return records;
}

int PretunedRecords::num_workloads() const {
  int n = 0;
  for (const auto& [name, workloads] : by_template_) n += static_cast<int>(workloads.size());
  return n;
}

std::vector<Config> PretunedRecords::ConfigsFor(const Task& task, int k) const {
  std::vector<Config> configs;
  auto found = by_template_.find(task.name());
  if (found == by_template_.end() || k <= 0) return configs;
  const Workload* nearest = nullptr;
  double nearest_distance = std::numeric_limits<double>::infinity();
  for (const Workload& w : found->second) {
    if (w.name != task.workload().name()) continue;
    const double d = WorkloadDistance(task.workload().args(), w.args);
    if (d < nearest_distance) {
      nearest_distance = d;
      nearest = &w;
    }
  }
  if (nearest == nullptr) return configs;
  std::set<int64_t> taken;
  for (const auto& [cost, json] : nearest->configs) {
    if (static_cast<int>(configs.size()) >= k) break;
    // The record's own config where this space has it (its own workload, a
    // space unchanged since), else the nearest one.
    absl::StatusOr<Config> exact = task.space().FromJson(json);
    Config config = exact.ok() ? *std::move(exact) : MapConfigJsonNearest(json, task.space());
    if (taken.insert(config.index()).second) configs.push_back(std::move(config));
  }
  return configs;
}

}  // namespace tunefleet
