#include "local/build_ahead.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernel_runtime/thread_pool.h"
#include "tuner_core/templates/task_test_util.h"

namespace tunefleet {
namespace {

TEST(FreeCpusTest, TheCpusBeyondTheMeasurementsThreads) {
  const std::vector<int> allowed = AllowedCpus();
  ASSERT_FALSE(allowed.empty());
  EXPECT_TRUE(FreeCpus(0).empty()) << "0 threads: the child takes every CPU";
  EXPECT_TRUE(FreeCpus(static_cast<int>(allowed.size())).empty());
  EXPECT_TRUE(FreeCpus(static_cast<int>(allowed.size()) + 3).empty());
  if (allowed.size() >= 2) {
    EXPECT_EQ(FreeCpus(1), std::vector<int>(allowed.begin() + 1, allowed.end()));
  }
}

// What BuildAhead hands back is, job by job and in the jobs' order, what
// building each config alone makes: the same artifact or the same error,
// whether builder threads or only the taking thread built them.
TEST(BuildAheadTest, BuildsEveryJobInOrderAsABuildAloneWould) {
  std::unique_ptr<Task> task = DensePackTask(16, 32, 24);
  ASSERT_NE(task, nullptr);
  absl::StatusOr<TargetSpec> target = ParseTarget(task->target());
  ASSERT_TRUE(target.ok()) << target.status();
  std::vector<BuildJob> jobs;
  for (int64_t index : {0, 5, 17, 40, 3, 99}) {
    absl::StatusOr<Config> config = task->space().Get(index % task->space().size());
    ASSERT_TRUE(config.ok()) << config.status();
    jobs.push_back({task.get(), &*target, *config});
  }
  std::vector<BuildResult> alone;
  for (const BuildJob& job : jobs) {
    alone.push_back(BuildCandidate(task->tmpl(), task->workload(), job.config, *target));
  }
  const std::vector<int> all_cpus = AllowedCpus();
  for (const std::vector<int>& cpus : {std::vector<int>{}, all_cpus}) {
    BuildAhead ahead(jobs, BuildOptions(), cpus);
    const std::vector<BuildResult> built = ahead.Take();
    ASSERT_EQ(built.size(), jobs.size());
    for (size_t i = 0; i < jobs.size(); ++i) {
      EXPECT_EQ(built[i].error_no, alone[i].error_no) << "job " << i << ": " << built[i].error_msg;
      EXPECT_EQ(built[i].artifact.hash, alone[i].artifact.hash) << "job " << i;
      EXPECT_EQ(built[i].artifact.entry_name, alone[i].artifact.entry_name) << "job " << i;
    }
    EXPECT_GT(ahead.wall_seconds(), 0);
  }
}

TEST(BuildAheadTest, AJobWithoutATargetIsACompileError) {
  std::unique_ptr<Task> task = DensePackTask(8, 16, 8);
  ASSERT_NE(task, nullptr);
  absl::StatusOr<Config> config = task->space().Get(0);
  ASSERT_TRUE(config.ok()) << config.status();
  BuildAhead ahead({{task.get(), nullptr, *config}}, BuildOptions(), AllowedCpus());
  const std::vector<BuildResult> built = ahead.Take();
  ASSERT_EQ(built.size(), 1u);
  EXPECT_EQ(built[0].error_no, MeasureErrorNo::kCompileHost);
  EXPECT_NE(built[0].error_msg.find("no target"), std::string::npos) << built[0].error_msg;
}

}  // namespace
}  // namespace tunefleet
