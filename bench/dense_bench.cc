// Tunes dense on the local runner and prints each tuned figure beside
// OpenBLAS cblas_sgemm measured in the same run (same shape, same threads),
// plus the build-time breakdown and the local-mode overhead per trial.
//
//   bazel run -c opt //bench:dense_bench -- --trials 500 --json /tmp/dense.json
//
// Method: after tuning, the best config is re-measured `rounds` times
// interleaved with the references, each in a separate process, so all see
// the same machine state; medians are compared. Each of those measurements,
// ours and every reference's alike, is the median of `remeasure_repeat` (5)
// rounds of at least 0.2 s after a warm-up, in one fresh process (ours: the
// time evaluator's repeats with min_repeat_ms = 200; the references:
// bench/gemm_timing.h with that many rounds).
// OpenBLAS is run as Debian ships it (its own CPU detection) and with
// OPENBLAS_CORETYPE set to the kernel family this CPU supports (its
// detection does not know every CPU model); oneDNN as dnnl_sgemm (weights
// read in their plain layout every call) and as its matmul primitive with the
// weights reordered once into its own layout before the timing (the same
// credit dense_gemm.x86's pack_b=once takes). The fastest is the reference.
// The machine's FMA peak (cpu_fma_peak) is measured in the same run, and the
// trials the tuner needed to reach 95 % of its final best are counted.
//
// --isa avx2 on an AVX-512 machine measures the AVX2 path, ours and the
// references alike (bench::ChooseIsa).
#include <algorithm>
#include <cstdio>
#include <fstream>
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
#include "common/median.h"
#include "local/tune_command.h"
#include "nlohmann/json.hpp"
#include "proto_convert/task_spec.h"
#include "tuner_core/workloads/workload.h"

ABSL_FLAG(std::string, shapes, "1024,1024,1024;512,512,512;16,1024,1024",
          "M,N,K list, ';'-separated");
ABSL_FLAG(std::string, threads, "2,1", "thread counts to run");
ABSL_FLAG(int64_t, trials, 500, "tuning trials per case");
ABSL_FLAG(int32_t, rounds, 5, "interleaved re-measurement rounds (medians)");
ABSL_FLAG(std::string, json, "", "write the figures here as JSON");
ABSL_FLAG(uint64_t, seed, 1, "tuner seed");
ABSL_FLAG(bool, openblas, true, "measure the OpenBLAS reference");
ABSL_FLAG(int32_t, remeasure_number, 1, "time evaluator number for the re-measurement");
ABSL_FLAG(int32_t, remeasure_repeat, 5,
          "rounds per re-measurement, ours (time evaluator repeats) and each reference's "
          "alike; the figure is their median");
ABSL_FLAG(int32_t, remeasure_min_repeat_ms, 200,
          "time evaluator min_repeat_ms for the re-measurement");
ABSL_FLAG(std::string, template_name, "", "dense template to tune (empty: the default)");
ABSL_FLAG(std::string, tuner, "random", "tuner (random, xgb, ga, ...)");
ABSL_FLAG(bool, onednn, true, "measure the oneDNN references (dnnl_sgemm, packed matmul)");
ABSL_FLAG(std::string, isa, "",
          "empty: the host's widest vectors; avx2: ours, the references and the peak limited "
          "to AVX2 (bench/bench_util.h)");

namespace tunefleet {
namespace {

// The first trial (1-based) of the records in `log` whose running best
// reached `fraction` of the best of all; 0 when none succeeded.
int64_t TrialsToReach(const std::string& log, double fraction) {
  std::ifstream in(log);
  std::vector<double> costs;
  std::string line;
  while (std::getline(in, line)) {
    nlohmann::json record = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!record.is_object() || !record.contains("result")) continue;
    const nlohmann::json& result = record["result"];
    double mean = 0;
    if (result[1].get<int>() == 0 && !result[0].empty()) {
      for (const auto& c : result[0]) mean += c.get<double>();
      mean /= result[0].size();
    }
    costs.push_back(mean);
  }
  double best = 0;
  for (double c : costs) best = c > 0 ? std::max(best, 1.0 / c) : best;
  for (size_t i = 0; i < costs.size(); ++i) {
    if (costs[i] > 0 && 1.0 / costs[i] >= fraction * best) return static_cast<int64_t>(i) + 1;
  }
  return 0;
}

// One oneDNN round (mode "sgemm" or "packed") in its own process.
nlohmann::json RunOneDnn(const std::string& mode, int64_t m, int64_t n, int64_t k, int threads) {
  return bench::RunJsonCommand(absl::StrCat(bench::ExeDir(), "/onednn_sgemm ", m, " ", n, " ", k,
                                            " ", threads, " ",
                                            absl::GetFlag(FLAGS_remeasure_repeat), " NK ", mode));
}

// One OpenBLAS round in its own process; returns its JSON.
nlohmann::json RunOpenBlas(const std::string& coretype, int64_t m, int64_t n, int64_t k,
                           int threads) {
  return bench::RunJsonCommand(
      absl::StrCat(coretype.empty() ? "" : absl::StrCat("OPENBLAS_CORETYPE=", coretype, " "),
                   bench::ExeDir(), "/openblas_sgemm ", m, " ", n, " ", k, " ", threads, " ",
                   absl::GetFlag(FLAGS_remeasure_repeat), " NK"));
}

int Main() {
  const absl::StatusOr<bench::IsaChoice> isa_choice = bench::ChooseIsa(absl::GetFlag(FLAGS_isa));
  if (!isa_choice.ok()) {
    std::fprintf(stderr, "%s\n", std::string(isa_choice.status().message()).c_str());
    return 2;
  }
  const bench::IsaChoice& isa = *isa_choice;
  // Under --isa avx2 OpenBLAS runs its Haswell (AVX2) kernels in both runs.
  const std::string coretype =
      isa.openblas_coretype.empty() ? bench::OpenBlasCoreTypeForThisCpu() : isa.openblas_coretype;
  const std::string target = absl::StrCat(HostTargetString(), isa.target_attrs);
  nlohmann::json report = {{"benchmark", "dense"},
                           {"target", target},
                           {"isa", isa.name},
                           {"cases", nlohmann::json::array()}};
  std::vector<std::string> shapes = absl::StrSplit(absl::GetFlag(FLAGS_shapes), ';');
  std::vector<std::string> thread_list = absl::StrSplit(absl::GetFlag(FLAGS_threads), ',');
  std::printf("%-16s %3s %6s | %7s %7s %7s %7s %7s | %5s %5s | %5s %5s | %8s\n", "shape", "thr",
              "trials", "tuned", "openbl", "ob(cor)", "dnnl_sg", "dnnl_pk", "ratio", "r(np)",
              "%peak", "tr95", "pack_b");
  for (const std::string& thread_text : thread_list) {
    const int threads = std::stoi(thread_text);
    const bench::FmaPeak fma_peak = bench::MeasureFmaPeak(threads, 5, isa.peak_isa);
    const nlohmann::json& peak = fma_peak.json;
    const double peak_gflops = fma_peak.gflops;
    for (const std::string& shape : shapes) {
      std::vector<std::string> dims = absl::StrSplit(shape, ',');
      const int64_t m = std::stoll(dims[0]), n = std::stoll(dims[1]), k = std::stoll(dims[2]);
      const std::string template_name = absl::GetFlag(FLAGS_template_name);
      const std::string tuner = absl::GetFlag(FLAGS_tuner);
      proto::JobSpec spec;  // as `tune --shape` makes it, warm from the shipped records
      *spec.mutable_task() = MakeTaskSpec(template_name, "dense",
                                          *WorkloadArgsFromShape("dense", shape, "NK"), target);
      spec.set_tuner(tuner);
      spec.set_n_trial(absl::GetFlag(FLAGS_trials));
      spec.set_seed(absl::GetFlag(FLAGS_seed));
      spec.mutable_measure()->set_cooldown_interval_s(0);
      if (auto parsed = ParseTarget(target); parsed.ok()) {
        spec.set_pretuned_family(parsed->family());
      }
      LocalRunOptions options;
      options.log = absl::StrCat("/tmp/tunefleet_dense_bench_", template_name, "_", tuner, "_",
                                 isa.name, "_", m, "x", n, "x", k, "_t", threads, ".jsonl");
      options.resume = false;
      std::remove(options.log.c_str());
      options.host.runner.num_threads = threads;
      std::ostringstream progress, out;
      auto job = RunTune(spec, options, progress, out);
      const LocalTaskOutcome* summary = job.ok() ? &job->tasks[0] : nullptr;
      if (!job.ok() || summary->best_config.is_null()) {
        std::fprintf(
            stderr, "tuning %s failed: %s\n", shape.c_str(),
            job.ok() ? "no config succeeded" : std::string(job.status().message()).c_str());
        return 1;
      }
      // Re-measure the winner interleaved with the reference.
      auto task =
          Task::Make(template_name, "dense", *WorkloadArgsFromShape("dense", shape, "NK"), target);
      auto config = (*task)->space().FromJson(summary->best_config);
      LocalMeasurerOptions remeasure;
      remeasure.runner.num_threads = threads;
      remeasure.measure.number = absl::GetFlag(FLAGS_remeasure_number);
      remeasure.measure.repeat = absl::GetFlag(FLAGS_remeasure_repeat);
      remeasure.measure.min_repeat_ms = absl::GetFlag(FLAGS_remeasure_min_repeat_ms);
      remeasure.measure.cooldown_interval_s = 0;
      auto measurer = LocalMeasurer::Create(**task, remeasure);
      std::vector<double> ours, ob_default, ob_core, dnnl_sgemm, dnnl_packed;
      std::string dnnl_packed_impl;
      std::string detected_core;
      for (int r = 0; r < absl::GetFlag(FLAGS_rounds); ++r) {
        std::vector<MeasureResult> result = (*measurer)->Measure({*config});
        // The median repeat (costs were trimmed of their min and max when
        // more than 2: the median is unchanged).
        if (result[0].ok()) {
          ours.push_back((*task)->workload().flops() / Median(result[0].costs) / 1e9);
        }
        if (absl::GetFlag(FLAGS_onednn)) {
          nlohmann::json sg = RunOneDnn("sgemm", m, n, k, threads);
          if (sg.contains("gflops")) dnnl_sgemm.push_back(sg["gflops"].get<double>());
          nlohmann::json pk = RunOneDnn("packed", m, n, k, threads);
          if (pk.contains("gflops")) {
            dnnl_packed.push_back(pk["gflops"].get<double>());
            dnnl_packed_impl = pk["impl"].get<std::string>();
          }
        }
        if (!absl::GetFlag(FLAGS_openblas)) continue;
        nlohmann::json d = RunOpenBlas(isa.openblas_coretype, m, n, k, threads);
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
      auto parsed_target = ParseTarget(target);
      for (int b = 0; b < 5; ++b) {
        BuildResult br =
            BuildCandidate((*task)->tmpl(), (*task)->workload(), *config, *parsed_target);
        inst.push_back(br.timings.instantiate_seconds * 1e3);
        lower.push_back(br.timings.lower_seconds * 1e3);
        cg.push_back(br.timings.codegen_seconds * 1e3);
        opt.push_back(br.timings.optimize_seconds * 1e3);
        emit.push_back(br.timings.emit_seconds * 1e3);
        link.push_back(br.timings.link_seconds * 1e3);
        total.push_back(br.timings.total_seconds * 1e3);
      }
      const double tuned = Median(ours);
      // Without packing credit (weights read in their plain layout each call).
      const double reference_unpacked =
          std::max({Median(ob_default), Median(ob_core), Median(dnnl_sgemm)});
      const double reference = std::max(reference_unpacked, Median(dnnl_packed));
      const int64_t trials_to_95 = TrialsToReach(options.log, 0.95);
      std::string pack_b = "call";
      for (const auto& knob : summary->best_config["entity"]) {
        if (knob[0] == "pack_b") pack_b = knob[2].get<std::string>();
        if (knob[0] == "kernel" && knob[2] == "dot") pack_b = "none(dot)";
      }
      const LocalTimings& t = job->timings;
      const double build_median = Median(t.build_seconds_each) * 1e3;
      std::printf(
          "%-16s %3d %6lld | %7.1f %7.1f %7.1f %7.1f %7.1f | %5.2f %5.2f | %4.0f%% %5lld | %8s\n",
          shape.c_str(), threads, static_cast<long long>(job->trials), tuned, Median(ob_default),
          Median(ob_core), Median(dnnl_sgemm), Median(dnnl_packed), tuned / reference,
          tuned / reference_unpacked, peak_gflops > 0 ? 100.0 * tuned / peak_gflops : 0.0,
          static_cast<long long>(trials_to_95), pack_b.c_str());
      std::fflush(stdout);
      report["cases"].push_back({
          {"shape", {m, n, k}},
          {"threads", threads},
          {"trials", job->trials},
          {"tuned_gflops_median", tuned},
          {"tuned_gflops_runs", ours},
          {"tuning_best_gflops", summary->best_gflops()},
          {"openblas_default_gflops", Median(ob_default)},
          {"openblas_default_coretype", detected_core},
          {"openblas_coretype_gflops", Median(ob_core)},
          {"openblas_coretype", coretype},
          {"onednn_sgemm_gflops", Median(dnnl_sgemm)},
          {"onednn_sgemm_runs", dnnl_sgemm},
          {"onednn_packed_matmul_gflops", Median(dnnl_packed)},
          {"onednn_packed_matmul_runs", dnnl_packed},
          {"onednn_packed_matmul_impl", dnnl_packed_impl},
          {"reference_gflops", reference},
          {"ratio_to_openblas", tuned / std::max(Median(ob_default), Median(ob_core))},
          {"reference_without_packing_credit_gflops", reference_unpacked},
          {"ratio_to_best_library", tuned / reference},
          {"ratio_to_best_library_without_packing_credit", tuned / reference_unpacked},
          {"winner_b_packing", pack_b},
          {"fma_peak_gflops", peak_gflops},
          {"fma_peak_isa", peak.value("isa", "")},
          {"fraction_of_fma_peak", peak_gflops > 0 ? tuned / peak_gflops : 0.0},
          {"template", (*task)->tmpl().name()},
          {"tuner", tuner},
          {"trials_to_95pct_of_search_best", trials_to_95},
          {"best_config", summary->best_config},
          {"tuning_wall_seconds", job->wall_seconds},
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
