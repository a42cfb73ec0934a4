#include "bench/memoizing_measurer.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "tuner_core/records/task_record.h"

namespace tunefleet {

void MemoizingMeasurer::MeasureAndCache(const std::vector<Config>& configs) {
  if (inner_ == nullptr) {
    absl::StatusOr<std::unique_ptr<LocalMeasurer>> inner = LocalMeasurer::Create(task_, options_);
    if (!inner.ok()) {
      std::fprintf(stderr, "local measurer: %s\n", std::string(inner.status().message()).c_str());
      std::exit(1);
    }
    inner_ = std::move(*inner);
  }
  const auto start = std::chrono::steady_clock::now();
  std::vector<MeasureResult> results = inner_->Measure(configs);
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  measure_wall_seconds_ += wall;
  for (size_t i = 0; i < configs.size(); ++i) {
    results[i].all_cost = wall / configs.size();  // this trial's share of build + measure
    cache_.emplace(configs[i].index(), results[i]);
    ++measured_;
    if (writer_ != nullptr && !writer_->Append(RecordOf(task_, configs[i], results[i])).ok()) {
      std::fprintf(stderr, "warning: cannot append to the cache\n");
    }
  }
}
}  // namespace tunefleet
