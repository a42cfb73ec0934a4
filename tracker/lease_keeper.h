// LeaseKeeper: the leases on work in flight. A lease gives one trial of one
// job to one worker for one stage (build or measure) until a deadline; it
// ends when the worker's result comes back, or when the worker is lost
// (stream closed, silent, or a lease past its deadline), and then the trial
// goes back to the front of its queue, or after the job's max_attempts ends
// with an error result saying why (through TrialLifecycle).
//
// It also counts the leases in flight per host, for measurement isolation
// (SchedulerOptions::isolate_measurements, used by the Dispatcher). Not
// thread-safe: the Scheduler facade calls everything under its one mutex.
#ifndef TUNEFLEET_TRACKER_LEASE_KEEPER_H_
#define TUNEFLEET_TRACKER_LEASE_KEEPER_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "tracker/job_table.h"
#include "tracker/lease_tokens.h"
#include "tracker/metrics_interface.h"
#include "tracker/trial_lifecycle.h"
#include "tracker/worker_registry.h"

namespace tunefleet {

struct Lease {
  std::string job_id;
  int64_t trial_id = 0;
  std::string worker_id;
  Stage stage = Stage::kBuild;
  double deadline = 0;     // steady seconds
  std::string host;        // of the worker, for measurement isolation
  bool isolating = false;  // counted in the per-host counts
  // Its trial was answered another way (Revoke): the holder's result only
  // ends it (and frees the worker), and losing the holder requeues nothing.
  bool revoked = false;
};

class LeaseKeeper {
 public:
  // Every pointer must outlive the keeper; `metrics` may be null.
  LeaseKeeper(JobTable* jobs, WorkerRegistry* workers, TrialLifecycle* lifecycle,
              TrackerMetricsInterface* metrics)
      : jobs_(jobs), workers_(workers), lifecycle_(lifecycle), metrics_(metrics) {}

  // Signs lease ids from now on (Scheduler::Create, with its store's key),
  // so that a tracker after this one on the store can adopt the results of
  // leases this one gave (Claim). Without it ids are "L<n>", claimable by
  // no one.
  void SetTokens(LeaseTokens tokens) { tokens_ = std::move(tokens); }

  // Leases `trial` to `worker` for `stage` until `deadline`: the trial is
  // building or measuring, the worker and the job count it. Returns the
  // lease id.
  std::string Grant(Job& job, Trial& trial, Worker& worker, Stage stage, double deadline);
  // What `lease_id`, which this keeper did not give, claims, when this
  // store's key signed it for `worker` (a lease of this tracker's
  // predecessor on the store); InvalidArgument naming why not
  // (LeaseTokens::Verify), FailedPrecondition without tokens.
  [[nodiscard]] absl::StatusOr<LeaseClaim> Claim(const Worker& worker,
                                                 const std::string& lease_id) const;
  // Marks a lease whose trial was answered another way (a predecessor's
  // lease delivered its result) as revoked: a measuring agent is asked to
  // stop (AbortMeasure); the lease stays until the holder answers it (or is
  // lost), so the holder is freed as for any lease, and its result is
  // dropped.
  void Revoke(const std::string& lease_id, const std::string& reason);
  // The lease if `worker` holds it for `stage`, else null (expired,
  // requeued, never given, or another stage).
  const Lease* Find(const Worker& worker, const std::string& lease_id, Stage stage) const;
  // The lease's result came back: the worker and the job stop counting it.
  void End(const std::string& lease_id);
  // `worker` is lost (already out of the registry): each trial it held goes
  // back to its queue, or gives up after max_attempts. `kind` labels the
  // requeue metric.
  void RequeueAllOf(const Worker& worker, const std::string& reason, RequeueReason kind);
  // (worker id, why) for every lease past its deadline at `now`.
  std::vector<std::pair<std::string, std::string>> Expired(double now) const;
  // Asks the agent holding each measure lease of `job_id` to stop it now
  // (AbortMeasure); the leases end when the agents answer. Returns how many.
  int AbortMeasuresOf(const std::string& job_id, const std::string& reason);
  // Every deadline `seconds` later (the tracker stalled that long).
  void ForgiveStall(double seconds);

  // Leases in flight on `host`, of isolating workers.
  int BuildsOn(const std::string& host) const { return CountOn(host_builds_, host); }
  int MeasuresOn(const std::string& host) const { return CountOn(host_measures_, host); }

 private:
  void Requeue(const std::string& lease_id, const std::string& reason, RequeueReason kind);
  static int CountOn(const std::map<std::string, int>& counts, const std::string& host);

  JobTable* const jobs_;
  WorkerRegistry* const workers_;
  TrialLifecycle* const lifecycle_;
  TrackerMetricsInterface* const metrics_;
  absl::flat_hash_map<std::string, Lease> leases_;
  int64_t next_lease_ = 1;
  std::optional<LeaseTokens> tokens_;
  std::map<std::string, int> host_builds_;
  std::map<std::string, int> host_measures_;
};

}  // namespace tunefleet

#endif  // TUNEFLEET_TRACKER_LEASE_KEEPER_H_
