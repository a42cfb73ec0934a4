// Small helpers shared by the benchmarks: finding binaries built beside the
// running one, OpenBLAS's core type for this CPU, the vector ISA a benchmark
// measures (--isa), and running a reference in its own process that prints
// one JSON object.
#ifndef TUNEFLEET_BENCH_BENCH_UTIL_H_
#define TUNEFLEET_BENCH_BENCH_UTIL_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
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

// The vector ISA a benchmark measures, everything in the run alike.
//   "" (host): the widest the CPU has; ours built for the host CPU.
//   "avx2": the AVX2 path on a machine that also has AVX-512 (where both
//     run, so the AVX2 templates are measured without an AVX2-only host):
//     ours built for the host CPU with -mattr=-avx512f (16 ymm registers,
//     8 lanes), OpenBLAS's Haswell kernels, oneDNN limited to AVX2
//     (ONEDNN_MAX_CPU_ISA=AVX2) and the ymm FMA peak. On Zen 4 ymm and zmm
//     FMAs have the same throughput; on Intel cores with two 512-bit FMA
//     units the AVX2 peak is half the AVX-512 one.
struct IsaChoice {
  std::string name;               // "host" or "avx2"
  std::string target_attrs;       // appended to the host target ("" or " -mattr=-avx512f")
  std::string openblas_coretype;  // forced in every OpenBLAS run; "" = detect per run
  std::string peak_isa;           // cpu_fma_peak's isa argument ("" or "avx2")
};
// Parses --isa. For "avx2" also sets ONEDNN_MAX_CPU_ISA=AVX2 in this
// process's environment, which oneDNN inside it (read at its first use)
// and every reference process it starts then obey; call it before either.
// InvalidArgument for anything but "" and "avx2".
[[nodiscard]] absl::StatusOr<IsaChoice> ChooseIsa(const std::string& flag);

// Runs `command` through the shell and parses its stdout as one JSON value;
// {"error": <what it printed>} when that fails.
nlohmann::json RunJsonCommand(const std::string& command);

}  // namespace bench
}  // namespace tunefleet

#endif  // TUNEFLEET_BENCH_BENCH_UTIL_H_
