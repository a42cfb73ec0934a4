// Issue 18's figure: is the best a tuning job reports one that a re-run
// confirms? For each workload (dense 1024x1024x1024, 512x512x512,
// 16x1024x1024, and the conv2d tasks of ResNet-18) and each seed:
//   1. a fleet of real processes on 127.0.0.1 (tracker, builder, agent with
//      --threads kernel threads, tuner; what `tunefleet up` starts) tunes it
//      with the random tuner and the job's default validation (top 5
//      re-measured in 3 interleaved passes, each in a fresh runner child);
//   2. the job reports its best: the validated figure, with the search's
//      best measurement beside it;
//   3. this process re-measures the reported winner independently: it
//      builds the config itself (in-process LLVM) and measures it in
//      `--remeasure_runs` fresh runner children (separate processes), with
//      the validation measure options; the median of those runs is the
//      re-measured figure.
// Printed per run: reported (validated) GFLOPS, search GFLOPS, re-measured
// GFLOPS, and the gaps reported/re-measured - 1 and search/re-measured - 1;
// then the median |gap| over all runs of both, and per workload the spread
// of the validated best over seeds.
//
//   bazel build -c opt //bench:validation_bench //tracker:tunefleet_tracker ... &&
//   bazel-bin/bench/validation_bench --seeds 5 --json bench/results/validation.json
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/median.h"
#include "common/status_macros.h"
#include "kernel_runtime/device_info.h"
#include "kernel_runtime/runner.h"
#include "launcher/fleet_launcher.h"
#include "nlohmann/json.hpp"
#include "proto_convert/measure_result.h"
#include "proto_convert/model_job.h"
#include "proto_convert/run_request.h"
#include "proto_convert/task_spec.h"
#include "toolchain/builder.h"
#include "toolchain/codegen/target.h"
#include "tuner_core/graph/model_source.h"
#include "tuner_core/measure/validation.h"

ABSL_FLAG(std::string, dense, "1024,1024,1024;512,512,512;16,1024,1024",
          "dense shapes M,N,K separated by ';' (empty: none)");
ABSL_FLAG(std::string, model, "resnet-18", "whose conv2d tasks to tune (empty: none)");
ABSL_FLAG(int64_t, trials, 32, "trials per dense job");
ABSL_FLAG(int64_t, trials_per_task, 16, "trials per conv task of the model job");
ABSL_FLAG(int, seeds, 5, "tuning runs per dense shape (seeds 1..N)");
ABSL_FLAG(int, model_seeds, 1, "tuning runs of the model's conv tasks");
ABSL_FLAG(int, threads, 2, "kernel threads of the agent and of the re-measurement");
ABSL_FLAG(int, remeasure_runs, 3, "fresh runner children per re-measurement (median)");
ABSL_FLAG(std::string, json, "", "write every run here");

namespace tunefleet {
namespace {

struct Outcome {
  std::string workload;  // "dense 1024x1024x1024", "conv2d task 3 (...)"
  uint64_t seed = 0;
  std::string figure;  // what the job reported: "validated" or "search"
  double reported_gflops = 0;
  double search_gflops = 0;
  double remeasured_gflops = 0;
  double remeasured_spread = 0;  // (max - min) / median over the fresh children
  double job_seconds = 0;
  double Gap() const { return reported_gflops / remeasured_gflops - 1; }
  double SearchGap() const { return search_gflops / remeasured_gflops - 1; }
};

proto::MeasureOptions SearchMeasure() {
  proto::MeasureOptions m;
  m.set_number(3);
  m.set_repeat(3);
  m.set_timeout_s(10);
  m.set_cooldown_interval_s(0);
  return m;
}

// The winner `config_json` of `task`, measured in fresh runner children.
[[nodiscard]] absl::StatusOr<Validation> Remeasure(const proto::TaskSpec& spec,
                                                   const std::string& config_json) {
  TF_ASSIGN_OR_RETURN(std::unique_ptr<Task> task, TaskFromSpec(spec));
  TF_ASSIGN_OR_RETURN(Config config, task->space().FromJsonString(config_json));
  TF_ASSIGN_OR_RETURN(TargetSpec target, ParseTarget(task->target()));
  const BuildResult built = BuildCandidate(task->tmpl(), task->workload(), config, target);
  if (!built.ok()) return absl::InternalError(absl::StrCat("rebuild failed: ", built.error_msg));
  const MeasureOptions options = ValidationMeasureOptions(ResolveMeasureOptions(SearchMeasure()));
  Validation v;
  for (int run = 0; run < absl::GetFlag(FLAGS_remeasure_runs); ++run) {
    RunnerOptions runner_options;
    runner_options.num_threads = absl::GetFlag(FLAGS_threads);
    TF_ASSIGN_OR_RETURN(std::unique_ptr<Runner> runner, Runner::Create(runner_options));
    const proto::RunResult r =
        runner->Run(MakeRunRequest(task->workload(), built.artifact.shared_object,
                                   built.artifact.entry_name, built.artifact.hash, options));
    v.Add(ToMeasureResult(r, 0));
  }
  if (!v.ok()) return absl::InternalError("every re-measurement failed");
  return v;
}

// Runs `spec` on a fresh fleet; the final status and its wall time.
[[nodiscard]] absl::StatusOr<std::pair<proto::JobStatus, double>> RunJob(proto::JobSpec spec) {
  FleetLauncher fleet(FleetLauncher::Options{
      .builders = 1, .agents = 1, .tuners = 1, .agent_threads = absl::GetFlag(FLAGS_threads)});
  TF_RETURN_IF_ERROR(fleet.Start());  // returns once every worker has registered
  spec.set_device_key("cpu");
  const auto start = std::chrono::steady_clock::now();
  TF_ASSIGN_OR_RETURN(proto::JobStatus submitted, fleet.client().Submit(spec));
  TF_ASSIGN_OR_RETURN(proto::JobStatus done, fleet.WaitForJob(submitted.job_id(), 3600));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (done.state() != proto::SUCCEEDED) {
    return absl::InternalError(
        absl::StrCat("job ", proto::JobState_Name(done.state()), ": ", done.message()));
  }
  return std::make_pair(done, seconds);
}

[[nodiscard]] absl::StatusOr<Outcome> Judge(const std::string& workload, uint64_t seed,
                                            const proto::TaskSpec& task,
                                            const proto::TaskStatus& status, double seconds) {
  Outcome o;
  o.workload = workload;
  o.seed = seed;
  o.figure = status.best_figure();
  o.reported_gflops = status.best_gflops();
  o.search_gflops = status.best_search_cost_s() > 0
                        ? status.best_gflops() * status.best_cost_s() / status.best_search_cost_s()
                        : 0;
  o.job_seconds = seconds;
  // The record keeps the resolved CPU; "native" here is this host, as on the agent.
  TF_ASSIGN_OR_RETURN(Validation v, Remeasure(task, status.best_config_json()));
  TF_ASSIGN_OR_RETURN(std::unique_ptr<Task> t, TaskFromSpec(task));
  o.remeasured_gflops = t->workload().flops() / v.cost_s() / 1e9;
  o.remeasured_spread = v.rel_spread();
  std::fprintf(stderr,
               "  %-44s seed %lu: reported %8.2f GFLOPS (%s), search %8.2f, re-measured %8.2f "
               "(spread %.1f %%): gap %+.1f %%, search gap %+.1f %%  [%.0f s]\n",
               workload.c_str(), static_cast<unsigned long>(seed), o.reported_gflops,
               o.figure.c_str(), o.search_gflops, o.remeasured_gflops, o.remeasured_spread * 100,
               o.Gap() * 100, o.SearchGap() * 100, seconds);
  return o;
}

[[nodiscard]] absl::Status Main() {
  std::vector<Outcome> outcomes;
  const std::string target = "llvm -mcpu=native";
  for (absl::string_view shape :
       absl::StrSplit(absl::GetFlag(FLAGS_dense), ';', absl::SkipEmpty())) {
    std::vector<std::string> d = absl::StrSplit(shape, ',');
    if (d.size() != 3) return absl::InvalidArgumentError(absl::StrCat("bad shape ", shape));
    const std::string name = absl::StrCat("dense ", d[0], "x", d[1], "x", d[2]);
    for (int seed = 1; seed <= absl::GetFlag(FLAGS_seeds); ++seed) {
      proto::JobSpec spec;
      proto::TaskSpec* task = spec.add_tasks()->mutable_task();
      task->set_workload_name("dense");
      task->set_workload_args_json(
          absl::StrCat(R"({"M":)", d[0], R"(,"N":)", d[1], R"(,"K":)", d[2], R"(,"layout":"NK"})"));
      task->set_target(target);
      spec.set_tuner("random");
      spec.set_n_trial(absl::GetFlag(FLAGS_trials));
      spec.set_seed(seed);
      *spec.mutable_measure() = SearchMeasure();
      TF_ASSIGN_OR_RETURN(auto done, RunJob(spec));
      proto::TaskSpec resolved = *task;
      TF_ASSIGN_OR_RETURN(Outcome o, Judge(name, seed, resolved, done.first.tasks(0), done.second));
      outcomes.push_back(o);
    }
  }
  if (!absl::GetFlag(FLAGS_model).empty()) {
    TF_ASSIGN_OR_RETURN(LoadedModel model, LoadModel(absl::GetFlag(FLAGS_model), {}));
    std::vector<ModelTask> convs;
    for (const ModelTask& t : model.tasks) {
      if (t.workload == "conv2d_nchw") convs.push_back(t);
    }
    ModelJobOptions options;
    options.trials_per_task = absl::GetFlag(FLAGS_trials_per_task);
    options.task_policy = "round_robin";
    for (int seed = 1; seed <= absl::GetFlag(FLAGS_model_seeds); ++seed) {
      proto::JobSpec spec =
          MakeModelJobSpec(absl::GetFlag(FLAGS_model) + " conv2d", convs, target, options);
      spec.set_tuner("random");
      spec.set_seed(seed);
      spec.set_early_stopping(-1);
      *spec.mutable_measure() = SearchMeasure();
      TF_ASSIGN_OR_RETURN(auto done, RunJob(spec));
      for (int i = 0; i < done.first.tasks_size(); ++i) {
        TF_ASSIGN_OR_RETURN(
            Outcome o, Judge(absl::StrCat("conv2d task ", i, " (", spec.tasks(i).name(), ")"), seed,
                             spec.tasks(i).task(), done.first.tasks(i), done.second));
        outcomes.push_back(o);
      }
    }
  }
  std::vector<double> gaps, search_gaps;
  for (const Outcome& o : outcomes) {
    gaps.push_back(std::abs(o.Gap()));
    search_gaps.push_back(std::abs(o.SearchGap()));
  }
  std::printf("\nmachine: %s, %d kernel threads\n", DetectHostDevice().cpu_model().c_str(),
              absl::GetFlag(FLAGS_threads));
  std::printf(
      "runs: %zu; median |reported / re-measured - 1|: %.2f %% (validated best); "
      "%.2f %% for the search's best measurement\n",
      outcomes.size(), Median(gaps) * 100, Median(search_gaps) * 100);
  // Spread of the validated best over seeds, per workload with several seeds.
  nlohmann::json per_workload = nlohmann::json::array();
  std::vector<std::string> names;
  for (const Outcome& o : outcomes) {
    if (std::find(names.begin(), names.end(), o.workload) == names.end())
      names.push_back(o.workload);
  }
  for (const std::string& name : names) {
    std::vector<double> best, gap;
    for (const Outcome& o : outcomes) {
      if (o.workload != name) continue;
      best.push_back(o.reported_gflops);
      gap.push_back(o.Gap());
    }
    const auto [lo, hi] = std::minmax_element(best.begin(), best.end());
    std::printf(
        "%-44s %zu seeds: validated best min %.2f, median %.2f, max %.2f GFLOPS "
        "(spread %.1f %%); median gap %+.2f %%\n",
        name.c_str(), best.size(), *lo, Median(best), *hi, (*hi - *lo) / Median(best) * 100,
        Median(gap) * 100);
    per_workload.push_back({{"workload", name},
                            {"seeds", best.size()},
                            {"validated_best_min", *lo},
                            {"validated_best_median", Median(best)},
                            {"validated_best_max", *hi},
                            {"median_gap", Median(gap)}});
  }
  if (!absl::GetFlag(FLAGS_json).empty()) {
    nlohmann::json runs = nlohmann::json::array();
    for (const Outcome& o : outcomes) {
      runs.push_back({{"workload", o.workload},
                      {"seed", o.seed},
                      {"figure", o.figure},
                      {"reported_gflops", o.reported_gflops},
                      {"search_gflops", o.search_gflops},
                      {"remeasured_gflops", o.remeasured_gflops},
                      {"remeasured_spread", o.remeasured_spread},
                      {"gap", o.Gap()},
                      {"search_gap", o.SearchGap()},
                      {"job_seconds", o.job_seconds}});
    }
    nlohmann::json out = {{"machine", DetectHostDevice().cpu_model()},
                          {"threads", absl::GetFlag(FLAGS_threads)},
                          {"median_abs_gap", Median(gaps)},
                          {"median_abs_search_gap", Median(search_gaps)},
                          {"workloads", per_workload},
                          {"runs", runs}};
    std::ofstream(absl::GetFlag(FLAGS_json)) << out.dump(1) << "\n";
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace tunefleet

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  const absl::Status status = tunefleet::Main();
  if (!status.ok()) {
    std::cerr << "validation_bench: " << status << "\n";
    return 1;
  }
  return 0;
}
