// Dispatcher: hands queued work to free workers. Jobs go to tuners (fewest
// jobs first, up to each tuner's parallelism); builds go to the builder
// with the most free slots; measurements go one at a time to the free
// agents of the job's device key, in the order they became free. Jobs share
// the builders and each device key by stride scheduling weighted by
// priority (a job of priority 2 gets twice the turns of a job of priority 1
// while both have work waiting). With measurement isolation a host never
// builds while one of its agents measures, nor measures while it builds,
// waiting measurements go first, and its CPU agents measure one at a time
// (they share its cores).
//
// It also answers QueueSummary (queues per key, dispatch latency). Not
// thread-safe: the Scheduler facade calls everything under its one mutex.
//
//   dispatcher.MarkAgentFree(agent);
//   dispatcher.DispatchAll(received_at);  // after every event
#ifndef TUNEFLEET_TRACKER_DISPATCHER_H_
#define TUNEFLEET_TRACKER_DISPATCHER_H_

#include <cstddef>
#include <list>
#include <map>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "common/clock.h"
#include "proto/fleet.pb.h"
#include "tracker/job_table.h"
#include "tracker/lease_keeper.h"
#include "tracker/metrics_interface.h"
#include "tracker/scheduler_options.h"
#include "tracker/trial_lifecycle.h"
#include "tracker/user_quotas.h"
#include "tracker/worker_registry.h"

namespace tunefleet {

class Dispatcher {
 public:
  // Every pointer must outlive the dispatcher; `metrics` may be null.
  Dispatcher(const SchedulerOptions* options, JobTable* jobs, WorkerRegistry* workers,
             LeaseKeeper* leases, TrialLifecycle* lifecycle, TrackerMetricsInterface* metrics,
             ClockInterface* clock)
      : options_(options),
        jobs_(jobs),
        workers_(workers),
        leases_(leases),
        lifecycle_(lifecycle),
        metrics_(metrics),
        clock_(clock) {}

  // A new job joins stride scheduling where the others are now (it does not
  // get a burst of turns for the time it was not there).
  void Enroll(Job& job);
  // An agent with no lease waits for a measurement of its key (not while
  // it calibrates or is quarantined: tracker/agent_calibration.h).
  void MarkAgentFree(Worker& agent);
  // A worker leaves (before RequeueAllOf): it is no longer free.
  void Forget(const Worker& worker);

  // Everything that can go now: unassigned jobs to tuners, then queued
  // measurements, then queued builds. `since` is the steady time of the
  // event that made it possible (for the dispatch latency). Call after
  // every event and every tick.
  void DispatchAll(double since);
  // The agent holds the lease but lost the artifact: send the bytes again.
  void ResendWithArtifact(Worker& agent, Job& job, Trial& trial);

  proto::QueueSummaryResponse QueueSummary(double now) const;
  // Users with jobs in flight against their quotas (UserQuotas::Summaries).
  std::vector<proto::UserSummary> UserSummaries(double now) const;

 private:
  void AssignJobs();
  void SendAssignment(Worker& tuner, Job& job);
  void DispatchBuilds(double since);
  // False while `job` builds for "-mcpu=native" and no agent of its key is
  // connected to say which CPU that is.
  bool MayBuild(const Job& job) const;
  void DispatchMeasures(const std::string& device_key, double since);
  void SendMeasure(Worker& agent, Job& job, Trial& trial, bool with_bytes);
  bool HostMayBuild(const std::string& host) const;
  // Whether `agent` (isolating) may start a measurement: its host builds
  // nothing and calibrates nothing, and (a CPU agent) no other CPU agent of
  // its host is measuring.
  bool HostMayMeasure(const Worker& agent) const;
  // An agent of `host` calibrates or waits to (timed like a measurement).
  bool HostCalibrates(const std::string& host) const;
  // Device keys with measurements waiting.
  std::vector<std::string> KeysWaiting() const;
  void RecordDispatch(Stage stage, double since);

  const SchedulerOptions* const options_;
  JobTable* const jobs_;
  WorkerRegistry* const workers_;
  LeaseKeeper* const leases_;
  TrialLifecycle* const lifecycle_;
  TrackerMetricsInterface* const metrics_;
  ClockInterface* const clock_;

  // Per-user quotas: their hourly build counts.
  UserQuotas quotas_;
  // Free agents per device key, in the order they became free, each found
  // by id too: a fleet of 10,000 that disconnects at once is not 10,000
  // walks of the list.
  struct FreeAgents {
    std::list<std::string> order;
    absl::flat_hash_map<std::string, std::list<std::string>::iterator> at;
  };
  std::map<std::string, FreeAgents> free_agents_;
  double virtual_build_pass_ = 0;
  std::map<std::string, double> virtual_measure_pass_;
  // Recent measurement dispatch latencies (seconds), a ring.
  std::vector<double> dispatch_ring_;
  size_t dispatch_next_ = 0;
};

}  // namespace tunefleet

#endif  // TUNEFLEET_TRACKER_DISPATCHER_H_
