#include "tuner_core/cost_model/training_rows.h"

#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tuner_core/records/record.h"
#include "tuner_core/templates/task.h"
#include "tuner_core/templates/task_test_util.h"

namespace tunefleet {
namespace {

using ::testing::ElementsAre;

Record RecordOf(const Task& task, int64_t index, double cost) {
  Record r;
  r.target = task.target();
  r.task_name = task.name();
  r.workload_name = task.workload().name();
  r.workload_args = task.workload().args();
  r.config = task.space().Get(index)->ToJson();
  r.result.costs = {cost};
  return r;
}

TEST(TrainingRowsTest, GroupsByTemplateAndWorkloadInTheOrderFirstSeen) {
  std::unique_ptr<Task> a = DensePackTask(16, 32, 32), b = DensePackTask(64, 32, 32);
  const std::vector<Record> records = {RecordOf(*b, 0, 1), RecordOf(*a, 1, 1), RecordOf(*b, 2, 1)};
  const std::vector<WorkloadRecords> groups = GroupByWorkload(records);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].workload_args, b->workload().args());
  EXPECT_THAT(groups[0].records, ElementsAre(&records[0], &records[2]));
  EXPECT_EQ(groups[1].template_name, "dense_pack.x86");
  EXPECT_THAT(groups[1].records, ElementsAre(&records[1]));
  const std::vector<WorkloadRecords> kept =
      GroupByWorkload(records, [&](const Record& r) { return &r != &records[0]; });
  ASSERT_EQ(kept.size(), 2u);
  EXPECT_THAT(kept[0].records, ElementsAre(&records[1]));
  EXPECT_THAT(kept[1].records, ElementsAre(&records[2]));
}

TEST(TrainingRowsTest, EachRecordIsItsConfigsRowOnAnyThreadCount) {
  std::unique_ptr<Task> task = DensePackTask(16, 32, 32);
  std::vector<Record> records;
  for (int64_t i = 0; i < 100; ++i) records.push_back(RecordOf(*task, i, 0.001 * (i + 1)));
  records[3].config = nlohmann::json{{"entity", "not a list"}};  // no row
  records[5].result.error_no = MeasureErrorNo::kRuntimeDevice;   // a row, throughput 0
  const std::vector<WorkloadRecords> groups = GroupByWorkload(records);
  ASSERT_EQ(groups.size(), 1u);
  absl::StatusOr<TrainingRows> one = FeaturizeRecords(groups[0], FeatureKind::kKnob, 1);
  absl::StatusOr<TrainingRows> four = FeaturizeRecords(groups[0], FeatureKind::kKnob, 4);
  ASSERT_TRUE(one.ok()) << one.status();
  ASSERT_TRUE(four.ok()) << four.status();
  EXPECT_EQ(one->skipped, 1);
  ASSERT_EQ(one->throughputs.size(), 99u);
  EXPECT_EQ(one->used[3], 4u);
  EXPECT_EQ(one->throughputs[4], 0);  // records[5]
  EXPECT_DOUBLE_EQ(one->throughputs[0], records[0].result.Throughput());
  EXPECT_EQ(one->rows.values, four->rows.values);
  EXPECT_EQ(one->throughputs, four->throughputs);
  // A record's own index is not trusted: the entity says which config it is.
  std::vector<Record> reindexed = {records[7]};
  reindexed[0].config["index"] = 12345;
  absl::StatusOr<TrainingRows> again =
      FeaturizeRecords(GroupByWorkload(reindexed)[0], FeatureKind::kKnob);
  ASSERT_TRUE(again.ok()) << again.status();
  ASSERT_EQ(again->throughputs.size(), 1u);
  const int nf = one->rows.num_features;
  EXPECT_EQ(again->rows.values, std::vector<float>(one->rows.values.begin() + 6 * nf,
                                                   one->rows.values.begin() + 7 * nf));
}

TEST(TrainingRowsTest, AnUnknownTemplateIsAnError) {
  std::unique_ptr<Task> task = DensePackTask(16, 32, 32);
  std::vector<Record> records = {RecordOf(*task, 0, 1)};
  records[0].task_name = "no_such.x86";
  EXPECT_FALSE(FeaturizeRecords(GroupByWorkload(records)[0], FeatureKind::kKnob).ok());
}

}  // namespace
}  // namespace tunefleet
