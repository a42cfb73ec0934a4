#include "tests/cost_oracle.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace {

using ::testing::HasSubstr;

constexpr char kArgs[] = R"({"M":64,"N":64,"K":64,"layout":"NK"})";

// A dense record: tile_y split [-1, y], tile_x split [-1, x], `cost` seconds
// (error_no `error`), `trial` seconds of wall time.
Record DenseRecord(int y, int x, double cost, double trial, int error = 0) {
  const std::string line =
      absl::StrCat(R"({"input":["llvm -mcpu=znver1","dense_pack.x86",["dense",)", kArgs,
                   R"(],{}],"config":{"index":0,"code_hash":null,"entity":[["tile_y","sp",[-1,)", y,
                   R"(]],["tile_x","sp",[-1,)", x, R"(]]]},"result":[[)", cost, "],", error, ",",
                   trial, R"(,1796005144.0],"version":0.2,"tvm_version":"tunefleet-0.1"})");
  absl::StatusOr<Record> r = Record::FromLine(line);
  EXPECT_TRUE(r.ok()) << r.status() << " " << line;
  return *r;
}

std::string Entity(int y, int x) {
  return absl::StrCat(R"({"index":5,"entity":[["tile_y","sp",[-1,)", y, R"(]],["tile_x","sp",[-1,)",
                      x, "]]]}");
}

TEST(CostOracleTest, ARecordedConfigGetsItsOwnFiguresTheFastestOfItsRecords) {
  absl::StatusOr<CostOracle> oracle =
      CostOracle::FromRecords({DenseRecord(4, 8, 0.002, 0.3), DenseRecord(4, 8, 0.001, 0.4),
                               DenseRecord(8, 8, 0.005, 0.2)});
  ASSERT_TRUE(oracle.ok()) << oracle.status();
  EXPECT_EQ(oracle->num_records(), 3);
  EXPECT_EQ(oracle->num_workloads(), 1);
  absl::StatusOr<CostOracle::Answer> a = oracle->Cost("dense", kArgs, Entity(4, 8));
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_TRUE(a->exact);
  EXPECT_DOUBLE_EQ(a->cost_s, 0.001);
  EXPECT_DOUBLE_EQ(a->trial_s, 0.4);
  // The entity list alone, and args with their keys in another order.
  a = oracle->Cost("dense", R"({"layout":"NK","K":64,"N":64,"M":64})",
                   R"([["tile_y","sp",[-1,8]],["tile_x","sp",[-1,8]]])");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_TRUE(a->exact);
  EXPECT_DOUBLE_EQ(a->cost_s, 0.005);
}

TEST(CostOracleTest, AnotherConfigGetsTheNearestRecordedOne) {
  absl::StatusOr<CostOracle> oracle =
      CostOracle::FromRecords({DenseRecord(2, 2, 0.009, 0.1), DenseRecord(16, 16, 0.001, 0.5),
                               DenseRecord(16, 2, 0.004, 0.2)});
  ASSERT_TRUE(oracle.ok()) << oracle.status();
  // (8, 16): 1 + 0 from (16, 16), 2 + 3 from (2, 2), 1 + 3 from (16, 2).
  absl::StatusOr<CostOracle::Answer> a = oracle->Cost("dense", kArgs, Entity(8, 16));
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_FALSE(a->exact);
  EXPECT_DOUBLE_EQ(a->cost_s, 0.001);
  a = oracle->Cost("dense", kArgs, Entity(4, 2));  // 1 from (2, 2), 2 from (16, 2)
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_DOUBLE_EQ(a->cost_s, 0.009);
}

TEST(CostOracleTest, FailedRecordsAreNotAnswers) {
  absl::StatusOr<CostOracle> oracle = CostOracle::FromRecords(
      {DenseRecord(4, 4, 1e9, 0.1, /*error=*/4), DenseRecord(8, 8, 0.003, 0.2)});
  ASSERT_TRUE(oracle.ok()) << oracle.status();
  EXPECT_EQ(oracle->num_records(), 1);
  absl::StatusOr<CostOracle::Answer> a = oracle->Cost("dense", kArgs, Entity(4, 4));
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_FALSE(a->exact);
  EXPECT_DOUBLE_EQ(a->cost_s, 0.003);
  EXPECT_THAT(CostOracle::FromRecords({DenseRecord(4, 4, 1e9, 0.1, 4)}).status().message(),
              HasSubstr("none of 1 records is a successful run"));
}

TEST(CostOracleTest, UnknownWorkloadsAndMalformedQueriesAreErrors) {
  absl::StatusOr<CostOracle> oracle = CostOracle::FromRecords({DenseRecord(4, 8, 0.002, 0.3)});
  ASSERT_TRUE(oracle.ok()) << oracle.status();
  absl::StatusOr<CostOracle::Answer> a =
      oracle->Cost("dense", R"({"M":128,"N":64,"K":64,"layout":"NK"})", Entity(4, 8));
  EXPECT_EQ(a.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(a.status().message(), HasSubstr("no record of workload dense"));
  EXPECT_THAT(oracle->Cost("dense", "[1]", Entity(4, 8)).status().message(),
              HasSubstr("workload args are not a JSON object"));
  EXPECT_THAT(oracle->Cost("dense", kArgs, "{\"index\":3}").status().message(),
              HasSubstr("an object with \"entity\" or the entity list"));
}

TEST(CostOracleTest, LoadNamesAMissingFileAndABadLine) {
  EXPECT_EQ(CostOracle::Load("/nonexistent/records.jsonl").status().code(),
            absl::StatusCode::kNotFound);
  const std::string path = absl::StrCat(::testing::TempDir(), "/oracle.jsonl");
  FILE* f = fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  fprintf(f, "%s\nnot a record\n%s\n", DenseRecord(4, 8, 0.002, 0.3).ToLine().c_str(),
          DenseRecord(8, 8, 0.003, 0.3).ToLine().c_str());
  fclose(f);
  absl::StatusOr<CostOracle> bad = CostOracle::Load(path);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr(":2:"));
}

}  // namespace
}  // namespace tunefleet
