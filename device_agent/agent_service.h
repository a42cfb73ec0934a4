// AgentService: what a device agent does with the MeasureRequests the tracker
// sends it. One measurement at a time, in arrival order, on one long-lived
// measuring thread (the Runner must be called from a long-lived thread: its
// child dies with the thread that spawned it, see runner.h), so timings never
// disturb each other. Artifacts are kept by hash, so the tracker sends each
// one's bytes once.
//
//   AgentService service(runner.get(), AgentServiceOptions{});
//   service.Handle(request, [&](proto::MeasureResult result) {
//     ... send it; called on the measuring thread ...
//   });
//
// A request with run.shared_object set stores the bytes under
// run.artifact_hash after checking that they hash (SHA-256, hex) to it and,
// when the tracker pins builder keys, that the builder's signature verifies
// (common/signing.h); a mismatch or a bad signature is answered UNKNOWN
// naming it, and nothing is written or run. A request
// without bytes uses the cached artifact, or is answered need_artifact=true
// (with run.error_no UNKNOWN, so that nobody mistakes it for a measurement):
// the tracker resends it with the bytes.
//
// Every successful run's costs pass the fleet's cost rule before they leave
// (ValidateCosts with the workload's FLOPs and options.max_gflops): a cost
// that is not finite and > 0, or faster than the device could run the
// FLOPs, is answered RUNTIME_DEVICE naming it, so it can never become a best.
//
// Calibrate() runs options.calibrate (device_agent/calibration.h) on the
// same thread, between measurements, so a calibration and a measurement
// never disturb each other.
//
// Thread-safe. The destructor drops queued requests unanswered (the tracker
// requeues them when the stream breaks) and waits for the measurement in
// progress.
#ifndef TUNEFLEET_DEVICE_AGENT_AGENT_SERVICE_H_
#define TUNEFLEET_DEVICE_AGENT_AGENT_SERVICE_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <thread>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "common/artifact_cache.h"
#include "common/signing.h"
#include "device_agent/calibration.h"
#include "kernel_runtime/runner_interface.h"
#include "proto/fleet.pb.h"

namespace tunefleet {

struct AgentServiceOptions {
  int64_t artifact_cache_capacity_bytes = int64_t{512} << 20;
  // The device's plausible peak (PlausiblePeakGflops of its DeviceInfo,
  // proto_convert/measure_result.h); 0 checks only that costs are finite and
  // > 0. A success whose costs fail ValidateCosts is answered as an error.
  double max_gflops = 0;
  // Runs the calibration kernel for Calibrate(); unset: this agent cannot
  // calibrate, and Calibrate answers with an error.
  std::function<absl::StatusOr<CalibrationFigures>()> calibrate;
  // Refuse every artifact unless the tracker pins builder keys and the
  // artifact is signed by one of them (a board that must never run unsigned
  // code, whatever the tracker says).
  bool require_signed_artifacts = false;

  [[nodiscard]] absl::Status Validate() const;
};

class AgentService {
 public:
  using Done = std::function<void(proto::MeasureResult)>;
  using CalibrationDone = std::function<void(proto::Calibration)>;

  // `runner` (not owned, not null) must outlive the service. `options` must
  // be valid (Validate()). Simulated agents are //tests:fake_agent.
  AgentService(RunnerInterface* runner, AgentServiceOptions options);
  ~AgentService();

  AgentService(const AgentService&) = delete;
  AgentService& operator=(const AgentService&) = delete;

  // Queues `request`; `done` is called once, on the measuring thread, unless
  // the request is dropped (DropQueued, destruction) before it starts.
  void Handle(const proto::MeasureRequest& request, Done done);

  // Queues a calibration behind the queued requests; `done` is called once,
  // on the measuring thread, with its figures or with Calibration.error
  // saying why there are none (unless dropped like a request).
  void Calibrate(CalibrationDone done);

  // Forgets queued requests and calibrations without answering them (their
  // session broke and the tracker requeued them); returns how many
  // measurement requests it dropped.
  int64_t DropQueued();

  // Stops the request of lease `lease_id`: running, its runner child is
  // killed (RunnerInterface::Abort) and its result says "aborted: reason";
  // queued, it is answered at once with such an error, unrun. Unknown
  // leases (already answered) are ignored.
  void Abort(const std::string& lease_id, const std::string& reason);

  // The builder keys the tracker pins (Registered.builder_keys), replacing
  // the previous ones. Non-empty: artifact bytes are loaded only if signed
  // by one of them; others are answered UNKNOWN "artifact refused: ..." and
  // counted (artifacts_refused). Thread-safe.
  void SetPinnedBuilderKeys(PinnedKeys keys);

  int64_t queued() const;
  int64_t measured() const;  // requests answered so far
  int64_t artifacts_refused() const;
  int64_t cache_entries() const;
  int64_t cache_bytes() const;
  bool HasArtifact(const std::string& hash) const;

 private:
  struct Pending {
    proto::MeasureRequest request;
    Done done;
    CalibrationDone calibration_done;  // set: a calibration, not a measurement
  };

  void MeasureLoop();
  proto::MeasureResult Measure(proto::MeasureRequest& request);
  proto::Calibration RunCalibrationNow();

  RunnerInterface* const runner_;
  const AgentServiceOptions options_;

  mutable absl::Mutex mu_;
  absl::CondVar changed_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::deque<Pending> queue_ ABSL_GUARDED_BY(mu_);
  int64_t measured_ ABSL_GUARDED_BY(mu_) = 0;
  PinnedKeys pinned_builder_keys_ ABSL_GUARDED_BY(mu_);
  int64_t artifacts_refused_ ABSL_GUARDED_BY(mu_) = 0;
  // The lease being measured ("" between requests) and, once Abort named
  // it, why.
  std::string current_lease_ ABSL_GUARDED_BY(mu_);
  std::string current_abort_ ABSL_GUARDED_BY(mu_);

  // The job of the last measured trial. Only the measuring thread uses it.
  std::string last_job_;

  // Artifact bytes by their content hash. Filled and read by the measuring
  // thread; thread-safe on its own for the observers.
  ArtifactCache cache_;

  std::thread measuring_thread_;  // the Runner's long-lived caller
};

}  // namespace tunefleet

#endif  // TUNEFLEET_DEVICE_AGENT_AGENT_SERVICE_H_
