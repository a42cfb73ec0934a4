// FleetLauncher: a whole fleet as real processes on 127.0.0.1: a tracker
// (SQLite store, tokens), builders, agents and tuners, each its own process
// with its log in one directory, plus a client. The one launcher of the
// project: `tunefleet up` runs it until Ctrl-C, the integration tests and the
// fleet benchmarks kill (kill -9) and restart its processes. It only starts
// binaries (common/process.h) and links none of them.
//
//   FleetLauncher fleet(FleetLauncher::Options{.builders = 2, .agents = 2});
//   ASSERT_OK(fleet.Start());
//   proto::JobStatus job = fleet.client().Submit(spec).value();
//   fleet.agent(0).Kill(SIGKILL);
//   proto::JobStatus done = fleet.WaitForJob(job.job_id(), 120).value();
//
// Supervision (`tunefleet up`): Supervise(clock), called in a loop, notices a
// child that died, says which one and why, and restarts it with backoff until
// options.restart's limit (launcher/restart_policy.h). Tests that kill and
// restart processes themselves simply never call it.
//
// Test scaffolding lives in separate binaries under tests/, which the caller
// must have as data dependencies when it asks for them:
//   simulate_measure_ms > 0          //tests:fake_agent for the agents (and
//                                    the tracker without host isolation:
//                                    the fake agents share one host)
//   simulate_build_ms/_delay_ms > 0  //tests:test_builder
//   enable_test_templates            //tests:test_tracker, test_builder and
//                                    test_tuner (they link dense_fault.test)
#ifndef TUNEFLEET_LAUNCHER_FLEET_LAUNCHER_H_
#define TUNEFLEET_LAUNCHER_FLEET_LAUNCHER_H_

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "clients/cpp/fleet_client.h"
#include "common/clock.h"
#include "common/process.h"
#include "launcher/restart_policy.h"
#include "proto/fleet.pb.h"

namespace tunefleet {

class FleetLauncher {
 public:
  // The defaults suit a fleet that is started and stopped often on one busy
  // host (tests, benchmarks): failures detected within seconds, a looser
  // quarantine. `tunefleet up` resets what it wants the tracker to decide.
  struct Options {
    // Tokens, store, logs, port and address files. Empty: a fresh directory
    // under $TEST_TMPDIR (or /tmp); otherwise created (0700) if missing.
    std::string dir;
    int port = 0;          // the (first) tracker's; 0 = any free one
    int metrics_port = 0;  // 0 = any free one
    // Workers are named builder-<name_prefix><i>, agent-..., tuner-...
    std::string name_prefix;
    int builders = 1;
    int agents = 1;
    int tuners = 1;
    std::string device_key = "cpu";
    int builder_parallelism = 1;         // 0 = every core
    int agent_threads = 1;               // kernel threads per agent; 0 = every core
    double simulate_measure_ms = 0;      // > 0: fake agents (//tests:fake_agent)
    double simulate_build_delay_ms = 0;  // > 0: test builders sleep first
    double simulate_build_ms = 0;        // > 0: test builders compile nothing
    int agents_per_process = 1;          // > 1 only with simulate_measure_ms
    // > 0: each fake agent process's agents are a swarm, their streams over
    // this many connections (tests/fake_agent_swarm.h), for fleets of 10,000.
    int agents_swarm_connections = 0;
    // Tracker settings; unset: the tracker's own defaults.
    std::optional<double> measure_lease_grace_s = 120;
    std::optional<double> worker_timeout_s = 3;
    std::optional<double> heartbeat_s = 0.3;
    bool enable_test_templates = false;  // dense_fault.test on tracker, builders, tuners
    // The trackers' store: empty, <dir>/tracker.db (SQLite); or a PostgreSQL
    // database ("postgresql://..."), which tracker replicas share.
    std::string store;
    // Tracker processes: more than one only with a PostgreSQL store (one
    // leads, the others stand by: tracker/replica.h). Workers and the
    // client are given every replica's address.
    int trackers = 1;
    // The store's synchronous=FULL (the tracker's default, for deployments).
    // Off here: a fleet on one machine for tests, benchmarks and `up` needs
    // to survive kill -9, not power loss, and commits without an fsync each.
    bool store_sync_full = false;
    // The agents' binary (empty: //device_agent:tunefleet_agent from
    // FindFleetBinary), a command they are started through (e.g.
    // {"/usr/bin/qemu-aarch64", "-L", "/"} for a cross-built AArch64 agent)
    // and the --runner_launcher they pass on to their runner children.
    std::string agent_binary;
    std::vector<std::string> agent_command_prefix;
    std::string agent_runner_launcher;
    // More flags for agent i (e.g. a fake agent's --calibration_gflops).
    std::map<int, std::vector<std::string>> agent_flags;
    // More flags for the tracker. By default a looser agent quarantine than
    // the tracker's own (tracker/agent_calibration.h): this fleet's real
    // agents share a 2-core test machine with the tracker, builders and
    // other test processes, so their calibrations differ for reasons no
    // deployment has; the policy itself is tested with fake agents whose
    // figures are fixed. Empty: the tracker's defaults.
    std::vector<std::string> tracker_flags = {"--quarantine_max_noise=0.25",
                                              "--quarantine_min_relative_speed=0.5",
                                              "--quarantine_recheck_s=2"};
    // The target string of DenseJob.
    std::string target = "llvm -mcpu=native";
    // How Supervise restarts a child that died.
    RestartOptions restart;
    // How long Start() waits for every worker to register (thousands of
    // simulated agents take a while).
    double start_timeout_s = 60;
  };

  // What Supervise saw or did to one child ("tracker", "agent-0", ...).
  struct ChildEvent {
    enum class Kind {
      kDied,           // restarted at restart_at_s
      kRestarted,      // running again
      kRestartFailed,  // could not be started; tried again with backoff
      kGaveUp,         // died too often; left dead
    };
    Kind kind;
    std::string child;
    std::string detail;  // why it died, its new pid, or the start error
    double restart_at_s = 0;
    // "agent-0 killed by SIGKILL (log: <dir>/agent-0.log); restarting it in
    // 0.5 s (restart 1 of 5)".
    std::string ToString() const;
  };

  explicit FleetLauncher(Options options);
  ~FleetLauncher();  // stops everything

  // Tracker first (waits for its port), then every worker; returns when all
  // of them have registered. Writes <dir>/address and a token file per role.
  [[nodiscard]] absl::Status Start();
  // Stops the workers, then the tracker, each given `grace_s` after SIGTERM
  // before SIGKILL. The destructor does this with a short grace.
  void Stop(double grace_s);
  // One supervision step, for a loop that calls it every fraction of a
  // second: reaps every child that died since the last step and schedules
  // its restart (backoff per options.restart), restarts those whose time has
  // come (on `clock`), and gives up on a child that died too often. Returns
  // what happened, for the caller to print; nothing after Stop().
  std::vector<ChildEvent> Supervise(ClockInterface& clock);

  // (Re)starts tracker replica `i` on the same port and store.
  [[nodiscard]] absl::Status StartTracker(int i = 0);
  [[nodiscard]] absl::Status StartBuilder(int i);
  [[nodiscard]] absl::Status StartAgent(int i);
  [[nodiscard]] absl::Status StartTuner(int i);

  Process& tracker(int i = 0) { return trackers_.at(i); }
  Process& builder(int i) { return builders_.at(i); }
  Process& agent(int i) { return agents_.at(i); }
  Process& tuner(int i) { return tuners_.at(i); }
  FleetClient& client() { return *client_; }
  const std::string& dir() const { return dir_; }
  // "127.0.0.1:PORT", or every tracker replica's, comma-separated.
  std::string address() const;
  // The log name of tracker replica `i` ("tracker", "tracker-1", ...).
  static std::string TrackerName(int i);

  // A small dense job on the fleet's key with fast measure options.
  proto::JobSpec DenseJob(int64_t n_trial, const std::string& shape = "48,48,48") const;
  // Polls until the job is SUCCEEDED/FAILED/CANCELLED.
  [[nodiscard]] absl::StatusOr<proto::JobStatus> WaitForJob(const std::string& job_id,
                                                            double timeout_s);
  // Polls ListDevices until `pred` holds.
  [[nodiscard]] absl::StatusOr<proto::ListDevicesResponse> WaitForDevices(
      const std::function<bool(const proto::ListDevicesResponse&)>& pred, double timeout_s);
  // The content of a process's log ("tracker", "agent-0", ...).
  std::string Log(const std::string& name) const;
  // Of tracker replicas on a PostgreSQL store: the one whose log says it
  // took the leader lease at `epoch` (tracker/replica.cc's "took the leader
  // lease at epoch N:"); -1 while none has.
  int LeaderAt(int64_t epoch) const;
  // Polls LeaderAt every 10 ms; DeadlineExceeded after timeout_s.
  [[nodiscard]] absl::StatusOr<int> WaitForLeaderAt(int64_t epoch, double timeout_s) const;

 private:
  // The binary for a role: the test one from tests/ when `test`.
  [[nodiscard]] absl::StatusOr<std::string> Binary(const std::string& package,
                                                   const std::string& name, bool test,
                                                   const std::string& test_name) const;

  // A child's supervision state, by the child's name.
  struct Supervised {
    RestartPolicy policy;
    bool seen_running = false;
    std::optional<double> restart_at_s;
    bool given_up = false;
  };
  // One child's step of Supervise.
  void SuperviseChild(const std::string& name, Process& process,
                      const std::function<absl::Status()>& start, double now_s,
                      std::vector<ChildEvent>& events);

  Options options_;
  bool stopped_ = false;
  std::map<std::string, Supervised> supervised_;
  std::string dir_;
  std::vector<int> ports_;  // of each tracker replica
  std::vector<Process> trackers_;
  std::vector<Process> builders_;
  std::vector<Process> agents_;
  std::vector<Process> tuners_;
  std::unique_ptr<FleetClient> client_;
};

}  // namespace tunefleet

#endif  // TUNEFLEET_LAUNCHER_FLEET_LAUNCHER_H_
