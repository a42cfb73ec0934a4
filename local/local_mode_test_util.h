// Scaffolding for tests of local mode (testonly): the runner child built with
// the test, and a record file per test.
//
//   class TuneCommandTest : public LocalModeTest {};   // SetUp does both
//   TEST_F(TuneCommandTest, ...) { o.log = log_; ... }
#ifndef TUNEFLEET_LOCAL_LOCAL_MODE_TEST_UTIL_H_
#define TUNEFLEET_LOCAL_LOCAL_MODE_TEST_UTIL_H_

#include <cstdint>
#include <string>

#include "gtest/gtest.h"
#include "proto/fleet.pb.h"

namespace tunefleet {

// Points TUNEFLEET_RUNNER at //kernel_runtime:tunefleet_runner in the test's
// runfiles (the test lists it as data). False outside `bazel test`.
[[nodiscard]] bool UseTestRunner();

// $TEST_TMPDIR/<running test's name>.jsonl, removed if it exists.
std::string FreshTestLog();

// A quick search of `spec` for tests: the random tuner with `seed`, 2 runs x
// 2 repeats and no cooldown per trial, the top 2 configs validated in 2
// passes each.
void MakeQuick(proto::JobSpec& spec, uint64_t seed);

class LocalModeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(UseTestRunner()) << "TEST_SRCDIR is not set: run under bazel test";
    log_ = FreshTestLog();
  }

  std::string log_;
};

}  // namespace tunefleet

#endif  // TUNEFLEET_LOCAL_LOCAL_MODE_TEST_UTIL_H_
