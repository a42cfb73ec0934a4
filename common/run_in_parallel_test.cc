#include "common/run_in_parallel.h"

#include <atomic>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace tunefleet {
namespace {

TEST(RunInParallelTest, CallsEachIndexOnceOnSeveralThreads) {
  std::vector<std::atomic<int>> calls(1000);
  std::mutex mu;
  std::set<std::thread::id> ids;
  RunInParallel(calls.size(), 4, [&](size_t i) {
    ++calls[i];
    std::lock_guard<std::mutex> lock(mu);
    ids.insert(std::this_thread::get_id());
  });
  for (const std::atomic<int>& c : calls) EXPECT_EQ(c.load(), 1);
  EXPECT_GE(ids.size(), 1u);
  EXPECT_LE(ids.size(), 4u);
}

TEST(RunInParallelTest, FewItemsRunOnTheCallersThread) {
  const std::thread::id caller = std::this_thread::get_id();
  int calls = 0;
  RunInParallel(
      31, 8,
      [&](size_t) {
        EXPECT_EQ(std::this_thread::get_id(), caller);
        ++calls;  // one thread: no race
      },
      /*items_per_thread=*/32);
  EXPECT_EQ(calls, 31);
  RunInParallel(0, 8, [&](size_t) { ++calls; });
  EXPECT_EQ(calls, 31);
}

}  // namespace
}  // namespace tunefleet
