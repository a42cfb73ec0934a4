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

}  // namespace
}  // namespace tunefleet
