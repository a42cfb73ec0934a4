// FakeRunner: a RunnerInterface for tests of code that drives measurements
// (the tuning loop, the agent service) without spawning processes or
// loading kernels. It records every request and answers with whatever the
// test decides.
//
//   FakeRunner runner([](const proto::RunRequest& request) {
//     proto::RunResult result;
//     result.add_costs(request.artifact_hash() == "fast" ? 1e-4 : 1e-3);
//     return result;
//   });
#ifndef TUNEFLEET_KERNEL_RUNTIME_FAKE_RUNNER_H_
#define TUNEFLEET_KERNEL_RUNTIME_FAKE_RUNNER_H_

#include <functional>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "kernel_runtime/runner_interface.h"

namespace tunefleet {

class FakeRunner final : public RunnerInterface {
 public:
  using Responder = std::function<proto::RunResult(const proto::RunRequest&)>;

  // Without a responder every run succeeds with one cost of 1 ms per repeat.
  explicit FakeRunner(Responder respond = nullptr) : respond_(std::move(respond)) {}

  proto::RunResult Run(const proto::RunRequest& request) override;
  // Counts the call (there is no child to end).
  void Recycle() override;

  // Every request so far, in call order.
  std::vector<proto::RunRequest> requests() const;
  // Recycle calls so far.
  int recycles() const;

 private:
  const Responder respond_;
  mutable absl::Mutex mu_;
  std::vector<proto::RunRequest> requests_ ABSL_GUARDED_BY(mu_);
  int recycles_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace tunefleet

#endif  // TUNEFLEET_KERNEL_RUNTIME_FAKE_RUNNER_H_
