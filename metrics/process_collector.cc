#include "metrics/process_collector.h"

#include <string>
#include <utility>

#include "prometheus/client_metric.h"
#include "prometheus/metric_type.h"

namespace tunefleet {
namespace {

prometheus::MetricFamily OneSample(std::string name, std::string help, prometheus::MetricType type,
                                   double value) {
  prometheus::MetricFamily family;
  family.name = std::move(name);
  family.help = std::move(help);
  family.type = type;
  prometheus::ClientMetric sample;
  if (type == prometheus::MetricType::Counter) {
    sample.counter.value = value;
  } else {
    sample.gauge.value = value;
  }
  family.metric.push_back(std::move(sample));
  return family;
}

}  // namespace

ProcessCollector::ProcessCollector()
    : ProcessCollector([] { return ReadProcessStats(); }, CurrentBuildInfo()) {}

ProcessCollector::ProcessCollector(StatsReader read_stats, BuildInfo build_info)
    : read_stats_(std::move(read_stats)), build_info_(std::move(build_info)) {}

std::vector<prometheus::MetricFamily> ProcessCollector::Collect() const {
  std::vector<prometheus::MetricFamily> families;
  prometheus::MetricFamily build =
      OneSample("tunefleet_build_info", "The binary's version, compiler and build type (value 1)",
                prometheus::MetricType::Gauge, 1);
  build.metric[0].label = {{"build_type", build_info_.build_type},
                           {"compiler", build_info_.compiler},
                           {"version", build_info_.version}};
  families.push_back(std::move(build));

  const absl::StatusOr<ProcessStats> stats = read_stats_();
  if (!stats.ok()) return families;
  using prometheus::MetricType;
  families.push_back(OneSample("process_cpu_seconds_total",
                               "Total user and system CPU time spent in seconds",
                               MetricType::Counter, stats->cpu_seconds));
  families.push_back(OneSample("process_resident_memory_bytes", "Resident memory size in bytes",
                               MetricType::Gauge, stats->resident_memory_bytes));
  families.push_back(OneSample("process_virtual_memory_bytes", "Virtual memory size in bytes",
                               MetricType::Gauge, stats->virtual_memory_bytes));
  families.push_back(OneSample("process_open_fds", "Number of open file descriptors",
                               MetricType::Gauge, stats->open_fds));
  families.push_back(OneSample("process_max_fds", "Maximum number of open file descriptors",
                               MetricType::Gauge, stats->max_fds));
  families.push_back(OneSample("process_start_time_seconds",
                               "Start time of the process since unix epoch in seconds",
                               MetricType::Gauge, stats->start_time_seconds));
  return families;
}

CallbackCounter::CallbackCounter(std::string name, std::string help, std::function<double()> value)
    : name_(std::move(name)), help_(std::move(help)), value_(std::move(value)) {}

std::vector<prometheus::MetricFamily> CallbackCounter::Collect() const {
  return {OneSample(name_, help_, prometheus::MetricType::Counter, value_())};
}

}  // namespace tunefleet
