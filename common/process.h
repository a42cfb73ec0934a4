// Child processes for the commands and tests that start a fleet: `tunefleet
// up`, the integration tests in tests/ and the fleet benchmark.
//
//   TF_ASSIGN_OR_RETURN(std::string tracker_bin, FindFleetBinary("tracker", "tunefleet_tracker"));
//   TF_ASSIGN_OR_RETURN(Process tracker, Process::Spawn({tracker_bin, "--listen=127.0.0.1:0"},
//   "tracker.log"));
//   ...
//   tracker.Kill(SIGKILL);
//
// Spawn uses posix_spawn (cheap from a large parent), puts stdout and
// stderr in `log_path` (appended), and the child in its own process group.
// A Process kills (SIGTERM, then SIGKILL after a grace period) and reaps its
// child when destroyed, so a failing test leaves no processes behind; and
// the child gets TUNEFLEET_PARENT_PID, so the fleet's daemons stop by
// themselves if this process is killed (common/daemon_util.h).
#ifndef TUNEFLEET_COMMON_PROCESS_H_
#define TUNEFLEET_COMMON_PROCESS_H_

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace tunefleet {

class Process {
 public:
  // `argv[0]` is the path of the binary. Empty log_path: inherit stdout and
  // stderr. `env` entries ("NAME=value") are added to this process's
  // environment.
  [[nodiscard]] static absl::StatusOr<Process> Spawn(const std::vector<std::string>& argv,
                                                     const std::string& log_path,
                                                     const std::vector<std::string>& env = {});

  Process() = default;
  Process(Process&& other) noexcept;
  Process& operator=(Process&& other) noexcept;
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;
  ~Process();  // Stop(2.0)

  pid_t pid() const { return pid_; }
  bool running();
  // Sends `signal` (the process, not its group).
  void Kill(int signal);
  // SIGTERM, wait up to grace_s, then SIGKILL; reaps. Returns the wait status.
  int Stop(double grace_s = 2.0);
  // Waits up to timeout_s for the child to exit; its wait status, or nullopt.
  std::optional<int> Wait(double timeout_s);

 private:
  pid_t pid_ = -1;
  std::optional<int> exit_status_;
};

// Path of the fleet binary `name` of package `package` ("tracker",
// "tunefleet_tracker"): beside this executable, else in $TUNEFLEET_BIN_DIR,
// else in this executable's Bazel runfiles (<exe>.runfiles/tunefleet/<package>/,
// $RUNFILES_DIR, $TEST_SRCDIR). NotFound naming every place tried.
[[nodiscard]] absl::StatusOr<std::string> FindFleetBinary(const std::string& package,
                                                          const std::string& name);

// The first executable file called `name` in the directories of $PATH
// ("/usr/bin:/bin" when it is unset or empty). NotFound naming the PATH
// searched otherwise.
[[nodiscard]] absl::StatusOr<std::string> FindOnPath(const std::string& name);

// Waits until `path` holds a decimal port number (a daemon's --port_file);
// DeadlineExceeded after timeout_s, or FailedPrecondition if `owner` exits
// first (when given).
[[nodiscard]] absl::StatusOr<int> WaitForPortFile(const std::string& path, double timeout_s,
                                                  Process* owner = nullptr);

}  // namespace tunefleet

#endif  // TUNEFLEET_COMMON_PROCESS_H_
