// What tests of the tuners, features and cost models share: the dense task
// whose space they count on. Test-only (gtest assertions); include from
// *_test.cc files.
#ifndef TUNEFLEET_TUNER_CORE_TEMPLATES_TASK_TEST_UTIL_H_
#define TUNEFLEET_TUNER_CORE_TEMPLATES_TASK_TEST_UTIL_H_

#include <cstdint>
#include <memory>
#include <utility>

#include "gtest/gtest.h"
#include "tuner_core/templates/task.h"

namespace tunefleet {

// dense_pack.x86 of M x N x K on target "llvm"; fails the test (and returns
// null) when it cannot be made.
inline std::unique_ptr<Task> DensePackTask(int64_t m, int64_t n, int64_t k) {
  auto task = Task::Make("dense_pack.x86", "dense", {{"M", m}, {"N", n}, {"K", k}}, "llvm");
  EXPECT_TRUE(task.ok()) << task.status();
  return task.ok() ? std::move(task).value() : nullptr;
}

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_TEMPLATES_TASK_TEST_UTIL_H_
