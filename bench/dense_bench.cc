// Tunes dense on the local runner and prints each tuned figure beside
// OpenBLAS cblas_sgemm measured in the same run (same shape, same threads),
// plus the build-time breakdown and the local-mode overhead per trial.
//
//   bazel run -c opt //bench:dense_bench -- --trials 500 --json /tmp/dense.json
//
// Method: after tuning, the best config is re-measured `rounds` times
// (min_repeat_ms = 200 each) interleaved with OpenBLAS runs in a separate
// process, so both see the same machine state; medians are compared.
// OpenBLAS is run as Debian ships it (its own CPU detection) and with
// OPENBLAS_CORETYPE set to the kernel family this CPU supports (its
// detection does not know every CPU model); the faster is the reference.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "bench/bench_main.h"
#include "bench/bench_report.h"
#include "bench/bench_util.h"
#include "local/tune_command.h"
#include "nlohmann/json.hpp"

ABSL_FLAG(std::string, shapes, "1024,1024,1024;512,512,512;16,1024,1024",
          "M,N,K list, ';'-separated");
ABSL_FLAG(std::string, threads, "2,1", "thread counts to run");
ABSL_FLAG(int64_t, trials, 500, "tuning trials per case");
ABSL_FLAG(int32_t, rounds, 5, "interleaved re-measurement rounds (medians)");
ABSL_FLAG(std::string, json, "", "write the figures here as JSON");
ABSL_FLAG(uint64_t, seed, 1, "tuner seed");
ABSL_FLAG(bool, openblas, true, "measure the OpenBLAS reference");
ABSL_FLAG(int32_t, remeasure_number, 1, "time evaluator number for the re-measurement");
ABSL_FLAG(int32_t, remeasure_min_repeat_ms, 200,
          "time evaluator min_repeat_ms for the re-measurement");

namespace tunefleet {
namespace {

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// One OpenBLAS round in its own process; returns its JSON.
nlohmann::json RunOpenBlas(const std::string& coretype, int64_t m, int64_t n, int64_t k,
                           int threads) {
  return bench::RunJsonCommand(
      absl::StrCat(coretype.empty() ? "" : absl::StrCat("OPENBLAS_CORETYPE=", coretype, " "),
                   bench::ExeDir(), "/openblas_sgemm ", m, " ", n, " ", k, " ", threads, " 1 NK"));
}

int Main() {
  const std::string coretype = bench::OpenBlasCoreTypeForThisCpu();
  nlohmann::json report = {
      {"benchmark", "dense"}, {"target", HostTargetString()}, {"cases", nlohmann::json::array()}};
  std::vector<std::string> shapes = absl::StrSplit(absl::GetFlag(FLAGS_shapes), ';');
  std::vector<std::string> thread_list = absl::StrSplit(absl::GetFlag(FLAGS_threads), ',');
  std::printf("%-16s %3s %8s | %9s %9s %9s | %6s | %8s %9s\n", "shape", "thr", "trials", "tuned",
              "openblas", "ob(core)", "ratio", "build ms", "ovh ms/tr");
  for (const std::string& thread_text : thread_list) {
    const int threads = std::stoi(thread_text);
    for (const std::string& shape : shapes) {
      std::vector<std::string> dims = absl::StrSplit(shape, ',');
      const int64_t m = std::stoll(dims[0]), n = std::stoll(dims[1]), k = std::stoll(dims[2]);
      TuneCommandOptions options;
      options.shape = shape;
      options.trials = absl::GetFlag(FLAGS_trials);
      options.seed = absl::GetFlag(FLAGS_seed);
      options.log =
          absl::StrCat("/tmp/tunefleet_dense_bench_", m, "x", n, "x", k, "_t", threads, ".jsonl");
      options.resume = false;
      std::remove(options.log.c_str());
      options.local.runner.num_threads = threads;
      options.local.measure.cooldown_interval_s = 0;
      std::ostringstream progress, out;
      auto summary = RunTune(options, progress, out);
      if (!summary.ok() || summary->best_config.is_null()) {
        std::fprintf(
            stderr, "tuning %s failed: %s\n", shape.c_str(),
            summary.ok() ? "no config succeeded" : std::string(summary.status().message()).c_str());
        return 1;
      }
      // Re-measure the winner interleaved with the reference.
      auto task =
          Task::Make("", "dense", *WorkloadArgsFromShape("dense", shape, "NK"), summary->target);
      auto config = (*task)->space().FromJson(summary->best_config);
      LocalMeasurerOptions remeasure;
      remeasure.runner.num_threads = threads;
      remeasure.measure.number = absl::GetFlag(FLAGS_remeasure_number);
      remeasure.measure.repeat = 1;
      remeasure.measure.min_repeat_ms = absl::GetFlag(FLAGS_remeasure_min_repeat_ms);
      remeasure.measure.cooldown_interval_s = 0;
      auto measurer = LocalMeasurer::Create(**task, remeasure);
      std::vector<double> ours, ob_default, ob_core;
      std::string detected_core;
      for (int r = 0; r < absl::GetFlag(FLAGS_rounds); ++r) {
        std::vector<MeasureResult> result = (*measurer)->Measure({*config});
        if (result[0].ok())
          ours.push_back((*task)->workload().flops() / result[0].MeanCost() / 1e9);
        if (!absl::GetFlag(FLAGS_openblas)) continue;
        nlohmann::json d = RunOpenBlas("", m, n, k, threads);
        if (d.contains("gflops")) {
          ob_default.push_back(d["gflops"].get<double>());
          detected_core = d["coretype"].get<std::string>();
        }
        if (!coretype.empty()) {
          nlohmann::json c = RunOpenBlas(coretype, m, n, k, threads);
          if (c.contains("gflops")) ob_core.push_back(c["gflops"].get<double>());
        }
      }
      // Build time breakdown of the winner, median of 5 builds.
      std::vector<double> inst, lower, cg, opt, emit, link, total;
      auto target = ParseTarget(summary->target);
      for (int b = 0; b < 5; ++b) {
        BuildResult br = BuildCandidate((*task)->tmpl(), (*task)->workload(), *config, *target);
        inst.push_back(br.timings.instantiate_seconds * 1e3);
        lower.push_back(br.timings.lower_seconds * 1e3);
        cg.push_back(br.timings.codegen_seconds * 1e3);
        opt.push_back(br.timings.optimize_seconds * 1e3);
        emit.push_back(br.timings.emit_seconds * 1e3);
        link.push_back(br.timings.link_seconds * 1e3);
        total.push_back(br.timings.total_seconds * 1e3);
      }
      const double tuned = Median(ours);
      const double reference = std::max(Median(ob_default), Median(ob_core));
      const LocalTimings& t = summary->timings;
      const double build_median = Median(t.build_seconds_each) * 1e3;
      std::printf("%-16s %3d %8lld | %9.1f %9.1f %9.1f | %5.0f%% | %8.1f %9.2f\n", shape.c_str(),
                  threads, static_cast<long long>(summary->trials), tuned, Median(ob_default),
                  Median(ob_core), 100.0 * tuned / reference, build_median,
                  t.OverheadPerTrialSeconds() * 1e3);
      std::fflush(stdout);
      report["cases"].push_back({
          {"shape", {m, n, k}},
          {"threads", threads},
          {"trials", summary->trials},
          {"tuned_gflops_median", tuned},
          {"tuned_gflops_runs", ours},
          {"tuning_best_gflops", summary->best_gflops},
          {"openblas_default_gflops", Median(ob_default)},
          {"openblas_default_coretype", detected_core},
          {"openblas_coretype_gflops", Median(ob_core)},
          {"openblas_coretype", coretype},
          {"reference_gflops", reference},
          {"ratio_to_openblas", tuned / reference},
          {"best_config", summary->best_config},
          {"tuning_wall_seconds", summary->wall_seconds},
          {"build_ms_median_all_candidates", build_median},
          {"build_breakdown_ms_of_winner",
           {{"instantiate", Median(inst)},
            {"lower", Median(lower)},
            {"codegen", Median(cg)},
            {"optimize", Median(opt)},
            {"emit", Median(emit)},
            {"link", Median(link)},
            {"total", Median(total)}}},
          {"local_overhead_ms_per_trial", t.OverheadPerTrialSeconds() * 1e3},
          {"kernel_run_seconds", t.run_seconds},
          {"check_seconds", t.check_seconds},
          {"reference_prepare_seconds", t.prepare_seconds},
          {"build_wall_seconds", t.build_wall_seconds},
      });
      // Written after every case, so an interrupted run keeps what it measured.
      bench::WriteJsonReport(absl::GetFlag(FLAGS_json), report).IgnoreError();
    }
  }
  return 0;
}

}  // namespace

int bench::BenchMain() { return Main(); }

}  // namespace tunefleet
