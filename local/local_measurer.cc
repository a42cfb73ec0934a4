#include "local/local_measurer.h"

#include <algorithm>
#include <thread>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "local/build_ahead.h"
#include "proto_convert/measure_result.h"
#include "proto_convert/run_request.h"

namespace tunefleet {
namespace {}  // namespace

absl::Status LocalValidationOptions::Validate() const {
  if (top_k < 0 || top_k > kMaxValidateTopK) {
    return absl::InvalidArgumentError(
        absl::StrCat("--validate_top_k must be in [0, ", kMaxValidateTopK, "], not ", top_k));
  }
  if (passes < 1 || passes > kMaxValidationPasses) {
    return absl::InvalidArgumentError(absl::StrCat("--validation_passes must be in [1, ",
                                                   kMaxValidationPasses, "], not ", passes));
  }
  return absl::OkStatus();
}

double LocalTimings::OverheadPerTrialSeconds() const {
  if (trials == 0) return 0;
  const double outside = measure_wall_seconds - run_seconds - check_seconds - prepare_seconds;
  return outside / trials;
}

void LocalTimings::Add(const LocalTimings& other) {
  trials += other.trials;
  built += other.built;
  build_wall_seconds += other.build_wall_seconds;
  build_ahead_seconds += other.build_ahead_seconds;
  build_cpu_seconds += other.build_cpu_seconds;
  run_seconds += other.run_seconds;
  check_seconds += other.check_seconds;
  load_seconds += other.load_seconds;
  prepare_seconds += other.prepare_seconds;
  measure_wall_seconds += other.measure_wall_seconds;
  validation_seconds += other.validation_seconds;
  build_seconds_each.insert(build_seconds_each.end(), other.build_seconds_each.begin(),
                            other.build_seconds_each.end());
}

absl::StatusOr<std::unique_ptr<LocalMeasurer>> LocalMeasurer::Create(
    const Task& task, LocalMeasurerOptions options, std::unique_ptr<Runner> runner) {
  TF_ASSIGN_OR_RETURN(TargetSpec target, ParseTarget(task.target()));
  if (options.build_parallelism <= 0) {
    options.build_parallelism = std::max(1u, std::thread::hardware_concurrency());
  }
  if (runner == nullptr) {
    TF_ASSIGN_OR_RETURN(runner, Runner::Create(options.runner));
  }
  return std::unique_ptr<LocalMeasurer>(
      new LocalMeasurer(task, std::move(target), std::move(options), std::move(runner)));
}

std::vector<BuildResult> LocalMeasurer::BuildAll(const std::vector<Config>& configs) {
  std::vector<BuildJob> jobs;
  for (const Config& config : configs) jobs.push_back({&task_, &target_, config});
  // build_parallelism threads in all, this one among them, unpinned.
  const int helpers =
      std::min<int>(options_.build_parallelism, static_cast<int>(configs.size())) - 1;
  return BuildAhead(std::move(jobs), options_.build,
                    std::vector<int>(std::max(0, helpers), BuildAhead::kAnyCpu), *clock_)
      .Take();
}

std::vector<MeasureResult> LocalMeasurer::Measure(const std::vector<Config>& configs) {
  const double start = clock_->NowSeconds();
  std::vector<BuildResult> builds = BuildAll(configs);
  timings_.build_wall_seconds += clock_->NowSeconds() - start;
  return MeasureBuilt(configs, builds);
}

std::vector<MeasureResult> LocalMeasurer::MeasureBuilt(const std::vector<Config>& configs,
                                                       const std::vector<BuildResult>& builds) {
  const double start = clock_->NowSeconds();
  MeasureOptions measure = options_.measure;
  measure.reject_above_s = reject_above_s_;
  std::vector<MeasureResult> results(configs.size());
  for (size_t i = 0; i < configs.size(); ++i) {
    const BuildResult& build = builds[i];
    MeasureResult& result = results[i];
    timings_.build_cpu_seconds += build.timings.total_seconds;
    if (!build.ok()) {
      result.costs = {1e9};
      result.error_no = build.error_no;
      result.error_msg = build.error_msg;
      result.all_cost = build.timings.total_seconds;
      result.timestamp = clock_->WallSeconds();
      continue;
    }
    ++timings_.built;
    timings_.build_seconds_each.push_back(build.timings.total_seconds);
    result = RunBuilt(build, measure, &timings_);
  }
  timings_.measure_wall_seconds += clock_->NowSeconds() - start;
  timings_.trials += static_cast<int64_t>(configs.size());
  return results;
}

MeasureResult LocalMeasurer::RunBuilt(const BuildResult& build, const MeasureOptions& measure,
                                      LocalTimings* timings) {
  proto::RunRequest request =
      MakeRunRequest(task_.workload(), build.artifact.shared_object, build.artifact.entry_name,
                     build.artifact.hash, measure);
  proto::RunResult run = runner_->Run(request);
  if (timings != nullptr) {
    timings->run_seconds += run.run_seconds();
    timings->check_seconds += run.check_seconds();
    timings->load_seconds += run.load_seconds();
    timings->prepare_seconds += run.prepare_seconds();
  }
  // The same checks as the fleet's: no cost this host could not reach.
  MeasureResult result = RejectInvalidCosts(ToMeasureResult(run, clock_->WallSeconds()),
                                            task_.workload().flops(), max_gflops_);
  // AutoTVM's all_cost: build + run, without the cooldown slept after it.
  result.all_cost = build.timings.total_seconds + result.all_cost;
  return result;
}

absl::StatusOr<LocalValidationRun> LocalMeasurer::Validate(const std::vector<Config>& candidates,
                                                           int passes) {
  if (passes < 1 || passes > kMaxValidationPasses) {
    return absl::InvalidArgumentError(
        absl::StrCat("validation passes must be in [1, ", kMaxValidationPasses, "], not ", passes));
  }
  const double start = clock_->NowSeconds();
  LocalValidationRun run;
  run.validations.resize(candidates.size());
  run.last_errors.resize(candidates.size());
  const std::vector<BuildResult> builds = BuildAll(candidates);
  const MeasureOptions measure = ValidationMeasureOptions(options_.measure);
  for (const auto& [candidate, pass] :
       ValidationOrder(static_cast<int>(candidates.size()), passes)) {
    const BuildResult& build = builds[candidate];
    MeasureResult result;
    if (build.ok()) {
      // A fresh child per measurement: nothing one candidate left behind
      // (caches, page placement, a warmed thread pool) favours the next.
      // Replacing runner_ also ends the previous child, so no idle child
      // shares the machine with the measured one.
      TF_ASSIGN_OR_RETURN(std::unique_ptr<Runner> fresh, Runner::Create(options_.runner));
      runner_ = std::move(fresh);
      result = RunBuilt(build, measure, /*timings=*/nullptr);
    } else {
      result.costs = {1e9};
      result.error_no = build.error_no;
      result.error_msg = build.error_msg;
    }
    run.validations[candidate].Add(result);
    if (!result.ok()) {
      run.last_errors[candidate] =
          absl::StrCat(MeasureErrorName(result.error_no), ": ", result.error_msg);
    }
  }
  timings_.validation_seconds += clock_->NowSeconds() - start;
  return run;
}

}  // namespace tunefleet
