#include "device_agent/agent_service.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "common/logging.h"
#include "common/sha256.h"
#include "common/text_cap.h"
#include "nlohmann/json.hpp"
#include "proto_convert/measure_result.h"
#include "tuner_core/measure/measure.h"
#include "tuner_core/workloads/workload.h"

namespace tunefleet {
namespace {

int Code(MeasureErrorNo error_no) { return static_cast<int>(error_no); }

// The FLOPs of the request's workload, or 0 (no FLOP bound) when it cannot
// be made; the runner has then already answered the request as bad.
double WorkloadFlops(const proto::RunRequest& run) {
  const nlohmann::json args = nlohmann::json::parse(run.workload_args_json(), /*cb=*/nullptr,
                                                    /*allow_exceptions=*/false);
  if (args.is_discarded()) return 0;
  absl::StatusOr<std::unique_ptr<Workload>> workload = MakeWorkload(run.workload_name(), args);
  return workload.ok() ? (*workload)->flops() : 0;
}

}  // namespace

absl::Status AgentServiceOptions::Validate() const {
  if (artifact_cache_capacity_bytes < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "artifact cache capacity must be >= 0 bytes, got ", artifact_cache_capacity_bytes));
  }
  if (!std::isfinite(max_gflops) || max_gflops < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_gflops must be finite and >= 0 (0 = no FLOP bound), got ", max_gflops));
  }
  return absl::OkStatus();
}

AgentService::AgentService(RunnerInterface* runner, AgentServiceOptions options)
    : runner_(runner),
      options_(std::move(options)),
      cache_(options_.artifact_cache_capacity_bytes) {
  measuring_thread_ = std::thread([this] { MeasureLoop(); });
}

AgentService::~AgentService() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    queue_.clear();
    changed_.SignalAll();
  }
  measuring_thread_.join();
}

void AgentService::Handle(const proto::MeasureRequest& request, Done done) {
  absl::MutexLock lock(&mu_);
  if (stopping_) return;
  queue_.push_back(Pending{request, std::move(done)});
  changed_.SignalAll();
}

int64_t AgentService::DropQueued() {
  absl::MutexLock lock(&mu_);
  // Measurements only: a dropped calibration was never a lease.
  const int64_t dropped = std::count_if(queue_.begin(), queue_.end(),
                                        [](const Pending& p) { return !p.calibration_done; });
  queue_.clear();
  return dropped;
}

void AgentService::Calibrate(CalibrationDone done) {
  absl::MutexLock lock(&mu_);
  if (stopping_) return;
  Pending pending;
  pending.calibration_done = std::move(done);
  queue_.push_back(std::move(pending));
  changed_.SignalAll();
}

void AgentService::Abort(const std::string& lease_id, const std::string& reason) {
  if (lease_id.empty()) return;  // calibrations have no lease
  std::optional<Pending> dropped;
  {
    absl::MutexLock lock(&mu_);
    if (lease_id == current_lease_ && !lease_id.empty()) {
      current_abort_ = reason;
      runner_->Abort(reason);
      return;
    }
    for (auto it = queue_.begin(); it != queue_.end(); ++it) {
      if (it->request.lease_id() != lease_id) continue;
      dropped = std::move(*it);
      queue_.erase(it);
      break;
    }
  }
  if (!dropped.has_value()) return;
  proto::MeasureResult result;
  result.set_lease_id(lease_id);
  result.mutable_run()->set_error_no(Code(MeasureErrorNo::kUnknown));
  result.mutable_run()->set_error_msg(absl::StrCat("aborted before it ran: ", reason));
  dropped->done(std::move(result));
}

void AgentService::MeasureLoop() {
  while (true) {
    Pending pending;
    {
      absl::MutexLock lock(&mu_);
      while (!stopping_ && queue_.empty()) changed_.Wait(&mu_);
      if (stopping_) return;
      pending = std::move(queue_.front());
      queue_.pop_front();
      current_lease_ = pending.request.lease_id();
      current_abort_.clear();
    }
    if (pending.calibration_done) {
      pending.calibration_done(RunCalibrationNow());
      continue;
    }
    proto::MeasureResult result = Measure(pending.request);
    result.set_lease_id(pending.request.lease_id());
    pending.done(std::move(result));
    absl::MutexLock lock(&mu_);
    current_lease_.clear();
    ++measured_;
  }
}

proto::Calibration AgentService::RunCalibrationNow() {
  proto::Calibration calibration;
  if (!options_.calibrate) {
    calibration.set_error("this agent has no calibration kernel");
    return calibration;
  }
  absl::StatusOr<CalibrationFigures> figures = options_.calibrate();
  if (!figures.ok()) {
    calibration.set_error(std::string(figures.status().message()));
    return calibration;
  }
  calibration.set_gflops(figures->gflops);
  calibration.set_noise(figures->noise);
  calibration.set_repeats(figures->repeats);
  return calibration;
}

proto::MeasureResult AgentService::Measure(proto::MeasureRequest& request) {
  const Stopwatch watch;
  proto::MeasureResult result;
  proto::RunRequest* run = request.mutable_run();
  auto fail = [&](MeasureErrorNo error_no, std::string message) {
    result.mutable_run()->set_error_no(Code(error_no));
    result.mutable_run()->set_error_msg(std::move(message));
    result.set_measure_seconds(watch.ElapsedSeconds());
    return result;
  };
  if (run->artifact_hash().empty()) {
    return fail(MeasureErrorNo::kUnknown, "measure request has no artifact_hash");
  }
  if (!run->shared_object().empty()) {
    absl::Status trusted = absl::OkStatus();
    {
      absl::MutexLock lock(&mu_);
      if (!pinned_builder_keys_.empty()) {
        trusted = pinned_builder_keys_.Verify(run->shared_object(), run->artifact_hash(),
                                              run->entry_name(), request.artifact_signature(),
                                              request.artifact_signer());
      } else if (options_.require_signed_artifacts) {
        trusted = absl::PermissionDeniedError(
            "artifact refused: this agent requires signed artifacts "
            "(--require_signed_artifacts) and the tracker pins no builder keys");
      }
      if (!trusted.ok()) ++artifacts_refused_;
    }
    if (!trusted.ok()) {
      TF_LOG(WARNING) << "lease " << request.lease_id() << ": " << trusted.message();
      return fail(MeasureErrorNo::kUnknown, std::string(trusted.message()));
    }
    const std::string actual = Sha256Hex(run->shared_object());
    if (actual != run->artifact_hash()) {
      return fail(MeasureErrorNo::kUnknown,
                  absl::StrCat("artifact hash mismatch: request says ", run->artifact_hash(),
                               ", its ", run->shared_object().size(), " bytes hash to ", actual));
    }
    cache_.Insert(run->artifact_hash(),
                  CachedArtifact{run->entry_name(), run->shared_object(), actual});
  } else if (std::shared_ptr<const CachedArtifact> cached = cache_.Lookup(run->artifact_hash())) {
    run->set_shared_object(cached->bytes);
  } else {
    result.set_need_artifact(true);
    return fail(MeasureErrorNo::kUnknown,
                absl::StrCat("artifact ", run->artifact_hash(), " is not in this agent's cache"));
  }
  if (runner_ == nullptr) return fail(MeasureErrorNo::kUnknown, "agent has no runner");
  {
    absl::MutexLock lock(&mu_);
    if (!current_abort_.empty()) {
      return fail(MeasureErrorNo::kUnknown, absl::StrCat("aborted: ", current_abort_));
    }
  }
  // No runner child outlives its job: a kernel that left a thread behind or
  // patched the child's code cannot reach another job's trials (another
  // user's among them). Within a job the child stays, and with it the
  // prepared workloads that keep a trial cheap.
  const bool new_job = !last_job_.empty() && request.job_id() != last_job_;
  last_job_ = request.job_id();
  if (request.fresh_runner() || new_job) runner_->Recycle();
  *result.mutable_run() =
      RejectInvalidCosts(runner_->Run(*run), WorkloadFlops(*run), options_.max_gflops);
  // The child's words are the kernel's to choose: forwarded at a bounded size.
  if (result.run().error_msg().size() > kMaxReportedMessageBytes) {
    result.mutable_run()->set_error_msg(CapMessage(result.run().error_msg()));
  }
  result.set_measure_seconds(watch.ElapsedSeconds());
  return result;
}

void AgentService::SetPinnedBuilderKeys(PinnedKeys keys) {
  absl::MutexLock lock(&mu_);
  pinned_builder_keys_ = std::move(keys);
}

int64_t AgentService::artifacts_refused() const {
  absl::MutexLock lock(&mu_);
  return artifacts_refused_;
}

int64_t AgentService::queued() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int64_t>(queue_.size());
}

int64_t AgentService::measured() const {
  absl::MutexLock lock(&mu_);
  return measured_;
}

int64_t AgentService::cache_entries() const { return cache_.entries(); }

int64_t AgentService::cache_bytes() const { return cache_.bytes(); }

bool AgentService::HasArtifact(const std::string& hash) const { return cache_.Contains(hash); }

}  // namespace tunefleet
