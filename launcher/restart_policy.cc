#include "launcher/restart_policy.h"

#include <string.h>
#include <sys/wait.h>

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"

namespace tunefleet {

std::optional<double> RestartPolicy::Died(double now_s) {
  // A long run means the last crash had nothing to do with this one.
  if (started_at_s_.has_value() && now_s - *started_at_s_ >= options_.stable_after_s) {
    restarts_ = 0;
  }
  started_at_s_.reset();
  if (restarts_ >= options_.max_restarts) return std::nullopt;
  const double backoff_s =
      std::min(options_.initial_backoff_s * std::pow(2.0, restarts_), options_.max_backoff_s);
  ++restarts_;
  return now_s + backoff_s;
}

std::string DescribeExit(int wait_status) {
  if (WIFEXITED(wait_status)) return absl::StrCat("exited with code ", WEXITSTATUS(wait_status));
  if (WIFSIGNALED(wait_status)) {
    const int signal = WTERMSIG(wait_status);
    const char* name = sigabbrev_np(signal);
    return absl::StrCat(
        "killed by ", name != nullptr ? absl::StrCat("SIG", name) : absl::StrCat("signal ", signal),
        WCOREDUMP(wait_status) ? " (core dumped)" : "");
  }
  return absl::StrCat("ended with wait status ", wait_status);
}

}  // namespace tunefleet
