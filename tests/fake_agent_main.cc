// fake_agent: N simulated device agents in one process, for integration
// tests and benchmarks only (tests/fake_agent.h). Each registers as
// "<name>-<i>" (or "<name>" when N is 1) on --key and answers every
// measurement after --measure_ms without running anything. With
// --swarm_connections=C the N agents are a FakeAgentSwarm
// (tests/fake_agent_swarm.h): one stream each over C connections, no
// thread apiece, for fleets of 10,000.
//
//   fake_agent --tracker=127.0.0.1:7070 --token_file=agent.token --key=sim --measure_ms=100
//   --agents=64
//
// --cost_table replays a real machine's recorded trials (tests/cost_oracle.h).
//
// The shared worker flags (--tracker, --token_file, --tls_*, --name,
// --drain_timeout_s) are in worker_stream/worker_flags.h.
#include <iostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "common/daemon_util.h"
#include "common/logging.h"
#include "kernel_runtime/device_info.h"
#include "tests/cost_oracle.h"
#include "tests/fake_agent.h"
#include "tests/fake_agent_swarm.h"
#include "worker_stream/worker_flags.h"

ABSL_FLAG(std::string, key, "", "device key (required)");
ABSL_FLAG(double, measure_ms, 100, "every measurement takes this long and costs this much");
ABSL_FLAG(int, agents, 1, "simulated agents in this process");
ABSL_FLAG(double, calibration_gflops, 0,
          "> 0: calibrate, answering every calibration with this throughput (0: do not)");
ABSL_FLAG(double, calibration_noise, 0.01, "the spread those calibrations report");
ABSL_FLAG(std::string, cost_table, "",
          "records of a real machine's trials (tests/cost_oracle.h): each measurement takes its "
          "config's recorded trial time and costs its recorded cost (--measure_ms unused)");
ABSL_FLAG(double, time_scale, 1, "with --cost_table: a trial takes its recorded time x this");
ABSL_FLAG(int, swarm_connections, 0,
          "> 0: the agents as one swarm, their streams over this many connections (0: a "
          "worker runtime per agent)");

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  tunefleet::BlockTerminationSignals();
  auto fail = [](absl::string_view message) {
    std::cerr << "fake_agent: " << message << "\n";
    return 2;
  };
  absl::StatusOr<tunefleet::WorkerDaemonOptions> worker =
      tunefleet::WorkerDaemonOptionsFromFlags("fake-agent");
  if (!worker.ok()) return fail(worker.status().message());
  const int agents = absl::GetFlag(FLAGS_agents);
  if (agents < 1) return fail("--agents must be >= 1");
  tunefleet::FakeAgentOptions options;
  options.worker = *std::move(worker);
  options.device_key = absl::GetFlag(FLAGS_key);
  options.measure_s = absl::GetFlag(FLAGS_measure_ms) / 1000.0;
  options.calibration_gflops = absl::GetFlag(FLAGS_calibration_gflops);
  options.calibration_noise = absl::GetFlag(FLAGS_calibration_noise);
  if (const std::string table = absl::GetFlag(FLAGS_cost_table); !table.empty()) {
    absl::StatusOr<tunefleet::CostOracle> oracle = tunefleet::CostOracle::Load(table);
    if (!oracle.ok()) return fail(oracle.status().message());
    TF_LOG(INFO) << "costs of " << oracle->num_records() << " recorded trials of "
                 << oracle->num_workloads() << " workloads from " << table;
    options.costs = std::make_shared<const tunefleet::CostOracle>(*std::move(oracle));
    options.time_scale = absl::GetFlag(FLAGS_time_scale);
  }
  const std::string name = options.worker.name;
  const tunefleet::proto::DeviceInfo device = tunefleet::DetectHostDevice();
  if (const int connections = absl::GetFlag(FLAGS_swarm_connections); connections > 0) {
    if (options.costs != nullptr) return fail("--cost_table takes agents with a thread each");
    tunefleet::FakeAgentSwarmOptions swarm_options;
    swarm_options.tracker_address = options.worker.tracker_address;
    swarm_options.token = options.worker.token;
    swarm_options.credentials = options.worker.credentials;
    swarm_options.device_key = options.device_key;
    swarm_options.name = name;
    swarm_options.agents = agents;
    swarm_options.connections = connections;
    swarm_options.measure_s = options.measure_s;
    swarm_options.calibration_gflops = options.calibration_gflops;
    swarm_options.calibration_noise = options.calibration_noise;
    if (absl::Status valid = swarm_options.Validate(); !valid.ok()) return fail(valid.message());
    tunefleet::FakeAgentSwarm swarm(swarm_options, device);
    swarm.Start();
    const int signal = tunefleet::WaitForTerminationSignal();
    TF_LOG(INFO) << "signal " << signal << ": stopping a swarm of " << agents << " fake agents";
    swarm.Stop();
    return 0;
  }
  std::vector<std::unique_ptr<tunefleet::FakeAgent>> fleet;
  for (int i = 0; i < agents; ++i) {
    options.worker.name = agents == 1 ? name : absl::StrCat(name, "-", i);
    if (absl::Status valid = options.Validate(); !valid.ok()) return fail(valid.message());
    fleet.push_back(std::make_unique<tunefleet::FakeAgent>(options, device));
  }
  for (auto& agent : fleet) agent->Start();
  const int signal = tunefleet::WaitForTerminationSignal();
  TF_LOG(INFO) << "signal " << signal << ": stopping " << agents << " fake agent(s)";
  for (auto& agent : fleet) agent->Stop();
  return 0;
}
