// MemoizingMeasurer: measures each config of one task once, in local mode,
// and replays the cached result after; every fresh measurement is appended to
// a records file that later runs preload (tuner_bench compares tuners on the
// same measured costs).
#ifndef TUNEFLEET_BENCH_MEMOIZING_MEASURER_H_
#define TUNEFLEET_BENCH_MEMOIZING_MEASURER_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "local/local_measurer.h"
#include "tuner_core/records/record_file.h"
#include "tuner_core/templates/task.h"
#include "tuner_core/tuners/tuner.h"

namespace tunefleet {

// Measures each config of one task once; replays the cached result after.
class MemoizingMeasurer final : public MeasurerInterface {
 public:
  MemoizingMeasurer(const Task& task, LocalMeasurerOptions options, RecordWriter* writer)
      : task_(task), options_(std::move(options)), writer_(writer) {}

  void Preload(int64_t index, const MeasureResult& result) { cache_.emplace(index, result); }

  std::vector<MeasureResult> Measure(const std::vector<Config>& configs) override {
    std::vector<Config> missing;
    for (const Config& c : configs) {
      if (!cache_.contains(c.index())) missing.push_back(c);
    }
    if (!missing.empty()) MeasureAndCache(missing);
    std::vector<MeasureResult> results;
    for (const Config& c : configs) results.push_back(cache_.at(c.index()));
    return results;
  }

  int64_t measured() const { return measured_; }
  int64_t cached() const { return static_cast<int64_t>(cache_.size()); }
  double measure_wall_seconds() const { return measure_wall_seconds_; }
  const absl::flat_hash_map<int64_t, MeasureResult>& results() const { return cache_; }

 private:
  void MeasureAndCache(const std::vector<Config>& configs);

  const Task& task_;
  const LocalMeasurerOptions options_;
  RecordWriter* writer_;
  std::unique_ptr<LocalMeasurer> inner_;
  absl::flat_hash_map<int64_t, MeasureResult> cache_;
  int64_t measured_ = 0;
  double measure_wall_seconds_ = 0;
};

}  // namespace tunefleet

#endif  // TUNEFLEET_BENCH_MEMOIZING_MEASURER_H_
