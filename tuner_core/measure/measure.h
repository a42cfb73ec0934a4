// What one measurement is asked and what it answers, with AutoTVM's meaning.
// Shared by the tuners (which read results), the local runner, the builder
// and the device agent. Plain data: no I/O here.
#ifndef TUNEFLEET_TUNER_CORE_MEASURE_MEASURE_H_
#define TUNEFLEET_TUNER_CORE_MEASURE_MEASURE_H_

#include <cstdint>
#include <string>
#include <vector>

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

// Time evaluator settings (AutoTVM's measure_option / runner arguments).
struct MeasureOptions {
  int number = 4;                    // runs per repeat (grows with min_repeat_ms)
  int repeat = 3;                    // repeats; one cost per repeat
  int min_repeat_ms = 0;             // grow `number` until a repeat lasts this long
  double cooldown_interval_s = 0.1;  // sleep between repeats
  bool enable_cpu_cache_flush = false;
  double timeout_s = 10.0;  // whole measurement of one trial
  bool check_correctness = true;
  uint64_t input_seed = 1;  // seeds the random inputs
};

struct MeasureResult {
  std::vector<double> costs;  // seconds per run, one per repeat; {1e9} on error
  MeasureErrorNo error_no = MeasureErrorNo::kNoError;
  std::string error_msg;
  double all_cost = 0.0;   // seconds spent on this trial, build + run
  double timestamp = 0.0;  // unix seconds when the result was made

  bool ok() const { return error_no == MeasureErrorNo::kNoError; }
  // Mean cost as AutoTVM reports it: drop min and max when > 2 costs.
  double MeanCost() const;
};

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_MEASURE_MEASURE_H_
