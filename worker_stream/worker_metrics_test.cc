#include "worker_stream/worker_metrics.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "metrics/metrics_testing.h"

namespace tunefleet {
namespace {

using ::testing::HasSubstr;

WorkerDaemonOptions OptionsListeningOn(const std::string& metrics_listen) {
  WorkerDaemonOptions options;
  options.tracker_address = "127.0.0.1:7070";
  options.name = "builder-test";
  options.metrics_listen = metrics_listen;
  return options;
}

TEST(WorkerMetricsTest, OffWhenNoAddressIsGiven) {
  absl::StatusOr<std::unique_ptr<MetricsServer>> server =
      StartWorkerMetrics(OptionsListeningOn(""));
  ASSERT_TRUE(server.ok()) << server.status();
  EXPECT_EQ(*server, nullptr);
}

// What --metrics_listen serves on a builder, an agent and a tuner.
TEST(WorkerMetricsTest, ServesProcessMetricsThatPromtoolAccepts) {
  absl::StatusOr<std::unique_ptr<MetricsServer>> server =
      StartWorkerMetrics(OptionsListeningOn("127.0.0.1:0"));
  ASSERT_TRUE(server.ok()) << server.status();
  ASSERT_NE(*server, nullptr);
  EXPECT_EQ((*server)->url(), absl::StrCat("http://127.0.0.1:", (*server)->port(), "/metrics"));
  absl::StatusOr<std::string> body = ScrapeForTest((*server)->port());
  ASSERT_TRUE(body.ok()) << body.status();
  EXPECT_THAT(*body, HasSubstr("tunefleet_build_info{"));
  EXPECT_THAT(*body, HasSubstr("\nprocess_cpu_seconds_total "));
  EXPECT_THAT(*body, HasSubstr("\nprocess_start_time_seconds "));
  if (!PromtoolInstalled()) {
    GTEST_SKIP() << kPromtoolPath << " not installed (Debian package 'prometheus'); lint not run";
  }
  const absl::Status lint = PromtoolCheckMetrics(*body);
  EXPECT_TRUE(lint.ok()) << lint << "\n" << *body;
}

TEST(WorkerMetricsTest, ABadAddressNamesTheFlag) {
  absl::StatusOr<std::unique_ptr<MetricsServer>> server =
      StartWorkerMetrics(OptionsListeningOn("9464"));
  ASSERT_FALSE(server.ok());
  EXPECT_EQ(server.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(server.status().message(), HasSubstr("--metrics_listen"));
  EXPECT_THAT(server.status().message(), HasSubstr("9464"));
}

}  // namespace
}  // namespace tunefleet
