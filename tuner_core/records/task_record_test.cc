#include "tuner_core/records/task_record.h"

#include "gtest/gtest.h"

namespace tunefleet {
namespace {

std::unique_ptr<Task> DenseTask(int m, const std::string& target = "llvm") {
  return Task::Make("dense_pack.x86", "dense", {{"M", m}, {"N", 32}, {"K", 32}, {"layout", "NK"}},
                    target)
      .value();
}

TEST(TaskRecordTest, ARecordIsItsTasksAndNoOtherOnes) {
  const std::unique_ptr<Task> task = DenseTask(16);
  const Config config = task->space().Get(0).value();
  MeasureResult result;
  result.costs = {1e-3};
  const Record record = RecordOf(*task, config, result);
  EXPECT_EQ(record.config, config.ToJson());
  EXPECT_TRUE(IsRecordOf(record, *task));
  EXPECT_TRUE(IsRecordOf(Record::FromLine(record.ToLine()).value(), *task));
  EXPECT_FALSE(IsRecordOf(record, *DenseTask(24)));  // other args
  EXPECT_FALSE(IsRecordOf(record, *DenseTask(16, "llvm -mcpu=znver3")));
  Record other_template = record;
  other_template.task_name = "dense_gemm.x86";
  EXPECT_FALSE(IsRecordOf(other_template, *task));
}

}  // namespace
}  // namespace tunefleet
