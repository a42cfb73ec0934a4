// FakeAgent against FakeWorkerGateway: it registers as an agent and answers
// each measurement with the simulated cost, one `repeat` each, without
// asking for artifact bytes; with a cost oracle, each config's recorded cost.
#include "tests/fake_agent.h"

#include <map>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "worker_stream/fake_worker_gateway.h"

namespace tunefleet {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// An agent "fake-0" of key "sim" for `tracker`.
FakeAgentOptions OptionsFor(const FakeWorkerGateway& tracker) {
  FakeAgentOptions options;
  options.worker.tracker_address = tracker.address();
  options.worker.name = "fake-0";
  options.device_key = "sim";
  return options;
}

TEST(FakeAgentTest, RegistersAndAnswersTheSimulatedCostWithoutBytes) {
  FakeWorkerGateway tracker;
  FakeAgentOptions options = OptionsFor(tracker);
  options.measure_s = 0.005;
  ASSERT_TRUE(options.Validate().ok());
  FakeAgent agent(options, proto::DeviceInfo());
  agent.Start();
  ASSERT_TRUE(FakeWorkerGateway::WaitFor([&] { return agent.connection().connected(); }));
  EXPECT_EQ(tracker.last_registration().role(), proto::AGENT);
  EXPECT_EQ(tracker.last_registration().device_key(), "sim");

  proto::TrackerMessage work;
  work.mutable_measure()->set_lease_id("sim-1");
  work.mutable_measure()->mutable_run()->set_artifact_hash("not-held-anywhere");
  work.mutable_measure()->mutable_run()->mutable_options()->set_repeat(3);
  tracker.Enqueue(work);
  ASSERT_TRUE(FakeWorkerGateway::WaitFor([&] { return tracker.received().size() == 1; }));
  const proto::MeasureResult result = tracker.received()[0].measure_result();
  EXPECT_EQ(result.lease_id(), "sim-1");
  EXPECT_EQ(result.run().error_no(), 0);
  // Three repeats, trimmed once as the real evaluator does: min and max dropped.
  EXPECT_THAT(result.run().costs(), ElementsAre(0.005));
  EXPECT_FALSE(result.need_artifact());
  EXPECT_GT(result.measure_seconds(), 0.0);
  agent.Stop();
  EXPECT_EQ(agent.measured(), 1);
}

// A dense record of tile_y [-1, y]: `cost` seconds, a trial of `trial` seconds.
Record DenseRecord(int y, double cost, double trial) {
  absl::StatusOr<Record> r = Record::FromLine(absl::StrCat(
      R"({"input":["llvm","dense_pack.x86",["dense",{"M":8,"N":8,"K":8}],{}],)",
      R"("config":{"index":0,"code_hash":null,"entity":[["tile_y","sp",[-1,)", y, R"(]]]},)",
      R"("result":[[)", cost, "],0,", trial, R"(,1796005144.0],"version":0.2,"tvm_version":"t"})"));
  EXPECT_TRUE(r.ok()) << r.status();
  return *r;
}

TEST(FakeAgentTest, WithACostOracleAnswersEachConfigsRecordedCost) {
  FakeWorkerGateway tracker;
  FakeAgentOptions options = OptionsFor(tracker);
  absl::StatusOr<CostOracle> oracle =
      CostOracle::FromRecords({DenseRecord(2, 0.004, 0.02), DenseRecord(4, 0.001, 0.01)});
  ASSERT_TRUE(oracle.ok()) << oracle.status();
  options.costs = std::make_shared<const CostOracle>(*std::move(oracle));
  options.time_scale = 0.5;
  ASSERT_TRUE(options.Validate().ok());
  FakeAgent agent(options, proto::DeviceInfo());
  agent.Start();
  ASSERT_TRUE(FakeWorkerGateway::WaitFor([&] { return agent.connection().connected(); }));

  auto request = [&](const std::string& lease, const std::string& bytes, const std::string& hash) {
    proto::TrackerMessage work;
    work.mutable_measure()->set_lease_id(lease);
    proto::RunRequest* run = work.mutable_measure()->mutable_run();
    run->set_workload_name("dense");
    run->set_workload_args_json(R"({"K":8,"M":8,"N":8})");
    run->set_shared_object(bytes);
    run->set_artifact_hash(hash);
    run->mutable_options()->set_repeat(1);
    tracker.Enqueue(work);
  };
  request("a", R"(SIMULATED job-1 {"index":1,"entity":[["tile_y","sp",[-1,4]]]})", "h4");
  request("b", "", "h4");  // the same artifact again, without its bytes
  request("c", R"(SIMULATED job-1 {"index":2,"entity":[["tile_y","sp",[-1,3]]]})", "h3");
  request("d", "", "never-sent-here");
  request("e", "a shared object", "h5");
  ASSERT_TRUE(FakeWorkerGateway::WaitFor([&] { return tracker.received().size() == 5; }));
  std::map<std::string, proto::MeasureResult> results;
  for (const proto::WorkerMessage& m : tracker.received()) {
    results[m.measure_result().lease_id()] = m.measure_result();
  }
  EXPECT_THAT(results["a"].run().costs(), ElementsAre(0.001));
  EXPECT_GE(results["a"].measure_seconds(), 0.005);  // 0.01 s recorded x 0.5
  EXPECT_THAT(results["b"].run().costs(), ElementsAre(0.001));
  // [-1, 3] was not recorded: [-1, 4] is nearer (log2 4/3 < log2 3/2).
  EXPECT_THAT(results["c"].run().costs(), ElementsAre(0.001));
  EXPECT_TRUE(results["d"].need_artifact());  // never seen: the bytes, please
  EXPECT_THAT(results["e"].run().error_msg(), HasSubstr("not a test builder's placeholder"));
  agent.Stop();
}

TEST(FakeAgentOptionsTest, NeedsAKeyAndAPositiveMeasureTime) {
  FakeAgentOptions options;
  options.worker.tracker_address = "127.0.0.1:1";
  options.worker.name = "f";
  EXPECT_FALSE(options.Validate().ok());
  options.device_key = "sim";
  options.measure_s = -1;
  EXPECT_FALSE(options.Validate().ok());
  options.measure_s = 0.1;
  EXPECT_TRUE(options.Validate().ok());
}

}  // namespace
}  // namespace tunefleet
