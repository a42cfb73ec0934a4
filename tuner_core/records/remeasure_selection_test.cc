#include "tuner_core/records/remeasure_selection.h"

#include <fstream>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace {

using ::testing::HasSubstr;

Record MakeRecord(const std::string& task, int64_t index, double cost) {
  Record record;
  record.target = "llvm";
  record.task_name = task;
  record.workload_name = "dense";
  record.workload_args = {{"M", 64}, {"N", 64}, {"K", 64}, {"layout", "NK"}};
  record.config = {{"index", index}, {"code_hash", nullptr}, {"entity", nlohmann::json::array()}};
  record.result.costs = {cost};
  return record;
}

std::string WriteLog(const std::string& name, const std::string& contents) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path, std::ios::trunc) << contents;
  return path;
}

TEST(RemeasureSelectionTest, TheTopRecordsOfEachTaskWithTheLogsWarnings) {
  const std::string log = WriteLog(
      "selection.jsonl", MakeRecord("dense_pack.x86", 1, 0.3).ToLine() + "\n" +
                             MakeRecord("dense_pack.x86", 2, 0.1).ToLine() + "\n" +
                             "{not a record\n" + MakeRecord("dense_tiled", 7, 0.2).ToLine() + "\n");
  std::ostringstream warnings;
  absl::StatusOr<std::vector<TaskRecords>> tasks =
      SelectRecordsToRemeasure({.log = log, .top = 1}, warnings);
  ASSERT_TRUE(tasks.ok()) << tasks.status();
  ASSERT_EQ(tasks->size(), 2u);
  EXPECT_EQ((*tasks)[0].top.size(), 1u);
  EXPECT_EQ((*tasks)[0].top[0].config["index"], 2);
  EXPECT_EQ((*tasks)[0].successes, 2);
  EXPECT_THAT(warnings.str(), HasSubstr("warning: "));
  tasks = SelectRecordsToRemeasure({.log = log, .top = 5, .task = "dense_tiled"}, warnings);
  ASSERT_TRUE(tasks.ok()) << tasks.status();
  EXPECT_EQ(tasks->size(), 1u);
}

TEST(RemeasureSelectionTest, SaysWhatIsWrong) {
  std::ostringstream warnings;
  EXPECT_THAT(SelectRecordsToRemeasure({}, warnings).status().message(), HasSubstr("--log"));
  const std::string log =
      WriteLog("wrong.jsonl", MakeRecord("dense_pack.x86", 1, 0.3).ToLine() + "\n");
  EXPECT_THAT(SelectRecordsToRemeasure({.log = log, .top = 0}, warnings).status().message(),
              HasSubstr("--top must be in [1, 100], not 0"));
  EXPECT_THAT(SelectRecordsToRemeasure({.log = log, .passes = 21}, warnings).status().message(),
              HasSubstr("--passes"));
  absl::Status no_task =
      SelectRecordsToRemeasure({.log = log, .task = "conv2d_nchwc.x86"}, warnings).status();
  EXPECT_EQ(no_task.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(no_task.message(), HasSubstr("its tasks: dense_pack.x86"));
  EXPECT_EQ(SelectRecordsToRemeasure({.log = log + ".missing"}, warnings).status().code(),
            absl::StatusCode::kNotFound);
}

TEST(RemeasureSelectionTest, TopConfigsAreTheRecordsConfigsOrANamedError) {
  ConfigSpace space;
  ASSERT_TRUE(space.DefineKnob("mr", {4, 6, 8}).ok());
  TaskRecords task;
  for (int64_t index : {2, 0}) {
    Record r = MakeRecord("dense_pack.x86", index, 0.1);
    r.config = space.Get(index).value().ToJson();
    task.top.push_back(r);
  }
  absl::StatusOr<std::vector<Config>> configs = TopConfigs(task, space, "r.jsonl");
  ASSERT_TRUE(configs.ok()) << configs.status();
  ASSERT_EQ(configs->size(), 2u);
  EXPECT_EQ((*configs)[0].index(), 2);
  EXPECT_EQ((*configs)[1].index(), 0);
  task.top.push_back(MakeRecord("dense_pack.x86", 9, 0.1));  // no "mr" entity
  configs = TopConfigs(task, space, "r.jsonl");
  EXPECT_EQ(configs.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(configs.status().message(), HasSubstr("r.jsonl: a config of dense_pack.x86"));
  EXPECT_THAT(configs.status().message(), HasSubstr("does not fit the template's space"));
}

TEST(RemeasureSelectionTest, TableRowsLineUpUnderTheHeader) {
  EXPECT_EQ(RemeasureTableHeader(),
            "  config         recorded figure         re-measured   spread   ratio\n");
  EXPECT_EQ(RemeasureTableRow(17, 100, true, 95, 0.021),
            "  17               100.00 validated            95.00    2.1 %   0.950");
  EXPECT_EQ(RemeasureTableFailure(3, 50, false, "every pass failed"),
            "  3                 50.00 search     every pass failed");
}

}  // namespace
}  // namespace tunefleet
