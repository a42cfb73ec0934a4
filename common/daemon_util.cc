#include "common/daemon_util.h"

#include <errno.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "common/logging.h"

namespace tunefleet {

[[nodiscard]] absl::StatusOr<std::string> ReadTokenFile(const std::string& path) {
  if (path.empty()) return std::string();
  absl::StatusOr<std::string> content = ReadFileToString(path, kMaxTokenFileBytes);
  if (!content.ok()) {
    return absl::Status(content.status().code(),
                        absl::StrCat("token file: ", content.status().message()));
  }
  std::string token(absl::StripAsciiWhitespace(*content));
  if (token.empty())
    return absl::InvalidArgumentError(absl::StrCat("token file ", path, " is empty"));
  return token;
}

std::string DefaultWorkerName(const std::string& prefix) {
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0) std::snprintf(host, sizeof(host), "unknown");
  return absl::StrCat(prefix, "-", host, "-", getpid());
}

namespace {
sigset_t TerminationSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  return signals;
}
}  // namespace

void BlockTerminationSignals() {
  const sigset_t signals = TerminationSignals();
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

int WaitForTerminationSignal() {
  const sigset_t signals = TerminationSignals();
  // Started by `tunefleet up`, a test or a bench (common/process.h): also
  // stop when that parent dies, so a killed launcher leaves no daemons.
  const char* parent_env = std::getenv("TUNEFLEET_PARENT_PID");
  const pid_t parent = parent_env != nullptr ? static_cast<pid_t>(std::atol(parent_env)) : 0;
  while (true) {
    if (parent > 0) {
      struct timespec half_second = {0, 500000000};
      int signal = sigtimedwait(&signals, nullptr, &half_second);
      if (signal > 0) return signal;
      if (getppid() != parent) {
        TF_LOG(WARNING) << "parent process " << parent << " is gone: stopping";
        return SIGTERM;
      }
    } else {
      int signal = 0;
      if (sigwait(&signals, &signal) == 0) return signal;
    }
  }
}

}  // namespace tunefleet
