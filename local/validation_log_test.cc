// WriteValidationsToLog on hand-made files: the matched lines get their
// "validation", every other line keeps its bytes.
#include "local/validation_log.h"

#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "tuner_core/records/record.h"

namespace tunefleet {
namespace {

Record MakeRecord(int index, double cost, int m = 64) {
  Record r;
  r.target = "llvm -mcpu=generic";
  r.task_name = "dense_pack.x86";
  r.workload_name = "dense";
  r.workload_args = {{"M", m}, {"N", 64}, {"K", 64}, {"layout", "NK"}};
  r.config = {{"index", index}, {"code_hash", nullptr}, {"entity", nlohmann::json::array()}};
  r.result.costs = {cost};
  r.result.timestamp = 1700000000;
  return r;
}

Validation MakeValidation(double cost) {
  Validation v;
  v.pass_costs = {cost, cost * 1.01, cost * 0.99};
  return v;
}

class ValidationLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = std::string(std::getenv("TEST_TMPDIR")) + "/" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".jsonl";
    std::remove(path_.c_str());
  }
  void Write(const std::string& content) { std::ofstream(path_, std::ios::binary) << content; }
  std::string Read() {
    std::ifstream in(path_, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  }
  std::string path_;
};

TEST_F(ValidationLogTest, SetsValidationOnMatchedLinesAndKeepsTheOthersByteIdentical) {
  Record failed = MakeRecord(3, 1e9);
  failed.result.error_no = MeasureErrorNo::kRuntimeDevice;
  failed.result.error_msg = "crashed";
  const std::vector<std::string> lines = {
      MakeRecord(1, 2e-3).ToLine(),           "not a record at all",
      MakeRecord(2, 1e-3).ToLine(),           failed.ToLine(),
      MakeRecord(2, 1e-3, /*m=*/32).ToLine(),  // same config index, another workload
      MakeRecord(2, 0.9e-3).ToLine(),          // config 2 again, cheaper: this one is validated
  };
  std::string content;
  for (const std::string& l : lines) content += l + "\n";
  content += "{\"torn";  // an unterminated last line stays as it is
  Write(content);
  chmod(path_.c_str(), 0640);

  Record two = MakeRecord(2, 0.9e-3);
  two.validation = MakeValidation(1.1e-3);
  Record three = MakeRecord(3, 1e-3);  // only a failed line: nothing to validate
  three.validation = MakeValidation(1e-3);
  Record seven = MakeRecord(7, 1e-3);  // not in the file
  seven.validation = MakeValidation(1e-3);
  absl::StatusOr<int> changed = WriteValidationsToLog(path_, {two, three, seven});
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_EQ(*changed, 1);

  std::vector<std::string> after = absl::StrSplit(Read(), '\n');
  ASSERT_EQ(after.size(), lines.size() + 1);
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i == 5) continue;
    EXPECT_EQ(after[i], lines[i]) << "line " << i + 1;
  }
  EXPECT_EQ(after.back(), "{\"torn");
  absl::StatusOr<Record> validated = Record::FromLine(after[5]);
  ASSERT_TRUE(validated.ok()) << validated.status();
  ASSERT_TRUE(validated->validated());
  EXPECT_DOUBLE_EQ(validated->validation->cost_s(), 1.1e-3);
  EXPECT_DOUBLE_EQ(validated->result.MeanCost(), 0.9e-3);  // the search figure is kept
  struct stat st;
  ASSERT_EQ(stat(path_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
}

TEST_F(ValidationLogTest, ReplacesAnEarlierValidationAndLeavesTheFileAloneWhenNothingMatches) {
  Record one = MakeRecord(1, 1e-3);
  one.validation = MakeValidation(2e-3);
  Write(one.ToLine() + "\n");
  one.validation = MakeValidation(3e-3);
  ASSERT_EQ(WriteValidationsToLog(path_, {one}).value(), 1);
  const std::string line = Read();
  ASSERT_EQ(line.back(), '\n');
  EXPECT_DOUBLE_EQ(Record::FromLine(line.substr(0, line.size() - 1))->validation->cost_s(), 3e-3);

  const std::string before = Read();
  Record other = MakeRecord(9, 1e-3);
  other.validation = MakeValidation(1e-3);
  EXPECT_EQ(WriteValidationsToLog(path_, {other}).value(), 0);
  EXPECT_EQ(Read(), before);
}

TEST_F(ValidationLogTest, MissingFileIsNotFound) {
  EXPECT_EQ(WriteValidationsToLog(path_ + ".missing", {}).status().code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace tunefleet
