#include "tuner_core/records/tvm_record.h"

#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tuner_core/records/record_file.h"
#include "tuner_core/space/config_space.h"
#include "tuner_core/templates/template.h"
#include "tuner_core/workloads/conv2d.h"
#include "tuner_core/workloads/dense.h"
#include "tuner_core/workloads/workload.h"

namespace tunefleet {
namespace {

using ::testing::HasSubstr;

constexpr char kLog[] = "tuner_core/records/testdata/autotvm_v0.18.log";

// Test-only templates whose spaces are defined the way TVM v0.18 defines
// conv2d_NCHWc.x86 (topi/x86/conv2d.py) and dense_nopack.x86, so lines of
// those tasks fit them. TuneFleet's own templates define other knobs.
[[nodiscard]] absl::StatusOr<ir::LoweredFunc> NotBuilt(const Workload&, const Config&) {
  return absl::UnimplementedError("test template");
}

[[nodiscard]] absl::StatusOr<ConfigSpace> TvmConvSpace(const Workload& workload) {
  absl::StatusOr<const Conv2dWorkload*> conv = Conv2dWorkload::From(workload, "test");
  if (!conv.ok()) return conv.status();
  ConfigSpace space;
  absl::Status status = space.DefineSplit("tile_ic", (*conv)->c());
  if (status.ok()) status = space.DefineSplit("tile_oc", (*conv)->k());
  SplitOptions tile_ow;
  tile_ow.policy = "verbose";
  tile_ow.filter = [](const std::vector<int64_t>& sizes) { return sizes.back() <= 64; };
  if (status.ok()) status = space.DefineSplit("tile_ow", (*conv)->out_w(), tile_ow);
  if (status.ok()) {
    if ((*conv)->r() == 1 && (*conv)->s() == 1) {
      status = space.DefineKnob(
          "tile_oh", (*conv)->out_h() > 1 ? std::vector<int64_t>{1, 2} : std::vector<int64_t>{1});
    } else {
      status = space.DefineKnob("unroll_kw", {1, 0});  // TVM's [True, False]
    }
  }
  if (!status.ok()) return status;
  return space;
}

[[nodiscard]] absl::StatusOr<ConfigSpace> TvmDenseNopackSpace(const Workload& workload) {
  absl::StatusOr<const DenseWorkload*> dense = DenseWorkload::From(workload, "test");
  if (!dense.ok()) return dense.status();
  ConfigSpace space;
  absl::Status status = space.DefineSplit("tile_y", (*dense)->m());
  if (status.ok()) status = space.DefineSplit("tile_x", (*dense)->n());
  if (status.ok()) status = space.DefineSplit("tile_k", (*dense)->k());
  if (!status.ok()) return status;
  return space;
}

const bool kRegistered = [] {
  static const Template* conv = new Template(
      Template::Names{"conv2d_NCHWc.x86", "conv2d_nchw", "TVM-shaped test space", false},
      TvmConvSpace, NotBuilt);
  static const Template* dense =
      new Template(Template::Names{"dense_nopack.x86", "dense", "TVM-shaped test space", false},
                   TvmDenseNopackSpace, NotBuilt);
  RegisterTemplate(conv);
  RegisterTemplate(dense);
  return true;
}();

std::vector<RecordLine> ReadLog() {
  absl::StatusOr<std::vector<RecordLine>> lines = ReadRecordLines(kLog);
  EXPECT_TRUE(lines.ok()) << lines.status();
  return lines.ok() ? *std::move(lines) : std::vector<RecordLine>{};
}

// Each line of the sample log and what becomes of it ("" = a record).
TEST(TvmRecordTest, EveryLineIsARecordOrSaysWhyNot) {
  ASSERT_TRUE(kRegistered);
  const std::vector<std::pair<int, std::string>> expected = {
      {1, ""},
      {2, ""},
      {3, ""},
      {4, "config names knob 'unroll_kw', which this space does not define"},
      {5, ""},
      {6, "does not fit the space of template dense_pack.x86: config names knob 'tile_y'"},
      {7, "template depthwise_conv2d_nchwc.x86: config names knob 'tile_ic'"},
      {8, "template batch_matmul_pack.x86: config names knob 'tile_y'"},
      {9, "AutoTVM task \"conv2d_nhwc_spatial_pack.arm_cpu\" has no TuneFleet workload"},
      {10, "dtype uint8 is not supported"},
      {11, "\"NCHW8c\" is not supported"},
      {12, "argument bias: a fused bias"},
      {13, "template conv2d_igemm.cuda"},
      {14, "is not all positive integers"},
      {15, "log version 0.1 is not supported"},
      {16, "error_no"},
      {17, "not valid JSON"},
  };
  std::vector<RecordLine> lines = ReadLog();
  ASSERT_EQ(lines.size(), expected.size());
  for (size_t i = 0; i < lines.size(); ++i) {
    const RecordLine& line = lines[i];
    EXPECT_EQ(line.line_number, expected[i].first);
    if (expected[i].second.empty()) {
      EXPECT_TRUE(line.record.ok()) << "line " << line.line_number << ": " << line.record.status();
    } else {
      ASSERT_FALSE(line.record.ok()) << "line " << line.line_number;
      EXPECT_THAT(std::string(line.record.status().message()), HasSubstr(expected[i].second))
          << "line " << line.line_number;
    }
  }
  EXPECT_TRUE(lines[0].autotvm);
  EXPECT_FALSE(lines[0].torn);
  EXPECT_TRUE(lines.back().torn);  // the unterminated last line
}

// Line 1: AutoTVM's index 963 counts in AutoTVM's space of this task. Ours
// is recomputed from the entity, and agrees only because the verbose split
// of tile_ow (extent 56) lists 28 last, in CPython's set order
// [32, 1, 2, 4, 7, 8, 14, 16, 56, 28]: choices tile_ic [-1, 16] (4 of 7),
// tile_oc [-1, 16] (4 of 7), tile_ow [-1, 28] (9 of 10), unroll_kw false
// (1 of 2): 4 + 7 * (4 + 7 * (9 + 10 * 1)) = 963.
TEST(TvmRecordTest, ConvLineBecomesARecordWithAutoTvmsIndex) {
  ASSERT_TRUE(kRegistered);
  std::vector<RecordLine> lines = ReadLog();
  ASSERT_GE(lines.size(), 2u);
  ASSERT_TRUE(lines[0].record.ok()) << lines[0].record.status();
  const Record& record = *lines[0].record;
  EXPECT_EQ(record.target, "llvm -keys=cpu -mcpu=skylake-avx512");
  EXPECT_EQ(record.task_name, "conv2d_NCHWc.x86");
  EXPECT_EQ(record.workload_name, "conv2d_nchw");
  absl::StatusOr<std::unique_ptr<Workload>> workload = MakeWorkload(
      "conv2d_nchw",
      {{"N", 1}, {"C", 64}, {"H", 56}, {"W", 56}, {"K", 64}, {"R", 3}, {"S", 3}, {"padding", 1}});
  ASSERT_TRUE(workload.ok()) << workload.status();
  EXPECT_EQ(record.workload_args, (*workload)->args());
  EXPECT_EQ(record.config["index"], 963);
  EXPECT_EQ(record.config["entity"][3], nlohmann::json::parse(R"(["unroll_kw", "ot", 0])"));
  EXPECT_EQ(record.result.error_no, MeasureErrorNo::kNoError);
  EXPECT_EQ(record.result.costs, (std::vector<double>{0.00071234, 0.00070981, 0.00071102}));
  EXPECT_DOUBLE_EQ(record.result.all_cost, 1.8731);
  EXPECT_DOUBLE_EQ(record.result.timestamp, 1700000000.123);

  // Line 2: AutoTVM's index 23, unroll_kw true -> 1; a failed trial stays one.
  ASSERT_TRUE(lines[1].record.ok()) << lines[1].record.status();
  EXPECT_EQ(lines[1].record->config["index"], 23);
  EXPECT_EQ(lines[1].record->config["entity"][3],
            nlohmann::json::parse(R"(["unroll_kw", "ot", 1])"));
  EXPECT_EQ(lines[1].record->result.error_no, MeasureErrorNo::kInstantiationError);
}

TEST(TvmRecordTest, ConvertedRecordsReadBackThroughOurOwnFormat) {
  ASSERT_TRUE(kRegistered);
  std::vector<RecordLine> lines = ReadLog();
  ASSERT_GE(lines.size(), 5u);
  ASSERT_TRUE(lines[4].record.ok()) << lines[4].record.status();
  const std::string ours = lines[4].record->ToLine();
  EXPECT_FALSE(IsTvmRecordJson(nlohmann::json::parse(ours)));
  absl::StatusOr<Record> again = Record::FromLine(ours);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->task_name, "dense_nopack.x86");
  EXPECT_EQ(again->workload_args,
            nlohmann::json::parse(R"({"M": 1, "N": 1000, "K": 512, "layout": "NK"})"));
  EXPECT_EQ(again->config, lines[4].record->config);
}

TEST(TvmRecordTest, ReadRecordsKeepsUsableLinesAndWarnsPerSkippedLine) {
  ASSERT_TRUE(kRegistered);
  absl::StatusOr<ReadReport> report = ReadRecords(kLog);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->records.size(), 4u);
  ASSERT_EQ(report->warnings.size(), 13u);
  EXPECT_THAT(report->warnings[0], HasSubstr("autotvm_v0.18.log:4: AutoTVM line skipped: "));
  EXPECT_THAT(report->warnings.back(), HasSubstr(":17: torn last line ignored"));
}

TEST(TvmRecordTest, ConverterReportsBadLinesByValue) {
  TvmRecordConverter converter;
  EXPECT_THAT(std::string(converter.Convert("{").status().message()), HasSubstr("not valid JSON"));
  EXPECT_THAT(std::string(converter.Convert("[1]").status().message()),
              HasSubstr("not a JSON object"));
  EXPECT_THAT(std::string(converter.Convert(R"({"input": ["llvm"], "config": {}, "result": []})")
                              .status()
                              .message()),
              HasSubstr("\"input\" is not [target, task_name, args, kwargs]"));
  EXPECT_THAT(
      std::string(
          converter.Convert(R"({"input": ["llvm", "t", []], "result": []})").status().message()),
      HasSubstr("no \"config\" field"));
  absl::StatusOr<Record> kwargs = converter.Convert(
      R"({"input": ["llvm", "dense_nopack.x86", [], {"x": 1}], "config": {}, "result": []})");
  EXPECT_THAT(std::string(kwargs.status().message()), HasSubstr("keyword arguments"));
}

TEST(TvmRecordTest, TaskWithoutATemplateForItsTargetSaysSo) {
  TvmRecordConverter converter;
  // TuneFleet has no CUDA template for depthwise convolutions.
  const std::string line =
      R"({"input": ["cuda -keys=cuda,gpu -arch=sm_80", "depthwise_conv2d_nchw.cuda",)"
      R"( [["TENSOR", [1, 32, 56, 56], "float32"], ["TENSOR", [32, 1, 3, 3], "float32"],)"
      R"( [1, 1], [1, 1, 1, 1], [1, 1], "float32"], {}],)"
      R"( "config": {"index": 0, "code_hash": null, "entity": []},)"
      R"( "result": [[0.001], 0, 1.0, 1700000000.0], "version": 0.2, "tvm_version": "0.18.0"})";
  for (int attempt = 0; attempt < 2; ++attempt) {  // the second answer comes from the cache
    absl::StatusOr<Record> record = converter.Convert(line);
    ASSERT_FALSE(record.ok());
    EXPECT_THAT(std::string(record.status().message()),
                HasSubstr("no TuneFleet template serves AutoTVM task depthwise_conv2d_nchw.cuda"));
  }
}

TEST(TvmRecordTest, TellsAutoTvmLinesFromOurs) {
  Record ours;
  ours.target = "llvm";
  ours.task_name = "dense_pack.x86";
  ours.workload_name = "dense";
  ours.workload_args = {{"M", 1}};
  ours.result.costs = {1.0};
  EXPECT_FALSE(IsTvmRecordJson(nlohmann::json::parse(ours.ToLine())));
  EXPECT_TRUE(IsTvmRecordJson(nlohmann::json::parse(
      R"({"input": ["llvm", "dense_nopack.x86", [["TENSOR", [1, 2], "float32"]], {}]})")));
  EXPECT_TRUE(IsTvmRecordJson(nlohmann::json::parse(R"({"i": [], "r": [], "v": 0.1})")));
  EXPECT_FALSE(IsTvmRecordJson(nlohmann::json::parse("[]")));
}

}  // namespace
}  // namespace tunefleet
