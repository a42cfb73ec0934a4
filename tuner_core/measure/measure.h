// What one measurement is asked and what it answers, with AutoTVM's meaning.
// Shared by the tuners (which read results), the local runner, the builder
// and the device agent. Plain data: no I/O here.
#ifndef TUNEFLEET_TUNER_CORE_MEASURE_MEASURE_H_
#define TUNEFLEET_TUNER_CORE_MEASURE_MEASURE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace tunefleet {

// AutoTVM's MeasureErrorNo, same numbers (they are written into records).
enum class MeasureErrorNo : int {
  kNoError = 0,
  kInstantiationError = 1,  // bad config, or a target/device limit violated
  kCompileHost = 2,
  kCompileDevice = 3,
  kRuntimeDevice = 4,  // the kernel crashed (or the runner died)
  kWrongAnswer = 5,    // output differs from the reference
  kBuildTimeout = 6,
  kRunTimeout = 7,
  kUnknown = 8,
};

const char* MeasureErrorName(MeasureErrorNo error_no);

// The longest measurement timeout anyone may ask for: a trial holds its
// device for up to this long, so a typo (600000 for 600) would stall a
// device's queue for days.
inline constexpr double kMaxMeasureTimeoutS = 600.0;
// The longest sleep between a trial's repeats a job may ask for (AutoTVM's
// default is 0.1 s): more would hold the agents of its key idle for others.
inline constexpr double kMaxCooldownIntervalS = 10.0;
// The most repeats one trial may ask for (repeat and max_repeat).
inline constexpr int kMaxRepeat = 10000;

// Time evaluator settings (AutoTVM's measure_option / runner arguments).
// The member initialisers are the defaults; the wire's optional fields
// resolve to them (proto_convert/run_request.h, ResolveMeasureOptions).
struct MeasureOptions {
  int number = 4;                    // runs per repeat (grows with min_repeat_ms)
  int repeat = 3;                    // repeats; one cost per repeat (before trimming)
  int min_repeat_ms = 0;             // grow `number` until a repeat lasts this long
  double cooldown_interval_s = 0.1;  // sleep once after each trial (AutoTVM's)
  bool enable_cpu_cache_flush = false;
  double timeout_s = 10.0;  // whole measurement of one trial; <= kMaxMeasureTimeoutS
  bool check_correctness = true;
  uint64_t input_seed = 1;  // seeds the random inputs
  // Adaptive repeats: 0 means `repeat` (none added). With target_rel_ci > 0,
  // repeats go on past `repeat`, up to max_repeat, until the 95 % confidence
  // interval of the mean cost is within +-target_rel_ci of it.
  int max_repeat = 0;
  double target_rel_ci = 0.0;  // 0: off; e.g. 0.02 for +-2 %
  // Early rejection (a racing tuner's): when the first repeat costs more
  // than this (seconds per call), timing stops there and that one cost is
  // the result: a candidate already far behind the best costs one repeat,
  // not all. 0: off. Set per batch from the task's best (local model jobs).
  double reject_above_s = 0.0;

  // The repeat cap the evaluator uses: max(repeat, max_repeat).
  int EffectiveMaxRepeat() const { return max_repeat > repeat ? max_repeat : repeat; }

  // InvalidArgument naming the first bad field and its value: number and
  // repeat >= 1, min_repeat_ms >= 0, cooldown finite and >= 0, timeout_s in
  // (0, kMaxMeasureTimeoutS], max_repeat 0 or in [repeat, kMaxRepeat],
  // target_rel_ci in [0, 1) and, when > 0, max_repeat > repeat;
  // reject_above_s finite and >= 0.
  [[nodiscard]] absl::Status Validate() const;
};

struct MeasureResult {
  // Seconds per run, one per repeat, already trimmed when they were made
  // (AutoTVM's run_through_rpc: more than 2 repeats -> min and max
  // dropped); {1e9} on error.
  std::vector<double> costs;
  MeasureErrorNo error_no = MeasureErrorNo::kNoError;
  std::string error_msg;
  double all_cost = 0.0;   // seconds spent on this trial, build + run (no cooldown)
  double timestamp = 0.0;  // unix seconds when the result was made
  // The spread (kernel_runtime/time_evaluator.h): repeats timed before
  // trimming (0 when unknown), their standard deviation in seconds, and the
  // 95 % confidence half-width of MeanCost() relative to it.
  int timed_repeats = 0;
  std::optional<double> cost_stddev_s;
  std::optional<double> cost_rel_ci;

  bool ok() const { return error_no == MeasureErrorNo::kNoError; }
  // The plain mean of `costs`, as AutoTVM's readers take it (np.mean): the
  // costs were trimmed once when measured, never again here. 1e9 if empty.
  double MeanCost() const;
  // What the tuners' models learn from, higher is better: 1 / MeanCost()
  // for a successful trial, 0 for a failed one (a model learns to avoid it).
  double Throughput() const;
};

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_MEASURE_MEASURE_H_
