// fake_agent: N simulated device agents in one process, for integration
// tests and benchmarks only (tests/fake_agent.h). Each registers as
// "<name>-<i>" (or "<name>" when N is 1) on --key and answers every
// measurement after --measure_ms without running anything.
//
//   fake_agent --tracker=127.0.0.1:7070 --token_file=agent.token --key=sim --measure_ms=100
//   --agents=64
//
// The shared worker flags (--tracker, --token_file, --tls_*, --name,
// --drain_timeout_s) are in worker_stream/worker_flags.h.
#include <iostream>
#include <memory>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "common/daemon_util.h"
#include "common/logging.h"
#include "kernel_runtime/device_info.h"
#include "tests/fake_agent.h"
#include "worker_stream/worker_flags.h"

ABSL_FLAG(std::string, key, "", "device key (required)");
ABSL_FLAG(double, measure_ms, 100, "every measurement takes this long and costs this much");
ABSL_FLAG(int, agents, 1, "simulated agents in this process");
ABSL_FLAG(double, calibration_gflops, 0,
          "> 0: calibrate, answering every calibration with this throughput (0: do not)");
ABSL_FLAG(double, calibration_noise, 0.01, "the spread those calibrations report");

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
  const std::string name = options.worker.name;
  const tunefleet::proto::DeviceInfo device = tunefleet::DetectHostDevice();
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
