// What the runner child's sandbox (kernel_runtime/sandbox.h) adds to a trial:
// two Runners, one with the sandbox and one without, measure the same CPU
// kernel in alternation, and the wall time of each Runner::Run is compared
// by median (plus p10/p90). The kernel: a small one (testdata/dense_ok.c,
// dense 48x40x64), or with --dense M,N,K the demo job's, dense_gemm.x86 at
// its default config for this host built by the toolchain and measured as
// the demo measures it (number 4, repeat 3, correctness checked). A second
// phase times a fresh child's start and first trial (Recycle, then Run),
// also interleaved, since the filter is built and loaded at start.
//
//   bazel run -c opt //bench:sandbox_overhead_bench -- --trials 2000 --respawns 50
//   bazel run -c opt //bench:sandbox_overhead_bench -- --dense 1024,1024,1024 --trials 40
//
// Prints one JSON object (figures in microseconds) after the human summary.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "bench/bench_main.h"
#include "common/file_util.h"
#include "common/status_macros.h"
#include "kernel_runtime/runner.h"
#include "nlohmann/json.hpp"
#include "proto_convert/run_request.h"
#include "toolchain/builder.h"
#include "toolchain/default_config.h"
#include "tuner_core/measure/measure.h"
#include "tuner_core/templates/task.h"
#include "tuner_core/workloads/workload.h"

ABSL_FLAG(int32_t, trials, 2000, "trials per Runner in the steady-state phase");
ABSL_FLAG(int32_t, respawns, 50, "child starts per Runner in the start-up phase");
ABSL_FLAG(int32_t, threads, 2, "kernel threads in each child");
ABSL_FLAG(bool, check_correctness, true, "run the correctness check in each trial");
ABSL_FLAG(std::string, dense, "",
          "M,N,K: measure the demo job's kernel (dense_gemm.x86, default config, built for this "
          "host) of this shape instead of the small test kernel");

namespace tunefleet {
namespace {

std::string SelfRunfile(const std::string& relative) {
  char self[4096];
  const ssize_t length = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (length <= 0) return relative;
  return std::string(self, static_cast<size_t>(length)) + ".runfiles/tunefleet/" + relative;
}

proto::RunRequest DenseOkRequest() {
  absl::StatusOr<std::string> bytes =
      ReadFileToString(SelfRunfile("kernel_runtime/testdata/libdense_ok.so"), kMaxArtifactBytes);
  proto::RunRequest request;
  request.set_workload_name("dense");
  request.set_workload_args_json(R"({"M": 48, "N": 40, "K": 64, "layout": "NK"})");
  request.set_shared_object(bytes.value_or(""));
  request.set_entry_name("dense_kernel");
  request.set_artifact_hash("dense_ok");
  proto::MeasureOptions* options = request.mutable_options();
  options->set_number(2);
  options->set_repeat(3);
  options->set_min_repeat_ms(0);
  options->set_cooldown_interval_s(0);
  options->set_enable_cpu_cache_flush(false);
  options->set_timeout_s(30);
  options->set_check_correctness(absl::GetFlag(FLAGS_check_correctness));
  options->set_input_seed(1);
  return request;
}

// The demo job's kernel for dense `shape` (M,N,K): dense_gemm.x86 at its
// default config, built for this host, measured as the demo measures it.
[[nodiscard]] absl::StatusOr<proto::RunRequest> DemoDenseRequest(const std::string& shape) {
  TF_ASSIGN_OR_RETURN(const nlohmann::json args, WorkloadArgsFromShape("dense", shape, "NK"));
  const std::string target_string = HostTargetString();
  TF_ASSIGN_OR_RETURN(std::unique_ptr<Task> task,
                      Task::Make("dense_gemm.x86", "dense", args, target_string));
  TF_ASSIGN_OR_RETURN(const TargetSpec target, ParseTarget(target_string));
  TF_ASSIGN_OR_RETURN(const Config config, DefaultConfig(*task, TargetVectorLanes(target)));
  BuildResult built = BuildCandidate(task->tmpl(), task->workload(), config, target);
  if (!built.ok()) return absl::InternalError(built.error_msg);
  MeasureOptions options;
  options.number = 4;
  options.repeat = 3;
  options.check_correctness = absl::GetFlag(FLAGS_check_correctness);
  return MakeRunRequest(task->workload(), std::move(built.artifact.shared_object),
                        built.artifact.entry_name, built.artifact.hash, options);
}

double Percentile(std::vector<double> values, double fraction) {
  std::sort(values.begin(), values.end());
  const size_t index = static_cast<size_t>(fraction * static_cast<double>(values.size() - 1));
  return values[index];
}

// Microseconds one Run took; exits the benchmark on a failed trial.
double TimedRun(Runner& runner, const proto::RunRequest& request) {
  const auto start = std::chrono::steady_clock::now();
  proto::RunResult result = runner.Run(request);
  const double micros =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  if (result.error_no() != static_cast<int>(MeasureErrorNo::kNoError)) {
    std::fprintf(stderr, "sandbox_overhead_bench: trial failed: %s\n", result.error_msg().c_str());
    std::exit(1);
  }
  return micros;
}

nlohmann::json Summary(const std::vector<double>& micros) {
  return {{"median_us", Percentile(micros, 0.5)},
          {"p10_us", Percentile(micros, 0.1)},
          {"p90_us", Percentile(micros, 0.9)},
          {"n", micros.size()}};
}

}  // namespace

namespace bench {

int BenchMain() {
  proto::RunRequest request;
  if (const std::string dense = absl::GetFlag(FLAGS_dense); !dense.empty()) {
    absl::StatusOr<proto::RunRequest> demo = DemoDenseRequest(dense);
    if (!demo.ok()) {
      std::fprintf(stderr, "sandbox_overhead_bench: %s\n", demo.status().ToString().c_str());
      return 1;
    }
    request = *std::move(demo);
  } else {
    request = DenseOkRequest();
  }
  if (request.shared_object().empty()) {
    std::fprintf(stderr, "sandbox_overhead_bench: libdense_ok.so not found in runfiles\n");
    return 1;
  }
  std::unique_ptr<Runner> runners[2];
  for (int sandboxed = 0; sandboxed < 2; ++sandboxed) {
    absl::StatusOr<std::unique_ptr<Runner>> runner = Runner::Create(RunnerOptions{
        .num_threads = absl::GetFlag(FLAGS_threads), .sandbox = {.enabled = sandboxed == 1}});
    if (!runner.ok()) {
      std::fprintf(stderr, "sandbox_overhead_bench: %s\n", runner.status().ToString().c_str());
      return 1;
    }
    runners[sandboxed] = *std::move(runner);
    for (int warm = 0; warm < 20; ++warm) TimedRun(*runners[sandboxed], request);
  }

  std::vector<double> trial[2], start[2];
  const int trials = absl::GetFlag(FLAGS_trials);
  for (int i = 0; i < trials; ++i) {
    // Alternate which goes first, so drift and ordering hit both alike.
    for (int k = 0; k < 2; ++k) {
      const int sandboxed = (i + k) % 2;
      trial[sandboxed].push_back(TimedRun(*runners[sandboxed], request));
    }
  }
  const int respawns = absl::GetFlag(FLAGS_respawns);
  for (int i = 0; i < respawns; ++i) {
    for (int k = 0; k < 2; ++k) {
      const int sandboxed = (i + k) % 2;
      runners[sandboxed]->Recycle();
      start[sandboxed].push_back(TimedRun(*runners[sandboxed], request));
    }
  }

  const nlohmann::json report = {
      {"benchmark", "sandbox_overhead"},
      {"threads", absl::GetFlag(FLAGS_threads)},
      {"check_correctness", absl::GetFlag(FLAGS_check_correctness)},
      {"kernel", absl::GetFlag(FLAGS_dense).empty()
                     ? std::string("dense_ok 48x40x64 (test kernel)")
                     : absl::StrCat("dense_gemm.x86 default config ", absl::GetFlag(FLAGS_dense))},
      {"trial_off", Summary(trial[0])},
      {"trial_on", Summary(trial[1])},
      {"trial_added_median_us", Percentile(trial[1], 0.5) - Percentile(trial[0], 0.5)},
      {"start_and_first_trial_off", Summary(start[0])},
      {"start_and_first_trial_on", Summary(start[1])},
      {"start_added_median_us", Percentile(start[1], 0.5) - Percentile(start[0], 0.5)},
  };
  std::printf(
      "per trial (median of %d, interleaved): sandbox off %.1f us, on %.1f us, added %.1f us\n"
      "child start + first trial (median of %d): off %.1f us, on %.1f us, added %.1f us\n",
      trials, Percentile(trial[0], 0.5), Percentile(trial[1], 0.5),
      report["trial_added_median_us"].get<double>(), respawns, Percentile(start[0], 0.5),
      Percentile(start[1], 0.5), report["start_added_median_us"].get<double>());
  std::printf("%s\n", report.dump().c_str());
  return 0;
}

}  // namespace bench
}  // namespace tunefleet
