#include "tracker/store_writer.h"

#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto_convert/measure_result.h"
#include "proto_convert/run_request.h"
#include "proto_convert/task_spec.h"
#include "tracker/store/failing_store.h"

namespace tunefleet {
namespace {

using ::testing::HasSubstr;

constexpr char kArgs[] = R"({"M":32,"N":32,"K":32,"layout":"NK"})";

class StoreWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    job_.stored.job_id = "job-1";
    job_.stored.sequence = 1;
    proto::TaskSpec* task = job_.stored.spec.add_tasks()->mutable_task();
    task->set_workload_name("dense");
    task->set_workload_args_json(kArgs);
    task->set_target("llvm");
    job_.tasks = LoadJobTasks(job_.stored.spec).value();
    trial_.id = 0;
    trial_.config_index = 3;
    trial_.config_json = job_.tasks[0].task->space().Get(3).value().ToJson().dump();
  }

  FailingStore store_;
  StoreWriter writer_{&store_};
  Job job_;
  Trial trial_;
};

TEST_F(StoreWriterTest, WritesAJobItsTrialsAttemptsAndResult) {
  ASSERT_TRUE(writer_.PutJob(job_.stored).ok());
  ASSERT_TRUE(writer_.PutNewTrials(job_, {trial_}).ok());
  trial_.attempts = 2;
  ASSERT_TRUE(writer_.PutAttempts(job_, trial_).ok());
  std::vector<StoredTrial> rows = store_.LoadTrials("job-1").value();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].attempts, 2);
  EXPECT_FALSE(rows[0].done);
  EXPECT_EQ(rows[0].config_index, 3);

  trial_.result.add_costs(1e-3);
  trial_.result.set_timestamp(1.7e9);
  ASSERT_TRUE(writer_.PutResult(job_, trial_).ok());
  rows = store_.LoadTrials("job-1").value();
  EXPECT_TRUE(rows[0].done);
  EXPECT_EQ(rows[0].result.costs(0), 1e-3);
  std::vector<std::string> lines = store_.LoadRecordLines("job-1").value();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], RecordLineOf(job_, trial_));
  EXPECT_THAT(lines[0], HasSubstr("\"dense\""));
}

TEST_F(StoreWriterTest, FailedWritesSayWhatWasNotStoredAndWhy) {
  ASSERT_TRUE(writer_.PutJob(job_.stored).ok());
  store_.FailWrites(absl::UnavailableError("disk full"));
  absl::Status job = writer_.PutJob(job_.stored);
  EXPECT_EQ(job.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(job.message(), HasSubstr("store write failed (job job-1 QUEUED): disk full"));
  EXPECT_THAT(writer_.PutNewTrials(job_, {trial_}).message(), HasSubstr("new trials of job job-1"));
  EXPECT_THAT(writer_.PutAttempts(job_, trial_).message(),
              HasSubstr("attempts of job job-1 trial 0"));
  EXPECT_THAT(writer_.PutResult(job_, trial_).message(), HasSubstr("result of job job-1 trial 0"));
  EXPECT_EQ(store_.refused(), 4);
  EXPECT_TRUE(store_.LoadTrials("job-1").value().empty());
}

}  // namespace
}  // namespace tunefleet
