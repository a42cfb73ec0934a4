#include "builder_worker/build_service.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "common/logging.h"
#include "common/sha256.h"
#include "nlohmann/json.hpp"
#include "proto_convert/task_spec.h"
#include "toolchain/codegen/target.h"
#include "tuner_core/templates/task.h"

namespace tunefleet {
namespace {

int Code(MeasureErrorNo error_no) { return static_cast<int>(error_no); }

// Key order and whitespace must not split the cache: JSON is re-dumped
// (nlohmann objects are sorted maps). Text that does not parse is keyed as is.
std::string CanonicalJson(const std::string& text) {
  const nlohmann::json parsed = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  return parsed.is_discarded() ? text : parsed.dump();
}

// Length-prefixed, so that no two field lists hash the same bytes.
void AddField(Sha256& sha, const std::string& field) {
  sha.Update(absl::StrCat(field.size(), ":"));
  sha.Update(field);
}

}  // namespace

absl::Status BuildServiceOptions::Validate() const {
  if (clock == nullptr) return absl::InvalidArgumentError("clock must not be null");
  if (parallelism < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("parallelism must be >= 0 (0 = all cores), got ", parallelism));
  }
  if (cache_capacity_bytes < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("cache capacity must be >= 0 bytes, got ", cache_capacity_bytes));
  }
  if (build.opt_level < 0 || build.opt_level > 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("opt_level must be in [0, 3], got ", build.opt_level));
  }
  return absl::OkStatus();
}

BuildService::BuildService(BuildServiceOptions options)
    : options_(std::move(options)),
      parallelism_(options_.parallelism > 0
                       ? options_.parallelism
                       : std::max(1, static_cast<int>(std::thread::hardware_concurrency()))),
      cache_(options_.cache_capacity_bytes) {
  workers_.reserve(parallelism_);
  for (int i = 0; i < parallelism_; ++i) workers_.emplace_back([this] { WorkerLoop(); });
  watchdog_ = std::thread([this] { WatchdogLoop(); });
}

BuildService::~BuildService() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    queue_.clear();
    work_ready_.SignalAll();
    deadlines_changed_.SignalAll();
  }
  for (std::thread& worker : workers_) worker.join();
  watchdog_.join();
}

std::string BuildService::CacheKey(const proto::BuildRequest& request) const {
  const proto::TaskSpec& task = request.task();
  Sha256 sha;
  AddField(sha, options_.builder_version);
  AddField(sha, absl::StrCat("O", options_.build.opt_level));
  AddField(sha, task.template_name());
  AddField(sha, task.workload_name());
  AddField(sha, CanonicalJson(task.workload_args_json()));
  AddField(sha, task.target());
  AddField(sha, CanonicalJson(request.config_json()));
  return sha.FinishHex();
}

void BuildService::Handle(const proto::BuildRequest& request, Done done) {
  auto job = std::make_shared<Job>();
  job->request = request;
  job->done = std::move(done);
  job->cache_key = CacheKey(request);
  job->arrived = options_.clock->NowSeconds();

  proto::BuildResult cached;
  if (CacheLookup(job->cache_key, &cached)) {
    cached.set_lease_id(request.lease_id());
    Answer(*job, std::move(cached));
    return;
  }

  absl::MutexLock lock(&mu_);
  if (stopping_) return;
  if (request.timeout_s() > 0) {
    job->deadline = job->arrived + request.timeout_s();
    watched_.push_back(job);
    deadlines_changed_.Signal();
  }
  queue_.push_back(std::move(job));
  work_ready_.Signal();
}

int64_t BuildService::DropQueued() {
  absl::MutexLock lock(&mu_);
  const int64_t dropped = static_cast<int64_t>(queue_.size());
  for (const std::shared_ptr<Job>& job : queue_) {
    watched_.erase(std::remove(watched_.begin(), watched_.end(), job), watched_.end());
  }
  queue_.clear();
  return dropped;
}

bool BuildService::Answer(Job& job, proto::BuildResult result) const {
  {
    absl::MutexLock lock(&job.mu);
    if (job.answered) return false;
    job.answered = true;
  }
  // Signed here, the one place every artifact leaves through (built, cached
  // or answered by before_build), so no path ships unsigned bytes.
  if (options_.signing_key.has_value() && !result.shared_object().empty()) {
    result.set_signature(options_.signing_key->Sign(result.artifact_hash(), result.entry_name()));
    result.set_signer_key(options_.signing_key->public_key_text());
  }
  job.done(std::move(result));
  return true;
}

void BuildService::WorkerLoop() {
  while (true) {
    std::shared_ptr<Job> job;
    {
      absl::MutexLock lock(&mu_);
      while (!stopping_ && queue_.empty()) work_ready_.Wait(&mu_);
      if (stopping_) return;
      job = std::move(queue_.front());
      queue_.pop_front();
      ++busy_slots_;
    }
    bool already_answered;
    {
      absl::MutexLock lock(&job->mu);
      already_answered = job->answered;  // timed out while queued
      job->started = true;
    }
    if (!already_answered) {
      proto::BuildResult result;
      // An identical request may have been built while this one queued.
      if (!CacheLookup(job->cache_key, &result)) result = Build(job->request);
      result.set_lease_id(job->request.lease_id());
      bool timed_out;
      {
        absl::MutexLock lock(&job->mu);
        timed_out = job->answered;
      }
      if (timed_out) {
        TF_LOG(INFO) << "build lease=" << job->request.lease_id()
                     << " job=" << job->request.job_id() << " trial=" << job->request.trial_id()
                     << " finished after its timeout ("
                     << absl::StrFormat("%.2f", options_.clock->NowSeconds() - job->arrived)
                     << " s); result discarded";
      } else {
        if (result.error_no() == Code(MeasureErrorNo::kNoError) && !result.from_cache()) {
          CacheInsert(job->cache_key, result);
        }
        Answer(*job, std::move(result));
      }
    }
    absl::MutexLock lock(&mu_);
    --busy_slots_;
    watched_.erase(std::remove(watched_.begin(), watched_.end(), job), watched_.end());
  }
}

void BuildService::WatchdogLoop() {
  absl::MutexLock lock(&mu_);
  while (!stopping_) {
    const double now = options_.clock->NowSeconds();
    double earliest = std::numeric_limits<double>::infinity();
    std::vector<std::shared_ptr<Job>> expired;
    for (auto it = watched_.begin(); it != watched_.end();) {
      if ((*it)->deadline <= now) {
        expired.push_back(std::move(*it));
        it = watched_.erase(it);
      } else {
        earliest = std::min(earliest, (*it)->deadline);
        ++it;
      }
    }
    if (expired.empty()) {
      if (std::isinf(earliest)) {
        deadlines_changed_.Wait(&mu_);
      } else {
        deadlines_changed_.WaitWithTimeout(&mu_, absl::Seconds(earliest - now));
      }
      continue;
    }
    const int busy = busy_slots_;
    mu_.Unlock();
    for (const std::shared_ptr<Job>& job : expired) {
      bool started;
      {
        absl::MutexLock job_lock(&job->mu);
        started = job->started;
      }
      proto::BuildResult result;
      result.set_lease_id(job->request.lease_id());
      result.set_error_no(Code(MeasureErrorNo::kBuildTimeout));
      result.set_error_msg(absl::StrCat(
          "build did not finish within timeout_s=", job->request.timeout_s(), " s",
          started ? "" : absl::StrCat(" (still queued behind ", busy, " busy build slots)")));
      result.set_build_seconds(options_.clock->NowSeconds() - job->arrived);
      if (Answer(*job, std::move(result))) {
        TF_LOG(WARNING) << "build lease=" << job->request.lease_id()
                        << " job=" << job->request.job_id() << " trial=" << job->request.trial_id()
                        << " timed out after " << job->request.timeout_s() << " s"
                        << (started ? "; its thread stays busy until the build ends" : "");
      }
    }
    mu_.Lock();
  }
}

proto::BuildResult BuildService::Build(const proto::BuildRequest& request) const {
  const Stopwatch watch(*options_.clock);
  proto::BuildResult result;
  result.set_lease_id(request.lease_id());
  auto fail = [&](MeasureErrorNo error_no, std::string message) {
    result.set_error_no(Code(error_no));
    result.set_error_msg(std::move(message));
    result.set_build_seconds(watch.ElapsedSeconds());
    return result;
  };
  const proto::TaskSpec& spec = request.task();
  if (options_.before_build) {
    if (std::optional<proto::BuildResult> answer = options_.before_build(request)) {
      answer->set_lease_id(request.lease_id());
      answer->set_build_seconds(watch.ElapsedSeconds());
      return *std::move(answer);
    }
  }
  try {
    // The target first: a string the builder cannot compile for is
    // COMPILE_HOST; everything else wrong with the task is INSTANTIATION_ERROR.
    absl::StatusOr<TargetSpec> target = ParseTarget(spec.target());
    if (!target.ok()) {
      return fail(MeasureErrorNo::kCompileHost,
                  absl::StrCat("target \"", spec.target(), "\": ", target.status().message()));
    }
    absl::StatusOr<std::unique_ptr<Task>> task = TaskFromSpec(spec);
    if (!task.ok()) {
      return fail(MeasureErrorNo::kInstantiationError,
                  absl::StrCat("task (template \"", spec.template_name(), "\", workload \"",
                               spec.workload_name(), "\"): ", task.status().message()));
    }
    absl::StatusOr<Config> config = (*task)->space().FromJsonString(request.config_json());
    if (!config.ok()) {
      return fail(MeasureErrorNo::kInstantiationError,
                  absl::StrCat("config_json is not in the space of ", (*task)->name(), ": ",
                               config.status().message()));
    }
    BuildResult built =
        BuildCandidate((*task)->tmpl(), (*task)->workload(), *config, *target, options_.build);
    if (!built.ok()) return fail(built.error_no, std::move(built.error_msg));
    result.set_entry_name(built.artifact.entry_name);
    result.set_shared_object(std::move(built.artifact.shared_object));
    result.set_artifact_hash(built.artifact.hash);
    result.set_build_seconds(watch.ElapsedSeconds());
    return result;
  } catch (const std::exception& e) {
    return fail(MeasureErrorNo::kCompileHost, absl::StrCat("builder internal error: ", e.what()));
  } catch (...) {
    return fail(MeasureErrorNo::kCompileHost, "builder internal error: unknown exception");
  }
}

bool BuildService::CacheLookup(const std::string& key, proto::BuildResult* result) {
  std::shared_ptr<const CachedArtifact> artifact = cache_.Lookup(key);
  if (artifact == nullptr) return false;
  result->set_error_no(Code(MeasureErrorNo::kNoError));
  result->set_entry_name(artifact->entry_name);
  result->set_shared_object(artifact->bytes);
  result->set_artifact_hash(artifact->hash);
  result->set_from_cache(true);
  return true;
}

void BuildService::CacheInsert(const std::string& key, const proto::BuildResult& result) {
  cache_.Insert(
      key, CachedArtifact{result.entry_name(), result.shared_object(), result.artifact_hash()});
}

int BuildService::busy_slots() const {
  absl::MutexLock lock(&mu_);
  return busy_slots_;
}

int64_t BuildService::queued() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int64_t>(queue_.size());
}

int64_t BuildService::cache_hits() const { return cache_.hits(); }

int64_t BuildService::cache_bytes() const { return cache_.bytes(); }

int64_t BuildService::cache_entries() const { return cache_.entries(); }

}  // namespace tunefleet
