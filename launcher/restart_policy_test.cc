#include "launcher/restart_policy.h"

#include <signal.h>
#include <sys/wait.h>

#include "gtest/gtest.h"

namespace tunefleet {
namespace {

TEST(RestartPolicyTest, BacksOffExponentiallyUpToTheMaximum) {
  RestartPolicy policy(RestartOptions{
      .initial_backoff_s = 1, .max_backoff_s = 3, .max_restarts = 10, .stable_after_s = 60});
  policy.Started(0);
  EXPECT_EQ(policy.Died(1), 2.0);  // 1 s
  policy.Started(2);
  EXPECT_EQ(policy.Died(3), 5.0);  // 2 s
  policy.Started(5);
  EXPECT_EQ(policy.Died(6), 9.0);  // 4 s, capped at 3
  EXPECT_EQ(policy.restarts(), 3);
}

TEST(RestartPolicyTest, GivesUpAfterTheRestartLimitWithoutAStableRun) {
  RestartPolicy policy(RestartOptions{
      .initial_backoff_s = 1, .max_backoff_s = 30, .max_restarts = 2, .stable_after_s = 60});
  policy.Started(0);
  ASSERT_TRUE(policy.Died(1).has_value());
  policy.Started(2);
  ASSERT_TRUE(policy.Died(3).has_value());
  policy.Started(5);
  EXPECT_FALSE(policy.Died(6).has_value());
}

TEST(RestartPolicyTest, AStableRunStartsANewStreak) {
  RestartPolicy policy(RestartOptions{
      .initial_backoff_s = 1, .max_backoff_s = 30, .max_restarts = 1, .stable_after_s = 60});
  policy.Started(0);
  ASSERT_TRUE(policy.Died(1).has_value());
  policy.Started(2);
  // Ran 100 s: the earlier crash does not count against it.
  const std::optional<double> again = policy.Died(102);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(*again, 103.0);
  policy.Started(103);
  EXPECT_FALSE(policy.Died(104).has_value());
}

TEST(DescribeExitTest, NamesTheExitCodeOrTheSignal) {
  EXPECT_EQ(DescribeExit(W_EXITCODE(3, 0)), "exited with code 3");
  EXPECT_EQ(DescribeExit(W_EXITCODE(0, SIGKILL)), "killed by SIGKILL");
  EXPECT_EQ(DescribeExit(W_EXITCODE(0, SIGSEGV) | WCOREFLAG), "killed by SIGSEGV (core dumped)");
}

}  // namespace
}  // namespace tunefleet
