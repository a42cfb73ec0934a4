// `tunefleet measure --key`: a log's winners re-measured on the agents of a
// key through a real fleet (tracker, test builder, fake agents whose every
// measurement costs exactly 20 ms) on 127.0.0.1.
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/measure_fleet.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "launcher/fleet_launcher.h"
#include "tests/status_assertions.h"

namespace tunefleet {
namespace {

using ::testing::HasSubstr;

class FleetMeasureTest : public ::testing::Test {
 protected:
  static FleetLauncher::Options Fleet() {
    FleetLauncher::Options o;
    o.agents = 2;
    o.simulate_measure_ms = 20;
    o.simulate_build_ms = 2;
    o.agent_flags[0] = {"--calibration_gflops=30"};
    o.agent_flags[1] = {"--calibration_gflops=31"};
    return o;
  }

  // A log of a finished 6-trial job of this fleet.
  std::string LogOfAJob(FleetLauncher& fleet) {
    proto::JobStatus job = fleet.client().Submit(fleet.DenseJob(6)).value();
    proto::JobStatus done = fleet.WaitForJob(job.job_id(), 120).value();
    EXPECT_EQ(done.state(), proto::SUCCEEDED) << done.message();
    const std::string path = absl::StrCat(::testing::TempDir(), "/measure_log.jsonl");
    const std::vector<std::string> lines = fleet.client().Export(job.job_id()).value();
    std::ofstream out(path, std::ios::trunc);
    for (const std::string& line : lines) out << line << "\n";
    return path;
  }
};

TEST_F(FleetMeasureTest, ReMeasuresTheTopRecordsOnTheKeysAgents) {
  FleetLauncher fleet(Fleet());
  ASSERT_OK(fleet.Start());
  const std::string log = LogOfAJob(fleet);
  FleetMeasureOptions options;
  options.records.log = log;
  options.key = "cpu";
  options.records.top = 3;
  options.records.passes = 2;
  options.timeout_s = 120;
  std::ostringstream progress, out;
  absl::StatusOr<int> remeasured = RunFleetMeasure(fleet.client(), options, progress, out);
  ASSERT_OK(remeasured.status());
  EXPECT_EQ(*remeasured, 3) << out.str();
  // Every measurement costs 20 ms: the re-measured figure is the recorded
  // one, and both agents measured each config.
  EXPECT_THAT(out.str(), HasSubstr("1.000\n"));
  EXPECT_THAT(out.str(), HasSubstr("agents: confirmed on 2 agents"));
  EXPECT_THAT(progress.str(), HasSubstr("on key cpu"));
}

TEST_F(FleetMeasureTest, RefusesWhatItCannotDo) {
  FleetLauncher fleet(Fleet());
  ASSERT_OK(fleet.Start());
  std::ostringstream progress, out;
  FleetMeasureOptions options;
  options.key = "cpu";
  EXPECT_THAT(RunFleetMeasure(fleet.client(), options, progress, out).status().message(),
              HasSubstr("--log is required"));
  options.records.log = "/nonexistent/records.jsonl";
  options.records.top = 0;
  EXPECT_THAT(RunFleetMeasure(fleet.client(), options, progress, out).status().message(),
              HasSubstr("--top must be in"));
  options.records.top = 2;
  EXPECT_FALSE(RunFleetMeasure(fleet.client(), options, progress, out).ok());
  const std::string empty = absl::StrCat(::testing::TempDir(), "/empty.jsonl");
  std::ofstream(empty, std::ios::trunc) << "";
  options.records.log = empty;
  EXPECT_EQ(RunFleetMeasure(fleet.client(), options, progress, out).status().code(),
            absl::StatusCode::kNotFound);
  // A key nobody serves: the job fails once it has waited for an agent.
  options.records.log = LogOfAJob(fleet);
  options.key = "rk3399";
  options.timeout_s = 6;
  absl::Status no_agent = RunFleetMeasure(fleet.client(), options, progress, out).status();
  EXPECT_EQ(no_agent.code(), absl::StatusCode::kAborted) << no_agent;
  EXPECT_THAT(no_agent.message(), HasSubstr("no agent of key 'rk3399'"));
}

}  // namespace
}  // namespace tunefleet
