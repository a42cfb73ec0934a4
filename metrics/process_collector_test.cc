#include "metrics/process_collector.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "metrics/metrics_testing.h"
#include "prometheus/text_serializer.h"

namespace tunefleet {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string Serialize(const prometheus::Collectable& collector) {
  return prometheus::TextSerializer().Serialize(collector.Collect());
}

ProcessStats SomeStats() {
  ProcessStats stats;
  stats.cpu_seconds = 12.5;
  stats.resident_memory_bytes = 4096 * 100;
  stats.virtual_memory_bytes = 1 << 30;
  stats.open_fds = 17;
  stats.max_fds = 1024;
  stats.start_time_seconds = 1700000000.25;
  return stats;
}

const BuildInfo kBuild = {"0.1", "gcc 12.2.0", "optimized"};

TEST(ProcessCollectorTest, ExportsTheStandardProcessFamiliesAndBuildInfo) {
  ProcessCollector collector([] { return SomeStats(); }, kBuild);
  const std::string text = Serialize(collector);
  EXPECT_THAT(text, HasSubstr("# TYPE process_cpu_seconds_total counter\n"));
  EXPECT_THAT(text, HasSubstr("process_cpu_seconds_total 12.5\n"));
  EXPECT_THAT(text, HasSubstr("process_resident_memory_bytes 409600\n"));
  EXPECT_THAT(text, HasSubstr("process_virtual_memory_bytes 1073741824\n"));
  EXPECT_THAT(text, HasSubstr("process_open_fds 17\n"));
  EXPECT_THAT(text, HasSubstr("process_max_fds 1024\n"));
  EXPECT_THAT(text, HasSubstr("# TYPE process_start_time_seconds gauge\n"));
  EXPECT_THAT(text, HasSubstr("# TYPE tunefleet_build_info gauge\n"));
  EXPECT_THAT(
      text,
      HasSubstr(
          R"(tunefleet_build_info{build_type="optimized",compiler="gcc 12.2.0",version="0.1"} 1)"));
}

TEST(ProcessCollectorTest, ReadsTheStatsAtEachCollect) {
  double cpu = 1;
  ProcessCollector collector(
      [&cpu] {
        ProcessStats stats = SomeStats();
        stats.cpu_seconds = cpu;
        return stats;
      },
      kBuild);
  EXPECT_THAT(Serialize(collector), HasSubstr("process_cpu_seconds_total 1\n"));
  cpu = 2.5;
  EXPECT_THAT(Serialize(collector), HasSubstr("process_cpu_seconds_total 2.5\n"));
}

TEST(ProcessCollectorTest, AFailedReadLeavesOutProcessFamiliesButKeepsBuildInfo) {
  ProcessCollector collector(
      []() -> absl::StatusOr<ProcessStats> { return absl::NotFoundError("no /proc"); }, kBuild);
  const std::string text = Serialize(collector);
  EXPECT_THAT(text, HasSubstr("tunefleet_build_info{"));
  EXPECT_THAT(text, Not(HasSubstr("process_")));
}

TEST(ProcessCollectorTest, TheRealCollectorNamesThisBuild) {
  const std::string text = Serialize(ProcessCollector());
  EXPECT_THAT(text, HasSubstr(absl::StrCat("version=\"", kTunefleetVersion, "\"")));
  EXPECT_THAT(text, HasSubstr("process_resident_memory_bytes "));
}

TEST(ProcessCollectorTest, PromtoolAcceptsTheExposition) {
  if (!PromtoolInstalled()) {
    GTEST_SKIP() << kPromtoolPath << " not installed (Debian package 'prometheus'); lint not run";
  }
  ProcessCollector collector([] { return SomeStats(); }, kBuild);
  const absl::Status lint = PromtoolCheckMetrics(Serialize(collector));
  EXPECT_TRUE(lint.ok()) << lint;
}

TEST(CallbackCounterTest, ReadsItsValueAtEachScrapeAndPassesPromtool) {
  int refused = 0;
  CallbackCounter counter("tunefleet_agent_artifacts_refused_total", "Artifacts refused",
                          [&refused] { return static_cast<double>(refused); });
  EXPECT_THAT(Serialize(counter), HasSubstr("tunefleet_agent_artifacts_refused_total 0\n"));
  refused = 3;
  EXPECT_THAT(Serialize(counter), HasSubstr("tunefleet_agent_artifacts_refused_total 3\n"));
  if (PromtoolInstalled()) {
    const absl::Status lint = PromtoolCheckMetrics(Serialize(counter));
    EXPECT_TRUE(lint.ok()) << lint;
  }
}

}  // namespace
}  // namespace tunefleet
