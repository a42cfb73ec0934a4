// FakeAgent: a simulated device agent for integration tests and benchmarks
// (never linked into a production binary). It registers as an AGENT on a
// device key like a real agent, and answers every MeasureRequest after a
// fixed delay with NO_ERROR and `repeat` costs of that delay, without
// loading or running anything (it accepts any artifact, even a placeholder,
// and never asks for bytes). With calibration_gflops set it answers
// calibrations with fixed figures. With a cost oracle (tests/cost_oracle.h)
// each measurement instead takes the trial time a real machine recorded for
// its config (times time_scale) and answers its recorded cost: the config
// is read from the test builder's placeholder artifact ("SIMULATED <job>
// <config json>", remembered by its hash for requests that omit the bytes;
// one it never saw it asks for, as a real agent does),
// the workload from the request. One measurement at a time, in arrival order,
// like a real agent; Stop() drains like one (worker_stream/worker_daemon.h).
//
//   FakeAgentOptions options;
//   options.worker = ...;  options.device_key = "sim";  options.measure_s = 0.1;
//   FakeAgent agent(options, DetectHostDevice());
//   agent.Start();  ...  agent.Stop();
//
// //tests:fake_agent runs N of them in one process (fake_agent_main.cc);
// tests/fake_agent_swarm.h simulates thousands without a thread apiece.
#ifndef TUNEFLEET_TESTS_FAKE_AGENT_H_
#define TUNEFLEET_TESTS_FAKE_AGENT_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "proto/fleet.pb.h"
#include "tests/cost_oracle.h"
#include "worker_stream/worker_daemon.h"

namespace tunefleet {

struct FakeAgentOptions {
  WorkerDaemonOptions worker;
  std::string device_key;
  double measure_s = 0.1;  // every measurement takes this long and costs this much
  // > 0: it says it calibrates (Register.calibrates) and answers every
  // CalibrateRequest at once with these figures (a throttled or noisy host
  // is one with a low figure or a large spread); 0: it does not calibrate.
  double calibration_gflops = 0;
  double calibration_noise = 0.01;
  // Set: costs and trial times from recorded trials (measure_s unused).
  std::shared_ptr<const CostOracle> costs;
  double time_scale = 1;  // with costs: a trial takes its recorded time x this

  [[nodiscard]] absl::Status Validate() const;
};

// The answer of a simulated agent to `request`: NO_ERROR and `cost_s` for
// each repeat the real time evaluator would report (min and max dropped
// when more than 2), measured in `seconds`.
proto::WorkerMessage SimulatedMeasureResult(const proto::MeasureRequest& request, double cost_s,
                                            double seconds);

class FakeAgent final : private WorkerRoleInterface {
 public:
  // `options` must be valid (Validate()).
  FakeAgent(FakeAgentOptions options, proto::DeviceInfo device);
  ~FakeAgent() override;  // Stop()

  void Start();
  void Stop();

  const WorkerConnection& connection() const { return worker_->connection(); }
  int64_t measured() const;

 private:
  void OnMessage(const proto::TrackerMessage& message) override;
  void OnSession(const proto::Registered& registered) override;
  int64_t InFlight() const override;
  void MeasureLoop();
  // With options_.costs: the answer to `request` and how long it takes (an
  // answer with an error for a config or workload the oracle cannot place).
  std::pair<proto::WorkerMessage, double> OracleMeasurement(const proto::MeasureRequest& request)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const FakeAgentOptions options_;
  mutable absl::Mutex mu_;
  absl::CondVar changed_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::deque<proto::MeasureRequest> queue_ ABSL_GUARDED_BY(mu_);
  bool measuring_ ABSL_GUARDED_BY(mu_) = false;
  int64_t measured_ ABSL_GUARDED_BY(mu_) = 0;
  // With costs: artifact hash -> its config JSON.
  absl::flat_hash_map<std::string, std::string> configs_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<WorkerDaemon> worker_;
  std::thread measuring_thread_;
};

}  // namespace tunefleet

#endif  // TUNEFLEET_TESTS_FAKE_AGENT_H_
