#include "tuner_core/records/record.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace {

using ::testing::HasSubstr;

Record DenseRecord() {
  Record record;
  record.target = "llvm -mcpu=znver3";
  record.task_name = "dense_pack.x86";
  record.workload_name = "dense";
  record.workload_args = {{"M", 512}, {"N", 256}, {"K", 128}, {"layout", "NK"}};
  record.config = nlohmann::json::parse(
      R"({"index": 8, "code_hash": null, "entity": [["tile_y", "sp", [-1, 4]], ["mr", "ot", 6]]})");
  record.result.costs = {0.0012, 0.0011, 0.0013};
  record.result.all_cost = 1.83;
  record.result.timestamp = 1700000000.5;
  return record;
}

TEST(RecordTest, LineHasAutoTvmShapeAndKeyOrder) {
  const std::string line = DenseRecord().ToLine();
  EXPECT_EQ(line.find('\n'), std::string::npos);
  EXPECT_EQ(line,
            R"({"input":["llvm -mcpu=znver3","dense_pack.x86",["dense",{"K":128,"M":512,"N":256,)"
            R"("layout":"NK"}],{}],"config":{"index":8,"code_hash":null,"entity":[["tile_y","sp",)"
            R"([-1,4]],["mr","ot",6]]},"result":[[0.0012,0.0011,0.0013],0,1.83,1700000000.5],)"
            R"("version":0.2,"tvm_version":"tunefleet-0.1"})");
}

TEST(RecordTest, RoundTripsThroughALine) {
  const Record original = DenseRecord();
  absl::StatusOr<Record> parsed = Record::FromLine(original.ToLine());
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->target, original.target);
  EXPECT_EQ(parsed->task_name, original.task_name);
  EXPECT_EQ(parsed->workload_name, original.workload_name);
  EXPECT_EQ(parsed->workload_args, original.workload_args);
  EXPECT_EQ(parsed->config, original.config);
  EXPECT_EQ(parsed->result.costs, original.result.costs);
  EXPECT_EQ(parsed->result.error_no, MeasureErrorNo::kNoError);
  EXPECT_EQ(parsed->result.all_cost, original.result.all_cost);
  EXPECT_EQ(parsed->result.timestamp, original.result.timestamp);
}

TEST(RecordTest, FailedTrialIsWrittenWithCost1e9AndKeepsItsMessage) {
  Record record = DenseRecord();
  record.result.error_no = MeasureErrorNo::kWrongAnswer;
  record.result.error_msg = "max abs error 0.5 at C[3, 7]";
  const std::string line = record.ToLine();
  EXPECT_THAT(line, HasSubstr(R"("result":[[1000000000.0],5,1.83,)"));

  absl::StatusOr<Record> parsed = Record::FromLine(line);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->result.error_no, MeasureErrorNo::kWrongAnswer);
  EXPECT_EQ(parsed->result.costs, std::vector<double>{1e9});
  EXPECT_EQ(parsed->result.error_msg, "max abs error 0.5 at C[3, 7]");
  EXPECT_EQ(parsed->Gflops(1e9), 0.0);
}

TEST(RecordTest, GflopsUsesAutoTvmMeanCost) {
  Record record = DenseRecord();
  // The plain mean of the stored (already trimmed) costs: 0.0012 s.
  EXPECT_NEAR(record.Gflops(2.0 * 512 * 256 * 128), 2.0 * 512 * 256 * 128 / 0.0012 / 1e9, 1e-9);
}

TEST(RecordTest, SpreadIsAnExtraKeyAndRoundTrips) {
  Record record = DenseRecord();
  record.result.timed_repeats = 12;
  record.result.cost_stddev_s = 2.5e-05;
  record.result.cost_rel_ci = 0.015;
  const std::string line = record.ToLine();
  // After AutoTVM's keys, so "result" keeps its 4-element shape.
  EXPECT_THAT(line, HasSubstr(R"("result":[[0.0012,0.0011,0.0013],0,1.83,1700000000.5],)"));
  EXPECT_THAT(line,
              HasSubstr(R"("spread":{"timed_repeats":12,"stddev_s":2.5e-05,"rel_ci":0.015})"));
  absl::StatusOr<Record> parsed = Record::FromLine(line);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->result.timed_repeats, 12);
  EXPECT_EQ(parsed->result.cost_stddev_s, 2.5e-05);
  EXPECT_EQ(parsed->result.cost_rel_ci, 0.015);
}

TEST(RecordTest, ValidationIsAnExtraKeyAndRoundTrips) {
  Record record = DenseRecord();
  EXPECT_DOUBLE_EQ(record.ReportedCost(), 0.0012);  // the search's mean
  record.validation.emplace();
  record.validation->pass_costs = {0.0014, 0.0013, 0.0015};
  record.validation->failed_passes = 1;
  record.validation->timed_repeats = 54;
  record.validation->max_rel_ci = 0.008;
  const std::string line = record.ToLine();
  EXPECT_THAT(line, HasSubstr(R"("result":[[0.0012,0.0011,0.0013],0,1.83,1700000000.5],)"));
  EXPECT_THAT(line, HasSubstr(R"("validation":{"cost_s":0.0014,"pass_costs":[0.0014,0.0013,)"
                              R"(0.0015],"failed_passes":1,"timed_repeats":54,"rel_spread":)"));
  EXPECT_THAT(line, HasSubstr(R"("max_rel_ci":0.008})"));
  absl::StatusOr<Record> parsed = Record::FromLine(line);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_TRUE(parsed->validated());
  EXPECT_EQ(parsed->validation->pass_costs, record.validation->pass_costs);
  EXPECT_EQ(parsed->validation->failed_passes, 1);
  EXPECT_EQ(parsed->validation->timed_repeats, 54);
  EXPECT_EQ(parsed->validation->max_rel_ci, 0.008);
  EXPECT_DOUBLE_EQ(parsed->ReportedCost(), 0.0014);     // the validated median
  EXPECT_DOUBLE_EQ(parsed->result.MeanCost(), 0.0012);  // the search figure stays

  // Every pass failed: kept, but the search figure is what is reported.
  record.validation->pass_costs.clear();
  parsed = Record::FromLine(record.ToLine());
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_TRUE(parsed->validation.has_value());
  EXPECT_FALSE(parsed->validated());
  EXPECT_DOUBLE_EQ(parsed->ReportedCost(), 0.0012);
}

TEST(RecordTest, SpreadWithoutAnIntervalOmitsIt) {
  Record record = DenseRecord();
  record.result.timed_repeats = 1;
  const std::string line = record.ToLine();
  EXPECT_THAT(line, HasSubstr(R"("spread":{"timed_repeats":1})"));
  absl::StatusOr<Record> parsed = Record::FromLine(line);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_FALSE(parsed->result.cost_stddev_s.has_value());
  EXPECT_FALSE(parsed->result.cost_rel_ci.has_value());
}

TEST(RecordTest, ReadsALineWrittenByPythonJsonDumps) {
  // Python's json.dumps puts spaces after separators; kwargs may be absent.
  absl::StatusOr<Record> parsed = Record::FromLine(
      R"({"input": ["llvm", "dense_pack.x86", ["dense", {"M": 8, "N": 8, "K": 8}]], )"
      R"("config": {"index": 0, "code_hash": null, "entity": []}, )"
      R"("result": [[1e-06], 0, 0.5, 1.0], "version": 0.2, "tvm_version": "0.18.0"})");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->workload_args["M"], 8);
}

void ExpectBadField(const std::string& line, const std::string& field) {
  absl::StatusOr<Record> parsed = Record::FromLine(line);
  ASSERT_FALSE(parsed.ok()) << line;
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(parsed.status().message()), HasSubstr(field)) << parsed.status();
}

TEST(RecordTest, BadSpreadIsNamed) {
  const std::string head =
      R"({"input": ["llvm", "t", ["dense", {}], {}], "config": {"index": 0, "entity": []}, )"
      R"("result": [[1.0], 0, 0.5, 1.0], )";
  ExpectBadField(head + R"("spread": 3})", "\"spread\"");
  ExpectBadField(head + R"("spread": {"rel_ci": "wide"}})", "\"spread\".rel_ci");
  ExpectBadField(head + R"("spread": {"timed_repeats": -1}})", "\"spread\".timed_repeats");
}

TEST(RecordTest, BadValidationIsNamed) {
  const std::string head =
      R"({"input": ["llvm", "t", ["dense", {}], {}], "config": {"index": 0, "entity": []}, )"
      R"("result": [[1.0], 0, 0.5, 1.0], )";
  ExpectBadField(head + R"("validation": []})", "\"validation\"");
  ExpectBadField(head + R"("validation": {}})", "\"validation\".pass_costs");
  ExpectBadField(head + R"("validation": {"pass_costs": [1.0, -2.0]}})",
                 "\"validation\".pass_costs");
  ExpectBadField(head + R"("validation": {"pass_costs": [1.0], "failed_passes": 0.5}})",
                 "\"validation\".failed_passes");
  ExpectBadField(head + R"("validation": {"pass_costs": [1.0], "max_rel_ci": -1}})",
                 "\"validation\".max_rel_ci");
}

TEST(RecordTest, FromLineNamesTheBadField) {
  const std::string config = R"("config": {"index": 0, "entity": []})";
  const std::string input = R"("input": ["llvm", "t", ["dense", {}], {}])";
  const std::string result = R"("result": [[1.0], 0, 0.5, 1.0])";
  ExpectBadField("{" + config + ", " + result + "}", "\"input\"");
  ExpectBadField(R"({"input": ["llvm", 3, ["dense", {}], {}], )" + config + ", " + result + "}",
                 "task_name");
  ExpectBadField(R"({"input": ["llvm", "t", "dense", {}], )" + config + ", " + result + "}",
                 "args");
  ExpectBadField("{" + input + ", " + result + "}", "\"config\"");
  ExpectBadField("{" + input + ", " + config + "}", "\"result\"");
  ExpectBadField("{" + input + ", " + config + R"(, "result": [[1.0], 9, 0.5, 1.0]})", "error_no");
  ExpectBadField("{" + input + ", " + config + R"(, "result": [[], 0, 0.5, 1.0]})", "costs");
  ExpectBadField("{" + input + ", " + config + R"(, "result": [[1.0], 0, "x", 1.0]})", "all_cost");
  ExpectBadField(R"({"input": ["llvm", "t")", "JSON");
  ExpectBadField("[1, 2]", "object");
}

}  // namespace
}  // namespace tunefleet
