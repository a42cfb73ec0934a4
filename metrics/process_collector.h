// ProcessCollector: a prometheus-cpp Collectable that every daemon's /metrics
// serves (StartMetricsServer adds it): the standard process metrics, read
// from /proc at each scrape (process_stats.h), and tunefleet_build_info.
//
//   process_cpu_seconds_total       counter  user + system CPU time
//   process_resident_memory_bytes   gauge
//   process_virtual_memory_bytes    gauge
//   process_open_fds                gauge
//   process_max_fds                 gauge    soft RLIMIT_NOFILE
//   process_start_time_seconds      gauge    since the Unix epoch
//   tunefleet_build_info{version,compiler,build_type}  gauge, always 1
//
// A scrape whose /proc read fails carries build_info only (no made-up
// zeros). Tests pass a fake reader.
//
//   auto process = std::make_shared<ProcessCollector>();
//   exposer.RegisterCollectable(process);
#ifndef TUNEFLEET_METRICS_PROCESS_COLLECTOR_H_
#define TUNEFLEET_METRICS_PROCESS_COLLECTOR_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "metrics/build_info.h"
#include "metrics/process_stats.h"
#include "prometheus/collectable.h"
#include "prometheus/metric_family.h"

namespace tunefleet {

class ProcessCollector final : public prometheus::Collectable {
 public:
  using StatsReader = std::function<absl::StatusOr<ProcessStats>()>;

  // This process, this binary.
  ProcessCollector();
  // `read_stats` is called once per Collect(), from the scraping thread.
  ProcessCollector(StatsReader read_stats, BuildInfo build_info);

  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  const StatsReader read_stats_;
  const BuildInfo build_info_;
};

// One counter of a daemon's own, read from `value` at each scrape (a worker
// that counts something itself, e.g. the agent's refused artifacts).
class CallbackCounter final : public prometheus::Collectable {
 public:
  CallbackCounter(std::string name, std::string help, std::function<double()> value);
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  const std::string name_;
  const std::string help_;
  const std::function<double()> value_;
};

}  // namespace tunefleet

#endif  // TUNEFLEET_METRICS_PROCESS_COLLECTOR_H_
