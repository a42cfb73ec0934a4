// BuildInfo: what a running binary says about how it was built, for the
// tunefleet_build_info gauge every daemon serves (value 1, the facts in its
// labels). There is no release tagging or VCS stamping in this build (Bazel
// runs offline without a workspace status command), so the labels are the
// project's version constant, the compiler and the optimization level, all
// known at compile time.
//
//   BuildInfo info = CurrentBuildInfo();  // {"0.1", "gcc 12.2.0", "optimized"}
#ifndef TUNEFLEET_METRICS_BUILD_INFO_H_
#define TUNEFLEET_METRICS_BUILD_INFO_H_

#include <string>

namespace tunefleet {

// The project's version; the tuner registers as "tunefleet-<version>".
inline constexpr char kTunefleetVersion[] = "0.1";

struct BuildInfo {
  std::string version;     // kTunefleetVersion
  std::string compiler;    // "gcc 12.2.0", "clang 19.1.7"
  std::string build_type;  // "optimized" (-c opt) or "unoptimized" (fastbuild, dbg)
};

// The facts of this binary (of the metrics library's compilation, which
// Bazel compiles with the same flags as the daemon that links it).
BuildInfo CurrentBuildInfo();

}  // namespace tunefleet

#endif  // TUNEFLEET_METRICS_BUILD_INFO_H_
