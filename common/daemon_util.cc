#include "common/daemon_util.h"

#include <errno.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace tunefleet {

absl::StatusOr<std::string> ReadTokenFile(const std::string& path) {
  if (path.empty()) return std::string();
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    const int error = errno;
    const std::string message =
        absl::StrCat("cannot read token file ", path, ": ", std::strerror(error));
    return error == EACCES ? absl::PermissionDeniedError(message) : absl::NotFoundError(message);
  }
  std::ostringstream content;
  content << file.rdbuf();
  std::string token(absl::StripAsciiWhitespace(content.str()));
  if (token.empty()) return absl::InvalidArgumentError(absl::StrCat("token file ", path, " is empty"));
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
}

int WaitForTerminationSignal() {
  const sigset_t signals = TerminationSignals();
  int signal = 0;
  while (sigwait(&signals, &signal) != 0) {
  }
  return signal;
}

}  // namespace tunefleet
