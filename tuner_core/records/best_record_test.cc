#include "tuner_core/records/best_record.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace tunefleet {
namespace {

Record MakeRecord(const std::string& task, int64_t m, const std::string& target, int64_t index,
                  double cost, MeasureErrorNo error_no = MeasureErrorNo::kNoError) {
  Record record;
  record.target = target;
  record.task_name = task;
  record.workload_name = "dense";
  record.workload_args = {{"M", m}, {"N", 64}, {"K", 64}, {"layout", "NK"}};
  record.config = {{"index", index}, {"code_hash", nullptr}, {"entity", nlohmann::json::array()}};
  record.result.error_no = error_no;
  record.result.costs = {error_no == MeasureErrorNo::kNoError ? cost : 1e9};
  return record;
}

int64_t IndexOf(const Record& record) { return record.config["index"].get<int64_t>(); }

TEST(BestRecordTest, PicksLowestMeanCostIgnoringFailedRecords) {
  std::vector<Record> records = {
      MakeRecord("dense_pack.x86", 64, "llvm", 0, 0.3),
      // A failed record whose costs look small must not win.
      MakeRecord("dense_pack.x86", 64, "llvm", 1, 0.0, MeasureErrorNo::kWrongAnswer),
      MakeRecord("dense_pack.x86", 64, "llvm", 2, 0.1),
      MakeRecord("dense_pack.x86", 64, "llvm", 3, 0.2),
  };
  records[1].result.costs = {1e-9};
  absl::StatusOr<Record> best = BestRecord(records, "", nullptr, "");
  ASSERT_TRUE(best.ok()) << best.status();
  EXPECT_EQ(IndexOf(*best), 2);
}

TEST(BestRecordTest, AValidatedRecordBeatsLuckierSearchFigures) {
  std::vector<Record> records = {
      MakeRecord("dense_pack.x86", 64, "llvm", 0, 0.05),  // lucky, never validated
      MakeRecord("dense_pack.x86", 64, "llvm", 1, 0.08),
      MakeRecord("dense_pack.x86", 64, "llvm", 2, 0.09),
  };
  records[1].validation.emplace();
  records[1].validation->pass_costs = {0.12, 0.11, 0.13};  // validated 0.12
  records[2].validation.emplace();
  records[2].validation->pass_costs = {0.10};  // validated 0.10: the best
  absl::StatusOr<Record> best = BestRecord(records, "", nullptr, "");
  ASSERT_TRUE(best.ok()) << best.status();
  EXPECT_EQ(IndexOf(*best), 2);
  std::vector<Record> per_task = BestPerTask(records);
  ASSERT_EQ(per_task.size(), 1u);
  EXPECT_EQ(IndexOf(per_task[0]), 2);
  // A validation whose every pass failed does not count as validated.
  records[2].validation->pass_costs.clear();
  best = BestRecord(records, "", nullptr, "");
  ASSERT_TRUE(best.ok()) << best.status();
  EXPECT_EQ(IndexOf(*best), 1);
}

TEST(BestRecordTest, FiltersByTaskArgsAndTarget) {
  std::vector<Record> records = {
      MakeRecord("dense_pack.x86", 64, "llvm", 0, 0.3),
      MakeRecord("dense_pack.x86", 128, "llvm", 1, 0.1),
      MakeRecord("dense_small.x86", 64, "llvm", 2, 0.05),
      MakeRecord("dense_pack.x86", 64, "llvm -mcpu=cortex-a72", 3, 0.01),
      MakeRecord("dense_pack.x86", 64, "llvm", 4, 0.2),
  };
  // Same args in another key order still match.
  const nlohmann::json args =
      nlohmann::json::parse(R"({"layout": "NK", "K": 64, "N": 64, "M": 64})");
  absl::StatusOr<Record> best = BestRecord(records, "dense_pack.x86", &args, "llvm");
  ASSERT_TRUE(best.ok()) << best.status();
  EXPECT_EQ(IndexOf(*best), 4);

  EXPECT_EQ(IndexOf(*BestRecord(records, "", &args, "")), 3);
  EXPECT_EQ(IndexOf(*BestRecord(records, "dense_pack.x86", nullptr, "llvm")), 1);
}

TEST(BestRecordTest, NoMatchIsNotFound) {
  std::vector<Record> records = {
      MakeRecord("dense_pack.x86", 64, "llvm", 0, 0.3, MeasureErrorNo::kRunTimeout),
  };
  EXPECT_EQ(BestRecord(records, "", nullptr, "").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(BestRecord({}, "dense_pack.x86", nullptr, "").status().code(),
            absl::StatusCode::kNotFound);
}

TEST(BestRecordTest, TieKeepsTheEarlierRecord) {
  std::vector<Record> records = {
      MakeRecord("t", 64, "llvm", 0, 0.1),
      MakeRecord("t", 64, "llvm", 1, 0.1),
  };
  EXPECT_EQ(IndexOf(*BestRecord(records, "", nullptr, "")), 0);
}

TEST(BestPerTaskTest, OneBestPerTaskWorkloadAndTargetInFirstSeenOrder) {
  std::vector<Record> records = {
      MakeRecord("dense_pack.x86", 64, "llvm", 0, 0.3),
      MakeRecord("dense_pack.x86", 128, "llvm", 1, 0.5),
      MakeRecord("dense_pack.x86", 64, "llvm", 2, 0.1),
      MakeRecord("dense_pack.x86", 64, "arm", 3, 0.7),
      MakeRecord("dense_pack.x86", 128, "llvm", 4, 0.4),
      MakeRecord("failing", 64, "llvm", 5, 0.0, MeasureErrorNo::kCompileHost),
  };
  std::vector<Record> best = BestPerTask(records);
  ASSERT_EQ(best.size(), 3u);
  EXPECT_EQ(IndexOf(best[0]), 2);
  EXPECT_EQ(IndexOf(best[1]), 4);
  EXPECT_EQ(IndexOf(best[2]), 3);
}

TEST(TopPerTaskTest, TheKBestOfEachTaskOneRecordPerConfig) {
  std::vector<Record> records = {
      MakeRecord("dense_pack.x86", 64, "llvm", 0, 0.3),
      MakeRecord("dense_pack.x86", 128, "llvm", 1, 0.5),
      MakeRecord("dense_pack.x86", 64, "llvm", 2, 0.1),
      MakeRecord("dense_pack.x86", 64, "llvm", 2, 0.15),  // the same config again
      MakeRecord("dense_pack.x86", 64, "llvm", 3, 0.2),
      MakeRecord("other", 64, "llvm", 4, 0.1),
      MakeRecord("dense_pack.x86", 64, "llvm", 5, 0.0, MeasureErrorNo::kCompileHost),
  };
  std::vector<TaskRecords> top = TopPerTask(records, 2);
  ASSERT_EQ(top.size(), 3u);
  ASSERT_EQ(top[0].top.size(), 2u);
  EXPECT_EQ(IndexOf(top[0].top[0]), 2);
  EXPECT_EQ(top[0].top[0].result.costs[0], 0.1);
  EXPECT_EQ(IndexOf(top[0].top[1]), 3);
  EXPECT_EQ(top[0].successes, 4);
  EXPECT_EQ(top[1].top.size(), 1u);
  EXPECT_EQ(IndexOf(top[2].top[0]), 4);
  // One task only; k = 1 is BestPerTask's pick.
  std::vector<TaskRecords> other = TopPerTask(records, 5, "other");
  ASSERT_EQ(other.size(), 1u);
  EXPECT_EQ(IndexOf(other[0].top[0]), 4);
  std::vector<Record> best = BestPerTask(records);
  for (size_t i = 0; i < best.size(); ++i) {
    EXPECT_EQ(IndexOf(best[i]), IndexOf(TopPerTask(records, 1)[i].top[0]));
  }
}

// Records written by hand may leave the index null (the entity names the
// config): two such configs are two, the same entity twice is one.
TEST(TopPerTaskTest, ConfigsWithoutAnIndexAreToldApartByTheirEntity) {
  auto by_entity = [](double cost, const std::string& reduce) {
    Record record = MakeRecord("conv", 64, "llvm", 0, cost);
    record.config = {
        {"index", nullptr}, {"code_hash", nullptr}, {"entity", {{"reduce", "ot", reduce}}}};
    return record;
  };
  std::vector<Record> records = {by_entity(0.1, "a"), by_entity(0.2, "a"), by_entity(0.3, "b")};
  std::vector<TaskRecords> top = TopPerTask(records, 5);
  ASSERT_EQ(top.size(), 1u);
  ASSERT_EQ(top[0].top.size(), 2u);
  EXPECT_EQ(top[0].top[0].result.costs[0], 0.1);
  EXPECT_EQ(top[0].top[1].result.costs[0], 0.3);
}

}  // namespace
}  // namespace tunefleet
