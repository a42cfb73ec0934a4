#include "device_agent/agent_service.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/logging.h"
#include "common/sha256.h"
#include "tuner_core/measure/measure.h"

namespace tunefleet {
namespace {

int Code(MeasureErrorNo error_no) { return static_cast<int>(error_no); }

}  // namespace

absl::Status AgentServiceOptions::Validate() const {
  if (artifact_cache_capacity_bytes < 0) {
    return absl::InvalidArgumentError(absl::StrCat("artifact cache capacity must be >= 0 bytes, got ",
                                                   artifact_cache_capacity_bytes));
  }
  if (!(simulated_measure_s >= 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("simulated_measure_s must be >= 0, got ", simulated_measure_s));
  }
  return absl::OkStatus();
}

AgentService::AgentService(RunnerInterface* runner, AgentServiceOptions options)
    : runner_(runner), options_(std::move(options)) {
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
  const int64_t dropped = static_cast<int64_t>(queue_.size());
  queue_.clear();
  return dropped;
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
    }
    proto::MeasureResult result = options_.simulated_measure_s > 0
                                      ? Simulate(pending.request)
                                      : Measure(pending.request);
    result.set_lease_id(pending.request.lease_id());
    pending.done(std::move(result));
    absl::MutexLock lock(&mu_);
    ++measured_;
  }
}

proto::MeasureResult AgentService::Simulate(const proto::MeasureRequest& request) {
  const absl::Time start = absl::Now();
  {
    // Interruptible by the destructor, so a long simulated measurement does
    // not hold up shutdown.
    absl::MutexLock lock(&mu_);
    const absl::Time until = start + absl::Seconds(options_.simulated_measure_s);
    while (!stopping_ && !changed_.WaitWithDeadline(&mu_, until)) {
    }
  }
  proto::MeasureResult result;
  proto::RunResult* run = result.mutable_run();
  run->set_error_no(Code(MeasureErrorNo::kNoError));
  const int repeat = std::max(1, request.run().options().repeat());
  for (int i = 0; i < repeat; ++i) run->add_costs(options_.simulated_measure_s);
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  run->set_run_seconds(seconds);
  result.set_measure_seconds(seconds);
  return result;
}

proto::MeasureResult AgentService::Measure(proto::MeasureRequest& request) {
  const absl::Time start = absl::Now();
  proto::MeasureResult result;
  proto::RunRequest* run = request.mutable_run();
  auto fail = [&](MeasureErrorNo error_no, std::string message) {
    result.mutable_run()->set_error_no(Code(error_no));
    result.mutable_run()->set_error_msg(std::move(message));
    result.set_measure_seconds(absl::ToDoubleSeconds(absl::Now() - start));
    return result;
  };
  if (run->artifact_hash().empty()) {
    return fail(MeasureErrorNo::kUnknown, "measure request has no artifact_hash");
  }
  if (!run->shared_object().empty()) {
    const std::string actual = Sha256Hex(run->shared_object());
    if (actual != run->artifact_hash()) {
      return fail(MeasureErrorNo::kUnknown,
                  absl::StrCat("artifact hash mismatch: request says ", run->artifact_hash(),
                               ", its ", run->shared_object().size(), " bytes hash to ", actual));
    }
    CacheInsert(run->artifact_hash(), run->shared_object());
  } else if (!CacheLookup(run->artifact_hash(), run->mutable_shared_object())) {
    result.set_need_artifact(true);
    return fail(MeasureErrorNo::kUnknown,
                absl::StrCat("artifact ", run->artifact_hash(), " is not in this agent's cache"));
  }
  if (runner_ == nullptr) return fail(MeasureErrorNo::kUnknown, "agent has no runner");
  *result.mutable_run() = runner_->Run(*run);
  result.set_measure_seconds(absl::ToDoubleSeconds(absl::Now() - start));
  return result;
}

bool AgentService::CacheLookup(const std::string& hash, std::string* bytes) {
  absl::MutexLock lock(&cache_mu_);
  auto it = index_.find(hash);
  if (it == index_.end()) return false;
  lru_.splice(lru_.begin(), lru_, it->second);
  *bytes = it->second->second;
  return true;
}

void AgentService::CacheInsert(const std::string& hash, const std::string& bytes) {
  const int64_t size = static_cast<int64_t>(bytes.size());
  if (size > options_.artifact_cache_capacity_bytes) return;
  absl::MutexLock lock(&cache_mu_);
  if (auto it = index_.find(hash); it != index_.end()) {
    lru_.splice(lru_.begin(), lru_, it->second);
    return;
  }
  lru_.emplace_front(hash, bytes);
  index_[hash] = lru_.begin();
  cache_bytes_ += size;
  while (cache_bytes_ > options_.artifact_cache_capacity_bytes) {
    cache_bytes_ -= static_cast<int64_t>(lru_.back().second.size());
    index_.erase(lru_.back().first);
    lru_.pop_back();
  }
}

int64_t AgentService::queued() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int64_t>(queue_.size());
}

int64_t AgentService::measured() const {
  absl::MutexLock lock(&mu_);
  return measured_;
}

int64_t AgentService::cache_entries() const {
  absl::MutexLock lock(&cache_mu_);
  return static_cast<int64_t>(lru_.size());
}

int64_t AgentService::cache_bytes() const {
  absl::MutexLock lock(&cache_mu_);
  return cache_bytes_;
}

bool AgentService::HasArtifact(const std::string& hash) const {
  absl::MutexLock lock(&cache_mu_);
  return index_.contains(hash);
}

}  // namespace tunefleet
