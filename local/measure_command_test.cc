// `measure` end to end: a log made by local `tune`, re-measured in real
// runner children.
#include "local/measure_command.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "local/local_mode_test_util.h"
#include "local/tune_command.h"
#include "proto_convert/run_request.h"
#include "proto_convert/task_spec.h"
#include "toolchain/codegen/target.h"
#include "tuner_core/records/record_file.h"

namespace tunefleet {
namespace {

using ::testing::HasSubstr;

class MeasureCommandTest : public LocalModeTest {
 protected:
  // Tunes a 64x64x64 dense for `trials` into log_, validating its best.
  void TuneSmallDense(int trials) {
    proto::JobSpec spec;
    *spec.mutable_task() = MakeTaskSpec(
        "", "dense", {{"M", 64}, {"N", 64}, {"K", 64}, {"layout", "NK"}}, HostTargetString());
    spec.set_tuner("random");
    spec.set_n_trial(trials);
    spec.set_seed(5);
    *spec.mutable_measure() = ToProto(Local().measure);
    spec.set_validate_top_k(1);
    spec.set_validation_passes(1);
    LocalRunOptions run;
    run.log = log_;
    run.host = Local();
    std::ostringstream progress, out;
    ASSERT_TRUE(RunTune(spec, run, progress, out).ok());
  }

  static LocalMeasurerOptions Local() {
    LocalMeasurerOptions local;
    local.runner.num_threads = 2;
    local.measure.number = 2;
    local.measure.repeat = 2;
    local.measure.cooldown_interval_s = 0;
    return local;
  }

  MeasureCommandOptions Options() const {
    MeasureCommandOptions o;
    o.records.log = log_;
    o.local = Local();
    o.records.passes = 2;
    return o;
  }
};

TEST_F(MeasureCommandTest, PrintsOneRowPerTopRecordWithItsFigureAndRatio) {
  TuneSmallDense(8);
  ReadReport report = ReadRecords(log_).value();
  std::set<int64_t> successful;
  int64_t validated_index = -1;
  for (const Record& r : report.records) {
    if (!r.result.ok()) continue;
    successful.insert(r.config["index"].get<int64_t>());
    if (r.validated()) validated_index = r.config["index"].get<int64_t>();
  }
  ASSERT_FALSE(successful.empty()) << "no config of 64x64x64 ran";
  ASSERT_GE(validated_index, 0);

  MeasureCommandOptions o = Options();
  o.records.top = kMaxValidateTopK;  // every successful config
  std::ostringstream progress, out;
  auto rows = RunMeasure(o, progress, out);
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), successful.size()) << out.str();
  std::set<int64_t> measured;
  for (const RemeasuredRecord& row : *rows) {
    measured.insert(row.config_index);
    EXPECT_EQ(row.task_name, "dense_gemm.x86");
    EXPECT_GT(row.recorded_gflops, 0);
    EXPECT_EQ(row.recorded_validated, row.config_index == validated_index);
    EXPECT_EQ(row.remeasured.pass_costs.size() + row.remeasured.failed_passes, 2u);
    if (row.remeasured.ok()) {
      EXPECT_NEAR(row.ratio, row.remeasured_gflops / row.recorded_gflops, 1e-12);
    }
    // One printed row per record, starting with its config index.
    EXPECT_THAT(out.str(), HasSubstr("\n  " + std::to_string(row.config_index) + " "));
  }
  EXPECT_EQ(measured, successful);
  EXPECT_THAT(out.str(), HasSubstr(" validated "));
  if (successful.size() > 1) {
    EXPECT_THAT(out.str(), HasSubstr(" search "));
  }

  // --top 1: only the best by reported figure.
  o.records.top = 1;
  std::ostringstream one_out;
  auto one = RunMeasure(o, progress, one_out);
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(one->size(), 1u);
  // The log is not changed by measuring.
  EXPECT_EQ(ReadRecords(log_).value().records.size(), report.records.size());
}

TEST_F(MeasureCommandTest, RefusesAnUnknownTaskAndAForeignArchitecture) {
  TuneSmallDense(4);
  MeasureCommandOptions o = Options();
  o.records.task = "conv2d_nchwc.x86";
  std::ostringstream progress, out;
  absl::Status unknown = RunMeasure(o, progress, out).status();
  EXPECT_EQ(unknown.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(unknown.message(), HasSubstr("--task conv2d_nchwc.x86"));
  EXPECT_THAT(unknown.message(), HasSubstr("its tasks: dense_gemm.x86"));

  // The same record, for another architecture.
  ReadReport report = ReadRecords(log_).value();
  Record foreign;
  for (const Record& r : report.records) {
    if (r.result.ok()) foreign = r;
  }
  ASSERT_FALSE(foreign.task_name.empty()) << "no config of 64x64x64 ran";
#if defined(__x86_64__)
  foreign.target = "llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72";
  const std::string other_arch = "aarch64";
#else
  foreign.target = "llvm -mtriple=x86_64-linux-gnu -mcpu=znver3";
  const std::string other_arch = "x86_64";
#endif
  std::ofstream(log_, std::ios::app) << foreign.ToLine() << "\n";
  o.records.task.clear();
  absl::Status refused = RunMeasure(o, progress, out).status();
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.message(), HasSubstr(foreign.target));
  EXPECT_THAT(refused.message(), HasSubstr("builds " + other_arch + " code"));
}

TEST_F(MeasureCommandTest, BadFlagsAreRefusedNamingTheFlag) {
  std::ostringstream progress, out;
  MeasureCommandOptions o = Options();
  o.records.top = 0;
  EXPECT_THAT(RunMeasure(o, progress, out).status().message(), HasSubstr("--top"));
  o = Options();
  o.records.passes = kMaxValidationPasses + 1;
  EXPECT_THAT(RunMeasure(o, progress, out).status().message(), HasSubstr("--passes"));
  o = Options();
  o.records.log.clear();
  EXPECT_THAT(RunMeasure(o, progress, out).status().message(), HasSubstr("--log"));
  o = Options();  // log_ does not exist
  EXPECT_EQ(RunMeasure(o, progress, out).status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace tunefleet
