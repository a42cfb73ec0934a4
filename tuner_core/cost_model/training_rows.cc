#include "tuner_core/cost_model/training_rows.h"

#include <map>
#include <tuple>
#include <utility>

#include "common/run_in_parallel.h"
#include "common/status_macros.h"

namespace tunefleet {

std::vector<WorkloadRecords> GroupByWorkload(const std::vector<Record>& records,
                                             const std::function<bool(const Record&)>& keep) {
  using Key = std::tuple<std::string, std::string, std::string>;
  std::map<Key, size_t> index;
  std::vector<WorkloadRecords> groups;
  for (const Record& r : records) {
    if (keep && !keep(r)) continue;
    auto [it, added] =
        index.try_emplace(Key{r.task_name, r.workload_name, r.workload_args.dump()}, groups.size());
    if (added) {
      groups.push_back({.template_name = r.task_name,
                        .workload_name = r.workload_name,
                        .workload_args = r.workload_args,
                        .target = r.target,
                        .records = {}});
    }
    groups[it->second].records.push_back(&r);
  }
  return groups;
}

[[nodiscard]] absl::StatusOr<TrainingRows> FeaturizeRecords(const WorkloadRecords& workload,
                                                            FeatureKind feature, int threads) {
  TrainingRows out;
  TF_ASSIGN_OR_RETURN(out.task, Task::Make(workload.template_name, workload.workload_name,
                                           workload.workload_args, workload.target));
  TF_ASSIGN_OR_RETURN(FeatureExtractor extractor, FeatureExtractor::Create(feature, *out.task));
  // Each feature row takes tens of microseconds: a thread per 32 records.
  constexpr size_t kRecordsPerThread = 32;
  std::vector<std::vector<float>> rows(workload.records.size());  // empty: skipped
  RunInParallel(
      workload.records.size(), threads,
      [&](size_t i) {
        // A record's "index" is its own space's (another shape's knob
        // sizes): this space recomputes it from the entity.
        nlohmann::json config = workload.records[i]->config;
        if (config.is_object()) config.erase("index");
        absl::StatusOr<Config> c = out.task->space().FromJson(config);
        if (!c.ok()) return;  // a record of an older space
        absl::StatusOr<std::vector<float>> row = extractor.Extract(*c);
        if (row.ok()) rows[i] = *std::move(row);
      },
      kRecordsPerThread);
  out.rows.num_features = extractor.num_features();
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].empty()) {
      ++out.skipped;
      continue;
    }
    out.rows.AddRow(rows[i]);
    out.throughputs.push_back(workload.records[i]->result.Throughput());
    out.used.push_back(i);
  }
  return out;
}

}  // namespace tunefleet
