// Small helpers shared by the benchmarks: finding binaries built beside the
// running one, OpenBLAS's core type for this CPU, and running a reference
// in its own process that prints one JSON object.
#ifndef TUNEFLEET_BENCH_BENCH_UTIL_H_
#define TUNEFLEET_BENCH_BENCH_UTIL_H_

#include <string>

#include "nlohmann/json.hpp"

namespace tunefleet {
namespace bench {

// The directory of the running executable (bazel-bin/bench for the bench
// binaries, where their sibling reference binaries are built too).
std::string ExeDir();

// The OPENBLAS_CORETYPE of the widest kernel family this CPU supports
// ("SkylakeX" with AVX-512, "Haswell" with AVX2, else ""). OpenBLAS's own
// detection does not know every CPU model (it may fall back to an older
// family), so references are run both as shipped and with this set.
std::string OpenBlasCoreTypeForThisCpu();

// Runs `command` through the shell and parses its stdout as one JSON value;
// {"error": <what it printed>} when that fails.
nlohmann::json RunJsonCommand(const std::string& command);

}  // namespace bench
}  // namespace tunefleet

#endif  // TUNEFLEET_BENCH_BENCH_UTIL_H_
