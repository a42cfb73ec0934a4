#include "metrics/build_info.h"

namespace tunefleet {

BuildInfo CurrentBuildInfo() {
  BuildInfo info;
  info.version = kTunefleetVersion;
#if defined(__clang__)
  info.compiler = "clang " __clang_version__;
#elif defined(__GNUC__)
  info.compiler = "gcc " __VERSION__;
#else
  info.compiler = "unknown";
#endif
  // Bazel's -c opt passes -O2 (which defines __OPTIMIZE__); fastbuild and dbg
  // do not, and cannot be told apart from inside the code.
#if defined(__OPTIMIZE__)
  info.build_type = "optimized";
#else
  info.build_type = "unoptimized";
#endif
  // __clang_version__ ends in a space on some releases.
  while (!info.compiler.empty() && info.compiler.back() == ' ') info.compiler.pop_back();
  return info;
}

}  // namespace tunefleet
