// How `tunefleet up` restarts a child that died (launcher/fleet_launcher.h,
// FleetLauncher::Supervise): RestartPolicy, one per child, decides when to
// restart it (exponential backoff) and when to give up (too many deaths
// without a stable run in between); DescribeExit says why it died.
//
//   RestartPolicy policy(options);
//   policy.Started(clock.NowSeconds());
//   ...the child died...
//   std::optional<double> restart_at = policy.Died(clock.NowSeconds());
//   if (!restart_at) ...give up: "agent-0 " + DescribeExit(status)...
//
// Pure logic on times passed in: tests drive it without processes or clocks.
#ifndef TUNEFLEET_LAUNCHER_RESTART_POLICY_H_
#define TUNEFLEET_LAUNCHER_RESTART_POLICY_H_

#include <optional>
#include <string>

namespace tunefleet {

struct RestartOptions {
  // The first restart waits this long; each further one twice as long as
  // the previous, up to max_backoff_s.
  double initial_backoff_s = 0.5;
  double max_backoff_s = 30;
  // Restarts allowed in one unstable streak; the next death gives up.
  int max_restarts = 5;
  // A child that ran this long before dying starts a new streak.
  double stable_after_s = 60;
};

class RestartPolicy {
 public:
  explicit RestartPolicy(RestartOptions options = {}) : options_(options) {}

  // The child (re)started at `now_s` (seconds on a monotonic clock).
  void Started(double now_s) { started_at_s_ = now_s; }
  // The child died at `now_s`: when to restart it, or nullopt once it has
  // been restarted max_restarts times without running stable_after_s.
  std::optional<double> Died(double now_s);
  // Restarts in the current streak.
  int restarts() const { return restarts_; }

 private:
  RestartOptions options_;
  std::optional<double> started_at_s_;
  int restarts_ = 0;
};

// A waitpid status in words: "exited with code 3", "killed by SIGKILL",
// "killed by SIGSEGV (core dumped)".
std::string DescribeExit(int wait_status);

}  // namespace tunefleet

#endif  // TUNEFLEET_LAUNCHER_RESTART_POLICY_H_
