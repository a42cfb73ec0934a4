// Local mode: builds candidates with the in-process builder (a batch in
// parallel, one LLVM context per thread) and measures them one at a time in
// the isolated runner child, with no RPC anywhere (the LocalRunner lesson:
// an RPC hop to yourself costs time and reliability). Builds never overlap a
// measurement, so timings are not disturbed by the compiler.
//
// Validated winners (tuner_core/measure/validation.h): Validate re-measures
// a few configs, each measurement in a fresh runner child, with
// ValidationMeasureOptions of the search's options, in ValidationOrder.
#ifndef TUNEFLEET_LOCAL_LOCAL_MEASURER_H_
#define TUNEFLEET_LOCAL_LOCAL_MEASURER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/clock.h"
#include "kernel_runtime/device_info.h"
#include "kernel_runtime/runner.h"
#include "proto_convert/measure_result.h"
#include "toolchain/builder.h"
#include "toolchain/codegen/target.h"
#include "tuner_core/measure/measure.h"
#include "tuner_core/measure/validation.h"
#include "tuner_core/templates/task.h"
#include "tuner_core/tuners/tuner.h"

namespace tunefleet {

// How local mode validates a search's winners (the CLI's --validate_top_k
// and --validation_passes).
struct LocalValidationOptions {
  int top_k = kDefaultValidateTopK;       // configs re-measured; 0: no validation
  int passes = kDefaultValidationPasses;  // measurements of each

  // InvalidArgument naming the flag: --validate_top_k outside
  // [0, kMaxValidateTopK], --validation_passes outside [1, kMaxValidationPasses].
  [[nodiscard]] absl::Status Validate() const;
};

struct LocalMeasurerOptions {
  MeasureOptions measure;
  BuildOptions build;
  int build_parallelism = 0;  // builder threads; 0 = hardware concurrency
  RunnerOptions runner;
  LocalValidationOptions validation;  // used by the callers of Validate
  // A job's tasks share one runner child (local_job.h); false: a new
  // child each time the job switches tasks (the cost it saves, measured).
  bool share_runner_child = true;
  // Local jobs build the next batch of candidates while the current one is
  // measured, on the CPUs the measurement leaves free (build_ahead.h);
  // false, or no free CPU (the runner's threads take them all): each
  // batch is built, then measured.
  bool build_ahead = true;
  // Early rejection in a model job: a candidate whose first repeat is
  // slower than this many times its task's best so far is timed no further
  // (MeasureOptions::reject_above_s). 0: off.
  double reject_slower_than = 0;
  // Times the phases and stamps the results; not owned, must outlive the
  // measurer.
  ClockInterface* clock = &SystemClock();
};

// The clock `options` times with: options.clock, or SystemClock() if null.
inline ClockInterface& MeasurerClock(const LocalMeasurerOptions& options) {
  return options.clock != nullptr ? *options.clock : SystemClock();
}

// What Validate measured: one Validation per candidate, in the candidates'
// order, and the last error of each (empty when every pass succeeded).
struct LocalValidationRun {
  std::vector<Validation> validations;
  std::vector<std::string> last_errors;
};

// Where a trial's time went, summed over every trial measured so far.
struct LocalTimings {
  int64_t trials = 0;
  int64_t built = 0;
  double build_wall_seconds = 0;           // wall time of the build phases nothing overlapped
  double build_ahead_seconds = 0;          // wall time of builds beside a measurement
  double build_cpu_seconds = 0;            // sum of per-candidate build times
  double run_seconds = 0;                  // time evaluator, incl. warm-up and cooldown
  double check_seconds = 0;                // correctness run and comparison
  double load_seconds = 0;                 // dlopen in the child
  double prepare_seconds = 0;              // tensors + reference, once per workload
  double measure_wall_seconds = 0;         // wall time of the measure phases
  double validation_seconds = 0;           // wall time of Validate (builds and passes)
  std::vector<double> build_seconds_each;  // per built candidate

  // Per-trial time outside the build, the kernel's own runs (timing and the
  // correctness run) and the once-per-task workload preparation: request
  // transfer, loading, result handling.
  double OverheadPerTrialSeconds() const;
  // Adds `other`'s counts and times (a job's measurers summed).
  void Add(const LocalTimings& other);
};

class LocalMeasurer final : public MeasurerInterface {
 public:
  // `runner`: the runner child to measure in, an earlier measurer's
  // (ReleaseRunner), so the tasks of one job share one child and the
  // workloads it prepared (inputs, reference outputs); null: a new child.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<LocalMeasurer>> Create(
      const Task& task, LocalMeasurerOptions options, std::unique_ptr<Runner> runner = nullptr);
  // Hands the runner child over to the next task's measurer; this measurer
  // measures nothing after.
  std::unique_ptr<Runner> ReleaseRunner() { return std::move(runner_); }
  // MeasureOptions::reject_above_s for the next Measure calls (0: off).
  void set_reject_above_s(double seconds) { reject_above_s_ = seconds; }

  // Builds `configs` (in parallel), then measures them one by one.
  std::vector<MeasureResult> Measure(const std::vector<Config>& configs) override;
  // Measures `configs` already built (`builds`: one per config, in order;
  // a failed build is that config's result).
  std::vector<MeasureResult> MeasureBuilt(const std::vector<Config>& configs,
                                          const std::vector<BuildResult>& builds);

  // Builds `candidates` (again: artifacts are not kept from the search) and
  // measures each `passes` times, in ValidationOrder, each measurement in a
  // fresh runner child (the search's child is ended first), with
  // ValidationMeasureOptions(options.measure); a build failure fails each
  // of that candidate's passes. Not counted in timings().trials.
  // InvalidArgument for passes outside [1, kMaxValidationPasses]; the errors
  // of Runner::Create.
  [[nodiscard]] absl::StatusOr<LocalValidationRun> Validate(const std::vector<Config>& candidates,
                                                            int passes);

  const LocalTimings& timings() const { return timings_; }
  const TargetSpec& target() const { return target_; }
  const Task& task() const { return task_; }

 private:
  LocalMeasurer(const Task& task, TargetSpec target, LocalMeasurerOptions options,
                std::unique_ptr<Runner> runner)
      : task_(task),
        target_(std::move(target)),
        options_(std::move(options)),
        runner_(std::move(runner)),
        max_gflops_(PlausiblePeakGflops(DetectHostDevice())),
        clock_(&MeasurerClock(options_)) {}

  std::vector<BuildResult> BuildAll(const std::vector<Config>& configs);
  // Measures one built candidate in runner_; the result as the fleet checks
  // it. The child's time split is added to `timings` unless it is null.
  MeasureResult RunBuilt(const BuildResult& build, const MeasureOptions& measure,
                         LocalTimings* timings);

  const Task& task_;
  const TargetSpec target_;
  const LocalMeasurerOptions options_;
  std::unique_ptr<Runner> runner_;
  const double max_gflops_;      // no cost of this host may imply more
  ClockInterface* const clock_;  // options_.clock (SystemClock() if null)
  LocalTimings timings_;
  double reject_above_s_ = 0;
};

}  // namespace tunefleet

#endif  // TUNEFLEET_LOCAL_LOCAL_MEASURER_H_
