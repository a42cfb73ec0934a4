#include "kernel_runtime/fake_runner.h"

#include "gtest/gtest.h"

namespace tunefleet {
namespace {

TEST(FakeRunnerTest, DefaultsToOneMillisecondPerRepeatAndRecordsRequests) {
  FakeRunner runner;
  proto::RunRequest request;
  request.set_artifact_hash("abc");
  request.mutable_options()->set_repeat(4);
  proto::RunResult result = runner.Run(request);
  EXPECT_EQ(result.error_no(), 0);
  EXPECT_EQ(result.costs_size(), 2);  // trimmed, like the real evaluator
  EXPECT_EQ(result.timed_repeats(), 4);
  ASSERT_EQ(runner.requests().size(), 1u);
  EXPECT_EQ(runner.requests()[0].artifact_hash(), "abc");
  // Unset options take the defaults: 3 repeats, 1 cost after trimming.
  EXPECT_EQ(runner.Run(proto::RunRequest()).costs_size(), 1);
}

TEST(FakeRunnerTest, AnswersWithTheTestsResponder) {
  FakeRunner runner([](const proto::RunRequest& request) {
    proto::RunResult result;
    result.set_error_no(7);
    result.set_error_msg(request.entry_name());
    return result;
  });
  proto::RunRequest request;
  request.set_entry_name("slow_kernel");
  EXPECT_EQ(runner.Run(request).error_msg(), "slow_kernel");
}

}  // namespace
}  // namespace tunefleet
