#include "tracker/worker_registry.h"

#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tracker/fake_outbox.h"

namespace tunefleet {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

proto::Register Registration(proto::WorkerRole role, const std::string& name,
                             const std::string& key = "", int parallelism = 1) {
  proto::Register r;
  r.set_role(role);
  r.set_name(name);
  r.set_device_key(key);
  r.set_parallelism(parallelism);
  return r;
}

TEST(WorkerRegistryTest, ValidatesRegistrations) {
  EXPECT_TRUE(WorkerRegistry::ValidateRegistration(Registration(proto::AGENT, "a", "cpu")).ok());
  EXPECT_THAT(WorkerRegistry::ValidateRegistration(Registration(proto::AGENT, "a")).message(),
              HasSubstr("without a device_key"));
  EXPECT_THAT(WorkerRegistry::ValidateRegistration(Registration(proto::BUILDER, "")).message(),
              HasSubstr("name is empty"));
  EXPECT_THAT(
      WorkerRegistry::ValidateRegistration(Registration(proto::BUILDER, "b", "", -1)).message(),
      HasSubstr("parallelism"));
  proto::Register no_role;
  no_role.set_name("x");
  EXPECT_THAT(WorkerRegistry::ValidateRegistration(no_role).message(), HasSubstr("without a role"));
}

TEST(WorkerRegistryTest, FindsByIdAndNameAndForgetsOnRemove) {
  WorkerRegistry registry(/*isolate_measurements=*/true);
  Worker& builder = registry.Add(Registration(proto::BUILDER, "b"), "ipv4:10.0.0.1:99",
                                 std::make_shared<FakeOutbox>(), /*now=*/5, /*wall=*/1.7e9);
  Worker& tuner = registry.Add(Registration(proto::TUNER, "t"), "test",
                               std::make_shared<FakeOutbox>(), 5, 1.7e9);
  EXPECT_EQ(builder.host, "10.0.0.1");
  EXPECT_TRUE(builder.isolating);
  EXPECT_THAT(registry.builders(), ElementsAre(builder.id));
  EXPECT_THAT(registry.tuners(), ElementsAre(tuner.id));
  EXPECT_EQ(registry.FindByName("b"), &builder);
  EXPECT_EQ(registry.NameOf(tuner.id), "t");
  const std::string id = builder.id;
  std::unique_ptr<Worker> removed = registry.Remove(id);
  ASSERT_NE(removed, nullptr);
  EXPECT_EQ(registry.Find(id), nullptr);
  EXPECT_EQ(registry.FindByName("b"), nullptr);
  EXPECT_THAT(registry.builders(), IsEmpty());
  EXPECT_EQ(registry.NameOf(id), "");
  EXPECT_EQ(registry.Remove(id), nullptr);
}

TEST(WorkerRegistryTest, AgentsIsolatePerHostUnlessTheFleetDoesNot) {
  WorkerRegistry registry(/*isolate_measurements=*/true);
  Worker& agent = registry.Add(Registration(proto::AGENT, "a", "cpu"), "test",
                               std::make_shared<FakeOutbox>(), 0, 0);
  registry.Add(Registration(proto::TUNER, "t"), "test", std::make_shared<FakeOutbox>(), 0, 0);
  EXPECT_TRUE(agent.isolating);
  EXPECT_THAT(registry.IsolatingAgentsOn("test"), ElementsAre(agent.id));
  EXPECT_THAT(registry.IsolatingAgentsOn("elsewhere"), IsEmpty());

  WorkerRegistry cluster(/*isolate_measurements=*/false);
  EXPECT_FALSE(
      cluster
          .Add(Registration(proto::AGENT, "a", "cpu"), "test", std::make_shared<FakeOutbox>(), 0, 0)
          .isolating);
}

TEST(WorkerRegistryTest, SuggestedWindowFeedsEveryAgentAndBuildSlot) {
  WorkerRegistry registry(true);
  proto::JobSpec spec;
  spec.set_device_key("cpu");
  EXPECT_EQ(registry.SuggestedWindow(spec, 512), 2);  // nothing connected: the floor
  registry.Add(Registration(proto::AGENT, "a1", "cpu"), "test", std::make_shared<FakeOutbox>(), 0,
               0);
  registry.Add(Registration(proto::AGENT, "a2", "cpu"), "test", std::make_shared<FakeOutbox>(), 0,
               0);
  registry.Add(Registration(proto::AGENT, "g", "gpu"), "test", std::make_shared<FakeOutbox>(), 0,
               0);
  registry.Add(Registration(proto::BUILDER, "b", "", 8), "test", std::make_shared<FakeOutbox>(), 0,
               0);
  EXPECT_EQ(registry.AgentsOfKey("cpu"), 2);
  EXPECT_EQ(registry.SuggestedWindow(spec, 512), 2 * 2 + 8);
  EXPECT_EQ(registry.SuggestedWindow(spec, 6), 6);
  spec.set_window(3);
  EXPECT_EQ(registry.SuggestedWindow(spec, 512), 3);
}

// The per-key index Add and Remove keep: agents, their CPUs' majority, and
// the quarantine of a key all of whose agents are quarantined.
TEST(WorkerRegistryTest, KeysIndexTheirAgentsThroughAddAndRemove) {
  WorkerRegistry registry(false);
  auto agent = [&](const std::string& name, const std::string& key, const std::string& cpu) {
    proto::Register r = Registration(proto::AGENT, name, key);
    r.mutable_device()->set_llvm_cpu(cpu);
    return registry.Add(r, "test", std::make_shared<FakeOutbox>(), 0, 0).id;
  };
  const std::string a1 = agent("a1", "arm", "cortex-a72");
  const std::string a2 = agent("a2", "arm", "cortex-a53");
  const std::string a3 = agent("a3", "arm", "cortex-a53");
  agent("x", "x86", "znver4");
  registry.Add(Registration(proto::BUILDER, "b", "", 8), "test", std::make_shared<FakeOutbox>(), 0,
               0);
  EXPECT_THAT(registry.AgentIdsOfKey("arm"), ElementsAre(a1, a2, a3));
  EXPECT_EQ(registry.AgentsOfKey("x86"), 1);
  EXPECT_EQ(registry.AgentsOfKey("none"), 0);
  EXPECT_EQ(registry.LlvmCpuOfKey("arm"), "cortex-a53");  // two of three
  registry.Remove(a2);
  registry.Remove(a3);
  EXPECT_EQ(registry.LlvmCpuOfKey("arm"), "cortex-a72");
  EXPECT_THAT(registry.AgentIdsOfKey("arm"), ElementsAre(a1));
  EXPECT_EQ(registry.QuarantineOfKey("arm"), "");
  registry.Find(a1)->quarantine = "slow";
  EXPECT_EQ(registry.QuarantineOfKey("arm"), "slow");
  registry.Remove(a1);
  EXPECT_THAT(registry.AgentIdsOfKey("arm"), IsEmpty());
  EXPECT_EQ(registry.LlvmCpuOfKey("arm"), "");
  EXPECT_EQ(registry.QuarantineOfKey("arm"), "");
}

TEST(WorkerRegistryTest, SilentWorkersAreReportedWithHowLong) {
  WorkerRegistry registry(true);
  Worker& quiet = registry.Add(Registration(proto::BUILDER, "quiet"), "test",
                               std::make_shared<FakeOutbox>(), 0, 0);
  registry.Add(Registration(proto::BUILDER, "chatty"), "test", std::make_shared<FakeOutbox>(), 9,
               0);
  auto silent = registry.Silent(/*now=*/12, /*timeout_s=*/10);
  ASSERT_EQ(silent.size(), 1u);
  EXPECT_EQ(silent[0].first, quiet.id);
  EXPECT_THAT(silent[0].second, HasSubstr("silent for 12 s"));
}

TEST(WorkerRegistryTest, ListDevicesSortsByRoleKeyAndNameAndSaysWhoIsBusy) {
  WorkerRegistry registry(true);
  Worker& a2 = registry.Add(Registration(proto::AGENT, "a2", "cpu"), "test",
                            std::make_shared<FakeOutbox>(), 0, 0);
  registry.Add(Registration(proto::AGENT, "a1", "cpu"), "test", std::make_shared<FakeOutbox>(), 0,
               0);
  registry.Add(Registration(proto::BUILDER, "b", "", 2), "test", std::make_shared<FakeOutbox>(), 0,
               0);
  a2.leases.insert("L1");
  proto::ListDevicesResponse devices = registry.ListDevices();
  ASSERT_EQ(devices.workers_size(), 3);
  EXPECT_EQ(devices.workers(0).name(), "b");
  EXPECT_EQ(devices.workers(0).state(), "free");
  EXPECT_EQ(devices.workers(1).name(), "a1");
  EXPECT_EQ(devices.workers(2).name(), "a2");
  EXPECT_EQ(devices.workers(2).state(), "busy");
  EXPECT_EQ(devices.workers(2).leases(), 1);
}

TEST(HostOfPeerTest, StripsSchemeAndPort) {
  EXPECT_EQ(HostOfPeer("ipv4:127.0.0.1:5555"), "127.0.0.1");
  EXPECT_EQ(HostOfPeer("ipv6:[::1]:5555"), "[::1]");
  EXPECT_EQ(HostOfPeer("test"), "test");
  EXPECT_EQ(HostOfPeer(""), "");
}

TEST(MetricsRoleTest, MapsEachRole) {
  EXPECT_EQ(MetricsRole(proto::BUILDER), WorkerRole::kBuilder);
  EXPECT_EQ(MetricsRole(proto::AGENT), WorkerRole::kAgent);
  EXPECT_EQ(MetricsRole(proto::TUNER), WorkerRole::kTuner);
}

}  // namespace
}  // namespace tunefleet
