// BuildService: what a builder daemon does with the BuildRequests the tracker
// sends it. Decodes the task and config, builds the candidate (builder.h) on
// a fixed pool of threads, answers every request exactly once with a
// proto::BuildResult, and keeps recently built artifacts in an LRU cache so
// a repeated (task, config, target) is answered with no build.
//
//   BuildService service(BuildServiceOptions{.parallelism = 2});
//   service.Handle(request, [&](proto::BuildResult result) {
//     ... send it; called on a pool thread, the watchdog thread, or (for a
//     cache hit) the caller's thread ...
//   });
//
// Errors come back as AutoTVM codes in the result, never as a crash:
//   INSTANTIATION_ERROR  workload_args_json or config_json is not JSON, the
//                        workload or template is unknown or its arguments are
//                        bad, the config is not in the task's space (the
//                        message names the knob), or the template/target
//                        rejects the config;
//   COMPILE_HOST         the target string does not parse, or LLVM/the
//                        linker failed;
//   BUILD_TIMEOUT        no result within request.timeout_s of its arrival
//                        (<= 0: no limit).
//
// Timeouts: an in-process LLVM build cannot be interrupted. When one overruns,
// a watchdog answers BUILD_TIMEOUT at the deadline; the build thread runs on,
// its result is discarded when it finishes, and its slot stays busy until
// then, so later requests queue behind it (busy_slots() counts it). A request
// whose deadline passes while it is still queued is answered by the watchdog
// and never built.
//
// Cache (common/artifact_cache.h) key: SHA-256 of the task fields (workload
// args and config in canonical JSON), the target string, the optimisation
// level and builder_version. Value: entry name, .so bytes and their hash.
// Capacity in bytes of .so; least recently used entries go first.
//
// Thread-safe. The destructor drops queued requests unanswered (the tracker
// requeues them when the stream breaks) and waits for builds in progress.
#ifndef TUNEFLEET_BUILDER_WORKER_BUILD_SERVICE_H_
#define TUNEFLEET_BUILDER_WORKER_BUILD_SERVICE_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/artifact_cache.h"
#include "common/clock.h"
#include "common/signing.h"
#include "proto/fleet.pb.h"
#include "toolchain/builder.h"

namespace tunefleet {

// Part of every cache key: bump it when a change to the builder changes the
// code it emits for the same input.
inline constexpr char kBuilderVersion[] = "tunefleet-builder/1 llvm-19";

struct BuildServiceOptions {
  int parallelism = 0;  // build threads; 0 = the machine's hardware concurrency
  int64_t cache_capacity_bytes = int64_t{256} << 20;  // 0 = no cache
  BuildOptions build;
  std::string builder_version = kBuilderVersion;
  // Runs before every build, on the build thread. When it returns a result,
  // that is the answer and nothing is compiled (the lease id and build time
  // are filled in). Empty in production; tests/test_builder_main.cc uses it
  // to slow builds down or to answer placeholders for fake agents.
  std::function<std::optional<proto::BuildResult>(const proto::BuildRequest&)> before_build;
  // Build times and timeout deadlines; not owned. The watchdog sleeps on a
  // condition variable in real time, so a FakeClock only moves the figures.
  ClockInterface* clock = &SystemClock();
  // Signs every artifact (common/signing.h); unset: artifacts go unsigned,
  // and a tracker that pins builder keys refuses this builder.
  std::optional<SigningKey> signing_key;

  [[nodiscard]] absl::Status Validate() const;
};

class BuildService {
 public:
  using Done = std::function<void(proto::BuildResult)>;

  // `options` must be valid (Validate()); parallelism 0 is resolved here.
  explicit BuildService(BuildServiceOptions options);
  ~BuildService();

  BuildService(const BuildService&) = delete;
  BuildService& operator=(const BuildService&) = delete;

  // Answers `request` exactly once through `done` (lease_id copied).
  void Handle(const proto::BuildRequest& request, Done done);

  // Forgets queued requests without answering them (their session broke and
  // the tracker requeued them); builds in progress still answer. Returns how
  // many were dropped.
  int64_t DropQueued();

  int parallelism() const { return parallelism_; }
  // Threads running a build (a timed-out one too, until it really ends).
  int busy_slots() const;
  int64_t queued() const;
  int64_t cache_hits() const;
  int64_t cache_bytes() const;
  int64_t cache_entries() const;

  // The cache key of a request (hex SHA-256); exposed for tests.
  std::string CacheKey(const proto::BuildRequest& request) const;

 private:
  // One request in flight. `answered` makes the pool thread and the
  // watchdog race safely: whoever sets it first answers.
  struct Job {
    proto::BuildRequest request;
    Done done;
    std::string cache_key;
    double arrived = 0;  // options_.clock's monotonic seconds
    double deadline = std::numeric_limits<double>::infinity();
    absl::Mutex mu;
    bool answered ABSL_GUARDED_BY(mu) = false;
    bool started ABSL_GUARDED_BY(mu) = false;  // a build thread took it
  };

  void WorkerLoop();
  void WatchdogLoop();
  // Runs the whole pipeline for one request; never throws.
  proto::BuildResult Build(const proto::BuildRequest& request) const;
  // Calls job->done with `result` unless someone already answered; true
  // when this call answered.
  bool Answer(Job& job, proto::BuildResult result) const;

  bool CacheLookup(const std::string& key, proto::BuildResult* result);
  void CacheInsert(const std::string& key, const proto::BuildResult& result);

  const BuildServiceOptions options_;
  const int parallelism_;

  mutable absl::Mutex mu_;
  absl::CondVar work_ready_;
  absl::CondVar deadlines_changed_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::deque<std::shared_ptr<Job>> queue_ ABSL_GUARDED_BY(mu_);
  // Jobs with a deadline that are not answered yet (queued or building).
  std::vector<std::shared_ptr<Job>> watched_ ABSL_GUARDED_BY(mu_);
  int busy_slots_ ABSL_GUARDED_BY(mu_) = 0;

  ArtifactCache cache_;  // thread-safe on its own

  std::vector<std::thread> workers_;
  std::thread watchdog_;
};

}  // namespace tunefleet

#endif  // TUNEFLEET_BUILDER_WORKER_BUILD_SERVICE_H_
