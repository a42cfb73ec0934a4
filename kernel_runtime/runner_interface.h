// RunnerInterface: "measure this artifact", the one call the tuning loop and
// the agent service need from a runner. Its own target so that users (and
// FakeRunner, fake_runner.h) do not link the process-spawning Runner
// (runner.h).
#ifndef TUNEFLEET_KERNEL_RUNTIME_RUNNER_INTERFACE_H_
#define TUNEFLEET_KERNEL_RUNTIME_RUNNER_INTERFACE_H_

#include <string>

#include "proto/runner.pb.h"

namespace tunefleet {

// Measures one artifact per call. Implementations never throw and never
// fail as a call: every outcome is in the RunResult (error_no is a
// MeasureErrorNo value from tuner_core/measure/measure.h; on success, costs
// holds one mean seconds-per-run per repeat).
class RunnerInterface {
 public:
  virtual ~RunnerInterface() = default;
  virtual proto::RunResult Run(const proto::RunRequest& request) = 0;
  // Ends the runner's current child process, if it keeps one, so that the
  // next Run starts a fresh one (validation measurements: nothing a
  // long-lived child accumulated flatters or hurts a candidate). A no-op
  // for runners without a child.
  virtual void Recycle() {}
  // From any thread: stops the Run in progress, if any (kills its child);
  // that Run returns an error result whose message starts "aborted: " and
  // names `reason`. A no-op for runners that cannot stop a run.
  virtual void Abort(const std::string& reason) {}
};

}  // namespace tunefleet

#endif  // TUNEFLEET_KERNEL_RUNTIME_RUNNER_INTERFACE_H_
