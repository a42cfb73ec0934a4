#include "tuner_core/records/best_record.h"

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

std::vector<Record> BestPerTask(const std::vector<Record>& records) {
  // Key: task, workload, canonical args text (nlohmann::json dumps object keys
  // sorted, so equal JSON values give equal text), target.
  using Key = std::tuple<std::string, std::string, std::string, std::string>;
  absl::flat_hash_map<Key, size_t> slot_of;  // key -> position in `best`
  std::vector<const Record*> best;
  for (const Record& record : records) {
    if (!record.result.ok()) continue;
    Key key(record.task_name, record.workload_name,
            record.workload_args.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
            record.target);
    auto [it, inserted] = slot_of.try_emplace(std::move(key), best.size());
    if (inserted) {
      best.push_back(&record);
    } else if (Better(record, *best[it->second])) {
      best[it->second] = &record;
    }
  }
  std::vector<Record> out;
  out.reserve(best.size());
  for (const Record* record : best) out.push_back(*record);
  return out;
}

}  // namespace tunefleet
