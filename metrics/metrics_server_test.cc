#include "metrics/metrics_server.h"

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "metrics/metrics_testing.h"
#include "prometheus/counter.h"
#include "prometheus/registry.h"

namespace tunefleet {
namespace {

using ::testing::HasSubstr;

TEST(MetricsServerTest, ServesProcessMetricsBuildInfoAndTheGivenRegistry) {
  auto registry = std::make_shared<prometheus::Registry>();
  prometheus::BuildCounter()
      .Name("tunefleet_test_events_total")
      .Help("Events seen by the test")
      .Register(*registry)
      .Add({})
      .Increment(3);
  absl::StatusOr<std::unique_ptr<MetricsServer>> server =
      StartMetricsServer("127.0.0.1:0", {registry});
  ASSERT_TRUE(server.ok()) << server.status();
  ASSERT_GT((*server)->port(), 0);
  EXPECT_EQ((*server)->url(), absl::StrCat("http://127.0.0.1:", (*server)->port(), "/metrics"));

  absl::StatusOr<std::string> body = ScrapeForTest((*server)->port());
  ASSERT_TRUE(body.ok()) << body.status();
  EXPECT_THAT(*body, HasSubstr("tunefleet_test_events_total 3\n"));
  EXPECT_THAT(*body, HasSubstr("tunefleet_build_info{"));
  for (const char* family : {"process_cpu_seconds_total", "process_resident_memory_bytes",
                             "process_virtual_memory_bytes", "process_open_fds", "process_max_fds",
                             "process_start_time_seconds"}) {
    EXPECT_THAT(*body, HasSubstr(absl::StrCat("\n", family, " "))) << family;
  }
}

// What a worker daemon (builder, agent, tuner) serves: nothing but the
// process and build figures.
TEST(MetricsServerTest, PromtoolAcceptsAWorkerDaemonsScrape) {
  if (!PromtoolInstalled()) {
    GTEST_SKIP() << kPromtoolPath << " not installed (Debian package 'prometheus'); lint not run";
  }
  absl::StatusOr<std::unique_ptr<MetricsServer>> server = StartMetricsServer("127.0.0.1:0");
  ASSERT_TRUE(server.ok()) << server.status();
  absl::StatusOr<std::string> body = ScrapeForTest((*server)->port());
  ASSERT_TRUE(body.ok()) << body.status();
  const absl::Status lint = PromtoolCheckMetrics(*body);
  EXPECT_TRUE(lint.ok()) << lint << "\n" << *body;
}

TEST(MetricsServerTest, AnswersNotFoundOffThePath) {
  absl::StatusOr<std::unique_ptr<MetricsServer>> server = StartMetricsServer("127.0.0.1:0");
  ASSERT_TRUE(server.ok()) << server.status();
  absl::StatusOr<std::string> response = HttpGetForTest((*server)->port(), "/secrets");
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_THAT(response->substr(0, response->find("\r\n")), HasSubstr(" 404"));
}

TEST(MetricsServerTest, ReportsAPortInUse) {
  absl::StatusOr<std::unique_ptr<MetricsServer>> first = StartMetricsServer("127.0.0.1:0");
  ASSERT_TRUE(first.ok()) << first.status();
  const std::string taken = absl::StrCat("127.0.0.1:", (*first)->port());
  absl::StatusOr<std::unique_ptr<MetricsServer>> second = StartMetricsServer(taken);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable) << second.status();
  EXPECT_THAT(second.status().message(), HasSubstr(taken));
}

TEST(MetricsServerTest, RejectsAnAddressWithoutPort) {
  absl::StatusOr<std::unique_ptr<MetricsServer>> server = StartMetricsServer("localhost");
  ASSERT_FALSE(server.ok());
  EXPECT_EQ(server.status().code(), absl::StatusCode::kInvalidArgument) << server.status();
  EXPECT_THAT(server.status().message(), HasSubstr("localhost"));
}

TEST(MetricsServerTest, RejectsANullCollectable) {
  absl::StatusOr<std::unique_ptr<MetricsServer>> server =
      StartMetricsServer("127.0.0.1:0", {nullptr});
  ASSERT_FALSE(server.ok());
  EXPECT_EQ(server.status().code(), absl::StatusCode::kInvalidArgument) << server.status();
}

}  // namespace
}  // namespace tunefleet
