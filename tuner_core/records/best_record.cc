#include "tuner_core/records/best_record.h"

#include <algorithm>
#include <set>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"

namespace tunefleet {
namespace {

// Whether `a` is a better pick than the current best `b`: a validated
// record beats any unvalidated one (whose search figure is the luck of the
// draw the validation removed); within a class the lower ReportedCost wins,
// and on a tie the earlier record (b) stays.
bool Better(const Record& a, const Record& b) {
  if (a.validated() != b.validated()) return a.validated();
  return a.ReportedCost() < b.ReportedCost();
}

}  // namespace

[[nodiscard]] absl::StatusOr<Record> BestRecord(const std::vector<Record>& records,
                                                const std::string& task_name,
                                                const nlohmann::json* workload_args,
                                                const std::string& target) {
  const Record* best = nullptr;
  for (const Record& record : records) {
    if (!record.result.ok()) continue;
    if (!task_name.empty() && record.task_name != task_name) continue;
    if (!target.empty() && record.target != target) continue;
    if (workload_args != nullptr && record.workload_args != *workload_args) continue;
    if (best == nullptr || Better(record, *best)) best = &record;
  }
  if (best == nullptr) {
    return absl::NotFoundError(absl::StrCat(
        "no successful record for task '", task_name.empty() ? "*" : task_name, "', args ",
        workload_args == nullptr ? "*" : workload_args->dump(), ", target '",
        target.empty() ? "*" : target, "' among ", records.size(), " records"));
  }
  return *best;
}

std::vector<TaskRecords> TopPerTask(const std::vector<Record>& records, int k,
                                    const std::string& task_name) {
  // Key: task, workload, canonical args text (nlohmann::json dumps object keys
  // sorted, so equal JSON values give equal text), target.
  using Key = std::tuple<std::string, std::string, std::string, std::string>;
  absl::flat_hash_map<Key, size_t> slot_of;  // key -> position in `groups`
  std::vector<std::vector<const Record*>> groups;
  for (const Record& record : records) {
    if (!record.result.ok()) continue;
    if (!task_name.empty() && record.task_name != task_name) continue;
    Key key(record.task_name, record.workload_name,
            record.workload_args.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
            record.target);
    auto [it, inserted] = slot_of.try_emplace(std::move(key), groups.size());
    if (inserted) groups.emplace_back();
    groups[it->second].push_back(&record);
  }
  std::vector<TaskRecords> out;
  out.reserve(groups.size());
  for (std::vector<const Record*>& group : groups) {
    TaskRecords& task = out.emplace_back();
    task.successes = static_cast<int64_t>(group.size());
    // Best first; stable, so ties keep file order (the earlier wins).
    std::stable_sort(group.begin(), group.end(),
                     [](const Record* a, const Record* b) { return Better(*a, *b); });
    std::set<std::string> configs;
    for (const Record* r : group) {
      if (static_cast<int>(task.top.size()) >= k) break;
      // The index names the config; a record may leave it null (its entity
      // then does: ConfigSpace::FromJson), so null is no name.
      const auto index = r->config.find("index");
      const std::string config = index != r->config.end() && index->is_number_integer()
                                     ? index->dump()
                                     : r->config.value("entity", nlohmann::json()).dump();
      if (configs.insert(config).second) task.top.push_back(*r);
    }
  }
  return out;
}

std::vector<Record> BestPerTask(const std::vector<Record>& records) {
  std::vector<Record> out;
  for (TaskRecords& task : TopPerTask(records, 1)) out.push_back(std::move(task.top.front()));
  return out;
}

}  // namespace tunefleet
