// The model side of an XGBoost tuning run, alone: feature extraction,
// fitting and simulated-annealing selection, with no kernel built or run.
// Costs are synthetic (a fixed per-knob-choice factor, multiplied over the
// knobs), so the model has something learnable to fit and the figures do not
// depend on this machine's timings of kernels. tuner_bench reports the same
// split against real measurements; this one is for profiling and for
// comparing the model's cost across changes.
//
//   bazel run -c opt //bench:model_overhead_bench -- --shape 16,1024,1024 --trials 200
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "bench/bench_main.h"
#include "bench/feature_speed.h"
#include "toolchain/codegen/target.h"
#include "tuner_core/tuners/xgb_tuner.h"
#include "tuner_core/workloads/workload.h"

ABSL_FLAG(std::string, workload, "dense", "workload");
ABSL_FLAG(std::string, shape, "16,1024,1024", "workload shape (as tunefleet tune --shape)");
ABSL_FLAG(int64_t, trials, 200, "trials");
ABSL_FLAG(int32_t, seeds, 1, "seeds (1..seeds)");
ABSL_FLAG(int32_t, feature_threads, 0, "xgb tuner feature threads (0: the tuner's default)");

namespace tunefleet {
namespace {

uint64_t Mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  return x ^ (x >> 33);
}

// Product over knobs of a factor in [1, 2) fixed per (knob, choice).
class SyntheticMeasurer final : public MeasurerInterface {
 public:
  explicit SyntheticMeasurer(std::vector<int64_t> dims) : dims_(std::move(dims)) {}
  std::vector<MeasureResult> Measure(const std::vector<Config>& configs) override {
    std::vector<MeasureResult> results;
    for (const Config& c : configs) {
      double seconds = 1e-3;
      int64_t rest = c.index();
      for (size_t k = 0; k < dims_.size(); ++k) {
        const int64_t choice = rest % dims_[k];
        rest /= dims_[k];
        seconds *= 1.0 + static_cast<double>(Mix(k * 1000003 + choice) % 1000) / 1000.0;
      }
      MeasureResult r;
      r.costs = {seconds};
      r.all_cost = seconds;
      results.push_back(r);
    }
    return results;
  }

 private:
  const std::vector<int64_t> dims_;
};

int Main() {
  absl::StatusOr<nlohmann::json> args =
      WorkloadArgsFromShape(absl::GetFlag(FLAGS_workload), absl::GetFlag(FLAGS_shape), "NK");
  if (!args.ok()) {
    std::fprintf(stderr, "%s\n", std::string(args.status().message()).c_str());
    return 1;
  }
  absl::StatusOr<std::unique_ptr<Task>> task =
      Task::Make("", absl::GetFlag(FLAGS_workload), *args, HostTargetString());
  if (!task.ok()) {
    std::fprintf(stderr, "%s\n", std::string(task.status().message()).c_str());
    return 1;
  }
  const ConfigSpace& space = (*task)->space();
  std::printf("%s %s (%s): %lld configs\n", absl::GetFlag(FLAGS_workload).c_str(),
              absl::GetFlag(FLAGS_shape).c_str(), (*task)->name().c_str(),
              static_cast<long long>(space.size()));
  for (const auto& [kind, per_second] : FeatureConfigsPerSecond(**task, 5000)) {
    std::printf("%-8s features: %8.0f configs/s on one thread\n", kind.c_str(), per_second);
  }
  SyntheticMeasurer measurer(space.KnobDims());
  for (int seed = 1; seed <= absl::GetFlag(FLAGS_seeds); ++seed) {
    XgbTunerOptions options;
    options.seed = seed;
    if (absl::GetFlag(FLAGS_feature_threads) > 0)
      options.feature_threads = absl::GetFlag(FLAGS_feature_threads);
    absl::StatusOr<std::unique_ptr<XgbTuner>> tuner = XgbTuner::Create(**task, options);
    if (!tuner.ok()) {
      std::fprintf(stderr, "%s\n", std::string(tuner.status().message()).c_str());
      return 1;
    }
    TuneOptions tune;
    tune.n_trial = absl::GetFlag(FLAGS_trials);
    tune.show_progress = false;
    const auto t0 = std::chrono::steady_clock::now();
    if (absl::Status s = (*tuner)->Tune(measurer, tune, {}); !s.ok()) {
      std::fprintf(stderr, "%s\n", std::string(s.message()).c_str());
      return 1;
    }
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const ModelTimings& m = (*tuner)->model_timings();
    std::printf(
        "seed %d: wall %.2fs = fit %.2fs + select %.2fs (features %.2fs for %lld configs, %lld "
        "rows "
        "predicted, %lld selections, %lld SA steps)\n",
        seed, wall, m.fit_seconds, m.select_seconds, m.feature_seconds,
        static_cast<long long>(m.featurized_configs), static_cast<long long>(m.predicted_rows),
        static_cast<long long>(m.selections), static_cast<long long>(m.sa_steps));
  }
  return 0;
}

}  // namespace

int bench::BenchMain() { return Main(); }

}  // namespace tunefleet
