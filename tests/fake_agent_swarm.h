// FakeAgentSwarm: thousands of simulated device agents in one process, for
// the dispatch benchmark's fleets of 10,000 (bench/fleet_bench.cc; never
// linked into a production binary). To the tracker each agent is what a
// FakeAgent is (tests/fake_agent.h): it registers as an AGENT on a device
// key, answers every MeasureRequest after a fixed delay with that cost,
// one at a time in arrival order, answers calibrations at once, heartbeats,
// and dials again with the worker's backoff when its stream ends. What it
// saves is FakeAgent's three threads and TCP connection per agent, which a
// 2-core machine cannot give 10,000 agents: each agent here is one
// bidirectional stream driven by gRPC's callback API, the streams spread
// over a few channels (`connections`), and one timer thread finishes
// measurements, sends heartbeats and redials.
//
//   FakeAgentSwarmOptions options;
//   options.tracker_address = ...;  options.token = ...;
//   options.device_key = "sim";  options.agents = 10000;  options.measure_s = 2;
//   FakeAgentSwarm swarm(options, DetectHostDevice());
//   swarm.Start();  ...  swarm.Stop();
#ifndef TUNEFLEET_TESTS_FAKE_AGENT_SWARM_H_
#define TUNEFLEET_TESTS_FAKE_AGENT_SWARM_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <queue>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/random/random.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "grpcpp/grpcpp.h"
#include "proto/fleet.grpc.pb.h"

namespace tunefleet {

struct FakeAgentSwarmOptions {
  std::string tracker_address;  // one address (the swarm follows no leader)
  std::string token;            // empty: none
  std::shared_ptr<grpc::ChannelCredentials> credentials;  // null: plaintext (loopback)
  std::string device_key;
  std::string name = "fake-agent";  // agent i registers as "<name>-<i>"
  int agents = 1;
  int connections = 16;    // TCP connections the streams share
  double measure_s = 0.1;  // every measurement takes this long and costs this much
  // > 0: the agents calibrate, answering with these figures (FakeAgentOptions).
  double calibration_gflops = 0;
  double calibration_noise = 0.01;
  double initial_backoff_s = 0.1;
  double max_backoff_s = 5.0;

  [[nodiscard]] absl::Status Validate() const;
};

class FakeAgentSwarm {
 public:
  // `options` must be valid (Validate()).
  FakeAgentSwarm(FakeAgentSwarmOptions options, proto::DeviceInfo device);
  ~FakeAgentSwarm();  // Stop()

  FakeAgentSwarm(const FakeAgentSwarm&) = delete;
  FakeAgentSwarm& operator=(const FakeAgentSwarm&) = delete;

  void Start();
  // Ends every stream and waits for them; measurements in flight are
  // dropped (the tracker requeues their leases).
  void Stop();

  int64_t registered() const;  // agents whose current stream is registered
  int64_t sessions() const;    // registrations so far, over all agents
  int64_t measured() const;    // measurements answered

 private:
  class Stream;
  struct Agent;
  enum class EventKind { kMeasured, kHeartbeat, kDial };
  struct Event {
    double at;  // steady seconds
    int agent;
    uint64_t session;  // the session it belongs to (kDial: the one that ended)
    EventKind kind;
    bool operator>(const Event& other) const { return at > other.at; }
  };

  void Dial(Agent& agent) ABSL_EXCLUSIVE_LOCKS_REQUIRED(agent.mu);
  void OnMessage(Agent& agent, uint64_t session, const proto::TrackerMessage& message);
  void OnStreamDone(Agent& agent, uint64_t session);
  void StartMeasurement(Agent& agent) ABSL_EXCLUSIVE_LOCKS_REQUIRED(agent.mu);
  void Schedule(Event event);
  void TimerLoop();
  void Fire(const Event& event);
  static double Now();

  const FakeAgentSwarmOptions options_;
  const proto::DeviceInfo device_;
  std::vector<std::unique_ptr<proto::WorkerGateway::Stub>> stubs_;
  std::vector<std::unique_ptr<Agent>> agents_;

  mutable absl::Mutex mu_;  // the timer's queue and the counts
  absl::CondVar changed_;
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  int64_t live_streams_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t registered_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t sessions_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t measured_ ABSL_GUARDED_BY(mu_) = 0;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events_ ABSL_GUARDED_BY(mu_);
  absl::BitGen jitter_ ABSL_GUARDED_BY(mu_);
  std::thread timer_;
};

}  // namespace tunefleet

#endif  // TUNEFLEET_TESTS_FAKE_AGENT_SWARM_H_
