// Small pieces every worker daemon's main needs: the token file, a default
// worker name, and waiting for SIGINT/SIGTERM.
//
//   BlockTerminationSignals();          // first thing in main, before threads
//   TF_ASSIGN_OR_RETURN(std::string token, ReadTokenFile(path));
//   ... start ...
//   int signal = WaitForTerminationSignal();
//   ... stop ...
#ifndef TUNEFLEET_COMMON_DAEMON_UTIL_H_
#define TUNEFLEET_COMMON_DAEMON_UTIL_H_

#include <string>

#include "absl/status/statusor.h"

namespace tunefleet {

// The file's content with surrounding whitespace trimmed. An empty path is
// the empty token (no authorization). NotFound / PermissionDenied naming the
// path when it cannot be read; InvalidArgument when it holds only whitespace.
[[nodiscard]] absl::StatusOr<std::string> ReadTokenFile(const std::string& path);

// "<prefix>-<hostname>-<pid>", e.g. "builder-host1-4242".
std::string DefaultWorkerName(const std::string& prefix);

// Blocks SIGINT and SIGTERM in the calling thread; threads started afterwards
// inherit the mask, so only WaitForTerminationSignal() sees them. Also makes
// the daemon undumpable (PR_SET_DUMPABLE 0): another process of the same
// user (a runner child that escaped its sandbox, say) can neither trace it
// nor read its /proc/<pid>/mem, environ or fd entries, and it leaves no
// core with its keys in it.
void BlockTerminationSignals();
// Waits for SIGINT or SIGTERM (blocked beforehand) and returns its number.
int WaitForTerminationSignal();

}  // namespace tunefleet

#endif  // TUNEFLEET_COMMON_DAEMON_UTIL_H_
