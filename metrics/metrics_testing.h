// Test helpers for anything that serves Prometheus metrics: an HTTP/1.0 GET
// against a local port, and `promtool check metrics` (Debian package
// `prometheus`) over an exposition text. Tests only.
//
//   TF_ASSERT_OK_AND_ASSIGN-style:
//   absl::StatusOr<std::string> body = ScrapeForTest(server->port());
//   if (!PromtoolInstalled()) GTEST_SKIP() << ...;
//   EXPECT_TRUE(PromtoolCheckMetrics(*body).ok());
#ifndef TUNEFLEET_METRICS_METRICS_TESTING_H_
#define TUNEFLEET_METRICS_METRICS_TESTING_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tunefleet {

inline constexpr char kPromtoolPath[] = "/usr/bin/promtool";

// The whole response (status line, headers, body) to "GET <path>" on
// 127.0.0.1:<port>; a 10 s receive timeout fails a hung server.
[[nodiscard]] absl::StatusOr<std::string> HttpGetForTest(int port, const std::string& path);

// The body of a 200 response to GET /metrics on 127.0.0.1:<port>.
[[nodiscard]] absl::StatusOr<std::string> ScrapeForTest(int port);

bool PromtoolInstalled();

// OK when `promtool check metrics` accepts `exposition` with no lint
// problem; FailedPrecondition carrying promtool's output otherwise.
[[nodiscard]] absl::Status PromtoolCheckMetrics(const std::string& exposition);

}  // namespace tunefleet

#endif  // TUNEFLEET_METRICS_METRICS_TESTING_H_
