// The one conversion between the wire's measurement results
// (proto::TrialResult in fleet.proto, proto::RunResult in runner.proto) and
// the MeasureResult the tuners and records see (tuner_core/measure/measure.h).
// Use it wherever a result crosses that line: the tracker, the tuner process,
// the CLI, the local measurer.
//
//   MeasureResult m = ToMeasureResult(trial_update.result());
//   MeasureResult m = ToMeasureResult(runner->Run(request), now_unix_s);
//   proto::TrialResult r = ToTrialResult(agent_result.run(), now_unix_s);
//
// The same rules for both messages, since the wire may carry anything:
//   - an error code outside MeasureErrorNo becomes UNKNOWN;
//   - a success without costs is not one: UNKNOWN, "... success but no costs";
//   - a success with a cost that is not finite and > 0 is not one either:
//     RUNTIME_DEVICE naming the cost (ValidateCosts without a FLOP bound);
//   - a failure's costs are {1e9} (AutoTVM's convention in records);
//   - error_msg, all_cost, the timestamp and the spread (timed_repeats,
//     cost_stddev_s, cost_rel_ci) are kept; a failure has no spread. A RunResult has no
//     all_cost: it is the runner's prepare + load + check + run seconds (the
//     caller adds build time); its timestamp is given by the caller.
#ifndef TUNEFLEET_PROTO_CONVERT_MEASURE_RESULT_H_
#define TUNEFLEET_PROTO_CONVERT_MEASURE_RESULT_H_

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "proto/fleet.pb.h"
#include "proto/runner.pb.h"
#include "tuner_core/measure/measure.h"

namespace tunefleet {

MeasureResult ToMeasureResult(const proto::TrialResult& result);
MeasureResult ToMeasureResult(const proto::RunResult& result, double timestamp_unix_s);

// Costs, error code and message, all_cost, timestamp and spread of `result`;
// the TrialResult's other fields (build/measure seconds, builder, agent) are
// left for the caller.
proto::TrialResult ToTrialResult(const MeasureResult& result);
// ToTrialResult(ToMeasureResult(run, timestamp_unix_s)): an agent's answer as
// the fleet stores it.
proto::TrialResult ToTrialResult(const proto::RunResult& run, double timestamp_unix_s);

// ---------------------------------------------------------------- cost checks
// The rule both the agent and the tracker apply to a successful result's
// costs (seconds per run of a kernel doing `flops` floating-point
// operations): every cost is finite and > 0, and, when flops > 0 and
// max_gflops > 0, no cost implies more than max_gflops GFLOPS (flops / cost
// / 1e9): a kernel cannot run faster than its device could possibly execute
// its FLOPs; such a time comes from a broken clock or a kernel that skipped
// its work. InvalidArgument naming the first bad cost, its index and, for
// the bound, the GFLOPS it implies and the bound.
[[nodiscard]] absl::Status ValidateCosts(absl::Span<const double> costs, double flops,
                                         double max_gflops);

// The MeasureErrorNo of a result whose costs fail ValidateCosts: the device
// produced a timing that cannot be true.
inline constexpr MeasureErrorNo kInvalidCostError = MeasureErrorNo::kRuntimeDevice;

// `result`, or, when it is a success whose costs fail ValidateCosts(costs,
// flops, max_gflops), an error result: kInvalidCostError, costs {1e9}, no
// spread, error_msg "invalid measurement: <ValidateCosts' message>". Such a
// result never becomes a best.
MeasureResult RejectInvalidCosts(MeasureResult result, double flops, double max_gflops);
proto::RunResult RejectInvalidCosts(proto::RunResult result, double flops, double max_gflops);

// A generous upper bound, in GFLOPS, on what `device` could execute, for
// ValidateCosts' max_gflops. CPU: cores (256 when unknown) x fp32 lanes of
// its widest vector ISA (sve 64, avx512f 16, avx/avx2 8, neon/asimd/sse 4,
// unknown 16) x 2 FMA pipes x 2 FLOPs per FMA x 6 GHz (above any shipping
// clock), x 4 for algorithms that do fewer FLOPs than the workload counts
// (Winograd, Strassen). With a GPU (gpu_name set): at least 5e6 (5 PFLOPS,
// above any GPU's dense tensor-core peak). E.g. 16 cores with avx512f:
// 24576 GFLOPS; a dense 1024^3 kernel (2.1 GFLOP) must then take >= 87 ns.
double PlausiblePeakGflops(const proto::DeviceInfo& device);

}  // namespace tunefleet

#endif  // TUNEFLEET_PROTO_CONVERT_MEASURE_RESULT_H_
