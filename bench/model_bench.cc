// Tunes the layers of real models with TuneFleet's local mode (what
// `tunefleet tune` runs) and prints, per task, the tuned GFLOPS beside a
// vendor reference measured in the same run at the same thread count:
//
//   resnet18      the distinct conv2d tasks of ResNet-18 (batch 1, 224x224)
//                 vs oneDNN (direct and auto, format_tag::any; the faster)
//   resnet50      the distinct conv2d tasks of ResNet-50 (its 1x1s on 7x7 to
//                 56x56 with up to 2048 channels) vs oneDNN, as resnet18
//   mobilenet_dw  the distinct depthwise convs of MobileNet-v2 vs oneDNN
//   mobilenet_conv the distinct convs of MobileNet-v2 (stem 3x3 and the 1x1s) vs oneDNN
//   batch_matmul  attention-like batch matmuls (B=12: 128x128x64 QK^T and
//                 128x64x128 attention-times-V, B as [N,K]) vs OpenBLAS
//                 cblas_sgemm per batch item, run in its own process as
//                 shipped and with OPENBLAS_CORETYPE for this CPU; the faster
//
//   bazel run -c opt //bench:model_bench -- --json /tmp/model.json
//   bazel run -c opt //bench:model_bench -- --suites resnet18 --tasks 2 --trials 16 --threads 2
//
// Convs use the template's NCHWc layout by default: its layout transforms run
// untimed, as oneDNN's reorders with format_tag::any. --layout NCHW times them.
//
// Figures per task: "tuned" is the best GFLOPS the tuner measured
// (LocalTaskOutcome::best_gflops(), the time evaluator's mean over --repeat repeats
// of --number runs, min and max dropped); the reference is the best of 3
// repeats of at least --min_seconds each. With --remeasure (default) the
// winner is measured again like the reference (3 repeats of at least
// --min_seconds in a fresh runner child, the fastest repeat), in turn with
// the reference for --rounds rounds, each side's figure the median of its
// rounds: that takes the selection bias of "best of N noisy measurements"
// out of the comparison, and a slow spell of the machine falls on both.
// Per suite and thread count: geomean and min of the ratios, the latency
// summed over the model's layers (a task's time times its layer count), and
// where the tuning time went. Every figure is also a share of the fp32 FMA
// peak (cpu_fma_peak, before and after each run) counting only the FMAs that
// read the input, not a conv's zero padding (BenchTask::UsefulShare). A note
// says when other processes used the CPU. --isa avx2: bench::ChooseIsa.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "bench/bench_report.h"
#include "bench/bench_util.h"
#include "bench/model_references.h"
#include "bench/model_suites.h"
#include "local/local_measurer.h"
#include "local/tune_command.h"
#include "nlohmann/json.hpp"
#include "proto_convert/task_spec.h"

ABSL_FLAG(std::string, json, "", "write every figure here as JSON (rewritten after every task)");
ABSL_FLAG(std::string, suites, "resnet18,mobilenet_dw,batch_matmul",
          "suites to run, comma-separated");
ABSL_FLAG(int64_t, trials, 1000, "tuning trials per task");
ABSL_FLAG(std::string, tuner, "xgb", "search strategy (xgb, random, ga, ...)");
ABSL_FLAG(std::string, threads, "2,1",
          "kernel thread counts (TuneFleet and the reference alike), comma-separated");
ABSL_FLAG(uint64_t, seed, 1, "tuner seed");
ABSL_FLAG(std::string, tasks, "",
          "1-based task indices within each suite, comma-separated (empty: all)");
ABSL_FLAG(int64_t, early_stopping, -1,
          "stop a task after this many trials without improvement (<0: off)");
ABSL_FLAG(std::string, log_dir, "",
          "records files go here, <suite>_<threads>t.jsonl (empty: a new temp dir)");
ABSL_FLAG(double, min_seconds, 0.5, "reference timing: each of 3 repeats lasts at least this long");
ABSL_FLAG(std::string, isa, "", "avx2: ours, oneDNN, OpenBLAS and the peak limited to AVX2");
ABSL_FLAG(std::string, layout, "NCHWc",
          "conv layout: NCHWc (layout transforms untimed) or NCHW (timed)");
ABSL_FLAG(int32_t, number, 4, "tuning time evaluator: runs per repeat");
ABSL_FLAG(int32_t, repeat, 3, "tuning time evaluator: repeats");
ABSL_FLAG(int32_t, min_repeat_ms, 0,
          "tuning time evaluator: grow number until a repeat lasts this long");
ABSL_FLAG(int32_t, batch, 8, "configs built in parallel, then measured one by one");
ABSL_FLAG(bool, remeasure, true, "re-measure each winner the way the reference is measured");
ABSL_FLAG(int32_t, rounds, 3, "re-measure rounds, the winner and the reference in turn (medians)");
ABSL_FLAG(bool, reuse_records, false,
          "no new trials: each task's winner is the best record already in --log_dir "
          "(a run's records re-measured against the reference, e.g. on a quiet machine)");

ABSL_FLAG(bool, transfer, false,
          "xgb: warm-start each task's cost model with the records of the suite's tasks tuned "
          "before it in this run (tune --transfer_log; AutoTVM's transfer learning)");

namespace tunefleet {
namespace {

using Json = nlohmann::json;

using bench::BenchTask;
using bench::FmaPeak;
using bench::FractionOfPeak;
using bench::Geomean;
using bench::OtherBusyCores;
using bench::RatioSummary;
using bench::Reference;
using bench::Suite;

// cpu_fma_peak's rounds (median, after its untimed warm-up round).
constexpr int kPeakRounds = 5;

[[nodiscard]] absl::StatusOr<std::set<int>> ParseTaskSubset(const std::string& text) {
  std::set<int> subset;
  for (absl::string_view part : absl::StrSplit(text, ',', absl::SkipWhitespace())) {
    int index = 0;
    if (!absl::SimpleAtoi(part, &index) || index < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("--tasks: \"", part, "\" is not a 1-based task index"));
    }
    subset.insert(index);
  }
  return subset;
}

std::string Plural(int threads) {
  return threads == 1 ? "1 thread" : absl::StrCat(threads, " threads");
}

int Main() {
  const std::string layout = absl::GetFlag(FLAGS_layout);
  if (layout != "NCHWc" && layout != "NCHW") {
    std::fprintf(stderr, "--layout must be NCHWc or NCHW, got \"%s\"\n", layout.c_str());
    return 2;
  }
  absl::StatusOr<std::set<int>> subset = ParseTaskSubset(absl::GetFlag(FLAGS_tasks));
  if (!subset.ok()) {
    std::fprintf(stderr, "%s\n", std::string(subset.status().message()).c_str());
    return 2;
  }
  std::vector<int> thread_list;
  for (absl::string_view part :
       absl::StrSplit(absl::GetFlag(FLAGS_threads), ',', absl::SkipWhitespace())) {
    int threads = 0;
    if (!absl::SimpleAtoi(part, &threads) || threads < 1) {
      std::fprintf(stderr, "--threads: \"%s\" is not a positive thread count\n",
                   std::string(part).c_str());
      return 2;
    }
    thread_list.push_back(threads);
  }
  std::vector<Suite> suites;
  for (absl::string_view name :
       absl::StrSplit(absl::GetFlag(FLAGS_suites), ',', absl::SkipWhitespace())) {
    absl::StatusOr<Suite> suite = bench::NamedSuite(name, layout);
    if (!suite.ok()) {
      std::fprintf(stderr, "%s\n", std::string(suite.status().message()).c_str());
      return 2;
    }
    suites.push_back(*std::move(suite));
  }
  for (const Suite& suite : suites) {
    for (int index : *subset) {
      if (index > static_cast<int>(suite.tasks.size())) {
        std::fprintf(stderr, "--tasks: %s has %d tasks, no task %d\n", suite.name.c_str(),
                     static_cast<int>(suite.tasks.size()), index);
        return 2;
      }
    }
  }
  std::string log_dir = absl::GetFlag(FLAGS_log_dir);
  if (absl::GetFlag(FLAGS_reuse_records) && log_dir.empty()) {
    std::fprintf(stderr, "--reuse_records needs --log_dir (the directory of an earlier run)\n");
    return 2;
  }
  if (!log_dir.empty()) {
    std::error_code error;
    std::filesystem::create_directories(log_dir, error);
    if (error) {
      std::fprintf(stderr, "--log_dir %s: %s\n", log_dir.c_str(), error.message().c_str());
      return 1;
    }
  } else {
    char dir_template[] = "/tmp/tunefleet_model_bench_XXXXXX";
    if (mkdtemp(dir_template) == nullptr) {
      std::perror("mkdtemp");
      return 1;
    }
    log_dir = dir_template;
  }

  const absl::StatusOr<bench::IsaChoice> isa = bench::ChooseIsa(absl::GetFlag(FLAGS_isa));
  if (!isa.ok()) return std::fprintf(stderr, "%s\n", isa.status().ToString().c_str()), 2;
  if (absl::GetFlag(FLAGS_rounds) < 1) return std::fprintf(stderr, "--rounds must be >= 1\n"), 2;
  const std::string coretype =
      isa->openblas_coretype.empty() ? bench::OpenBlasCoreTypeForThisCpu() : isa->openblas_coretype;
  const std::string target = HostTargetString() + isa->target_attrs;
  const bool show_progress = isatty(2);
  const std::string json_path = absl::GetFlag(FLAGS_json);
  Json report = {
      {"benchmark", "model"},
      {"target", target},
      {"isa", isa->name},
      {"layout", layout},
      {"layout_note",
       layout == "NCHWc"
           ? "conv layout transforms (input blocking, weight packing, output unblocking) untimed, "
             "like oneDNN's reorders with format_tag::any"
           : "conv layout transforms timed with the kernel (oneDNN's reorders are not)"},
      {"settings",
       {{"trials", absl::GetFlag(FLAGS_trials)},
        {"tuner", absl::GetFlag(FLAGS_tuner)},
        {"seed", absl::GetFlag(FLAGS_seed)},
        {"early_stopping", absl::GetFlag(FLAGS_early_stopping)},
        {"batch", absl::GetFlag(FLAGS_batch)},
        {"threads", thread_list},
        {"tasks", absl::GetFlag(FLAGS_tasks)},
        {"measure",
         {{"number", absl::GetFlag(FLAGS_number)},
          {"repeat", absl::GetFlag(FLAGS_repeat)},
          {"min_repeat_ms", absl::GetFlag(FLAGS_min_repeat_ms)},
          {"cooldown_interval_s", 0}}},
        {"reference_min_seconds", absl::GetFlag(FLAGS_min_seconds)},
        {"remeasure", absl::GetFlag(FLAGS_remeasure)},
        {"reuse_records", absl::GetFlag(FLAGS_reuse_records)},
        {"transfer", absl::GetFlag(FLAGS_transfer) && !absl::GetFlag(FLAGS_reuse_records)},
        {"openblas_coretype", coretype},
        {"log_dir", log_dir}}},
      {"runs", Json::array()}};
  auto write_report = [&] { bench::WriteJsonReport(json_path, report).IgnoreError(); };
  const std::string trials_text =
      absl::GetFlag(FLAGS_reuse_records)
          ? std::string("no new trials (winners from the records)")
          : absl::StrCat(absl::GetFlag(FLAGS_trials), " trials per task");
  std::printf("model_bench: target \"%s\", conv layout %s, tuner %s, %s, records in %s\n",
              target.c_str(), layout.c_str(), absl::GetFlag(FLAGS_tuner).c_str(),
              trials_text.c_str(), log_dir.c_str());

  for (const Suite& suite : suites) {
    if (!suite.skipped.empty()) std::printf("%s\n", bench::SkippedTasksNote(suite).c_str());
    for (int threads : thread_list) {
      const std::string prefix = absl::StrFormat("[%s %s]", suite.name, Plural(threads));
      const std::string log = absl::StrFormat("%s/%s_%dt.jsonl", log_dir, suite.name, threads);
      if (!absl::GetFlag(FLAGS_reuse_records)) std::remove(log.c_str());
      // Measured before the tasks (and again after them): the share of the
      // machine's peak a figure reaches, with the peak of the same run.
      const FmaPeak peak = bench::MeasureFmaPeak(threads, kPeakRounds, isa->peak_isa);
      if (peak.gflops > 0) {
        std::printf(
            "%s FMA peak %.1f GFLOPS (%s, cpu_fma_peak in this run): %%peak is a share of it\n",
            prefix.c_str(), peak.gflops, peak.isa.c_str());
      } else {
        std::printf("%s FMA peak not measured (%s): no %%peak figures\n", prefix.c_str(),
                    peak.json.dump().c_str());
      }
      auto peak_text = [&](double fraction) {
        return peak.gflops > 0 ? absl::StrFormat(" (%.1f%% peak)", 100 * fraction) : std::string();
      };
      Json run = {{"suite", suite.name},
                  {"model", suite.model},
                  {"threads", threads},
                  {"reference", suite.reference},
                  {"log", log},
                  {"tasks", Json::array()},
                  {"skipped_tasks", suite.skipped},
                  {"fma_peak", {{"start", peak.json}}},
                  {"other_busy_cores_at_start", OtherBusyCores()}};
      report["runs"].push_back(run);
      Json& run_json = report["runs"].back();
      std::vector<double> ratios, remeasured_ratios;
      std::vector<int> ratio_indices, remeasured_indices;
      std::vector<std::string> ratio_labels, remeasured_labels;
      double tuned_latency = 0, reference_latency = 0, remeasured_latency = 0;
      double compared_flops = 0;  // over the model's layers, of the tasks compared
      std::vector<double> tuned_fractions, reference_fractions, remeasured_fractions;
      bool latency_complete = true, remeasured_complete = absl::GetFlag(FLAGS_remeasure);
      double flops_share = 0;
      double wall = 0, build = 0, measure = 0, model = 0, remeasure_wall = 0;
      int64_t trials = 0;
      const int total = static_cast<int>(suite.tasks.size());
      for (int i = 0; i < total; ++i) {
        if (!subset->empty() && !subset->count(i + 1)) continue;
        const BenchTask& t = suite.tasks[i];
        proto::JobSpec spec;  // as `tune --args` makes it, warm from the shipped records
        *spec.mutable_task() = MakeTaskSpec("", t.workload, t.args, target);
        spec.set_tuner(absl::GetFlag(FLAGS_tuner));
        spec.set_n_trial(absl::GetFlag(FLAGS_reuse_records) ? 0 : absl::GetFlag(FLAGS_trials));
        spec.set_early_stopping(absl::GetFlag(FLAGS_early_stopping));
        spec.set_window(absl::GetFlag(FLAGS_batch));
        spec.set_seed(absl::GetFlag(FLAGS_seed));
        spec.mutable_measure()->set_number(absl::GetFlag(FLAGS_number));
        spec.mutable_measure()->set_repeat(absl::GetFlag(FLAGS_repeat));
        spec.mutable_measure()->set_min_repeat_ms(absl::GetFlag(FLAGS_min_repeat_ms));
        spec.mutable_measure()->set_cooldown_interval_s(0);
        if (absl::StatusOr<TargetSpec> parsed = ParseTarget(target); parsed.ok()) {
          spec.set_pretuned_family(parsed->family());
        }
        LocalRunOptions options;
        options.log = log;
        options.resume = absl::GetFlag(FLAGS_reuse_records);
        // The tasks before this one left their records in `log`.
        if (absl::GetFlag(FLAGS_transfer) && !absl::GetFlag(FLAGS_reuse_records) &&
            std::ifstream(log).peek() != std::ifstream::traits_type::eof()) {
          options.transfer_log = log;
        }
        options.label = absl::StrFormat("%s task %d/%d", prefix, i + 1, total);
        options.host.runner.num_threads = threads;
        std::ostringstream discarded, out;
        absl::StatusOr<LocalJobSummary> job = RunTune(
            spec, options, show_progress ? static_cast<std::ostream&>(std::cerr) : discarded, out);
        const LocalTaskOutcome* summary = job.ok() ? &job->tasks[0] : nullptr;
        const std::string text = out.str();
        if (const size_t at = text.find("Transfer: "); at != std::string::npos) {
          std::printf("%s task %d/%d %s\n", prefix.c_str(), i + 1, total,
                      text.substr(at, text.find('\n', at) - at).c_str());
        }
        Json task_json = {{"index", i + 1},
                          {"label", t.label},
                          {"workload", t.workload},
                          {"args", t.args},
                          {"num_layers", t.num_layers},
                          {"flops", t.flops},
                          {"flops_share", t.flops_share}};
        if (!job.ok() || summary->best_config.is_null()) {
          const std::string why =
              job.ok() ? "no config succeeded" : std::string(job.status().message());
          std::printf("%s task %d/%d %s tuning failed: %s\n", prefix.c_str(), i + 1, total,
                      t.label.c_str(), why.c_str());
          task_json["error"] = why;
          latency_complete = remeasured_complete = false;
          if (job.ok()) {
            wall += job->wall_seconds;
            build += job->timings.build_wall_seconds;
            measure += job->timings.measure_wall_seconds;
            model += summary->model.total_seconds();
            trials += job->trials;
          }
          run_json["tasks"].push_back(task_json);
          write_report();
          continue;
        }
        wall += job->wall_seconds;
        build += job->timings.build_wall_seconds;
        measure += job->timings.measure_wall_seconds;
        model += summary->model.total_seconds();
        trials += job->trials;
        flops_share += t.flops_share;

        // The winner and the reference in turn, --rounds times (medians).
        const double min_seconds = absl::GetFlag(FLAGS_min_seconds);
        const auto start = std::chrono::steady_clock::now();
        std::function<double(std::string*)> ours;
        if (absl::GetFlag(FLAGS_remeasure)) {
          ours = [&](std::string* error) {
            return bench::RemeasureWinner(t, target, summary->best_config, threads, min_seconds,
                                          error);
          };
        }
        const bench::Interleaved m = bench::MeasureInterleaved(
            ours,
            [&] {
              return suite.reference == "oneDNN"
                         ? bench::OneDnnReference(t, threads, min_seconds)
                         : bench::OpenBlasReference(t, threads, coretype, min_seconds);
            },
            absl::GetFlag(FLAGS_remeasure) ? absl::GetFlag(FLAGS_rounds) : 1);
        remeasure_wall +=
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        const double remeasured_seconds = m.ours_seconds;
        const std::string& remeasure_error = m.ours_error;
        const Reference& ref = m.reference;

        const double tuned_gflops = summary->best_gflops();
        // Of the peak: the FMAs that read the input (BenchTask::UsefulShare).
        auto share = [&](double gflops) { return FractionOfPeak(gflops * t.UsefulShare(), peak); };
        const double ref_gflops = ref.seconds > 0 ? t.flops / ref.seconds / 1e9 : 0;
        const double remeasured_gflops =
            remeasured_seconds > 0 ? t.flops / remeasured_seconds / 1e9 : 0;
        std::string line =
            absl::StrFormat("%s task %d/%d %s tuned %.1f GFLOPS%s", prefix, i + 1, total, t.label,
                            tuned_gflops, peak_text(share(tuned_gflops)));
        task_json["fma_peak_gflops"] = peak.gflops;
        task_json["fma_peak_isa"] = peak.isa;
        task_json["useful_flops_share"] = t.UsefulShare();  // what the peak shares count
        task_json["fraction_of_fma_peak"] = share(tuned_gflops);
        if (ref.seconds > 0) {  // the geomeans compare the same tasks
          tuned_fractions.push_back(share(tuned_gflops));
          const double ratio = tuned_gflops / ref_gflops;
          absl::StrAppendFormat(&line, " | %s %.1f GFLOPS%s (%s) | %.2fx", suite.reference,
                                ref_gflops, peak_text(share(ref_gflops)), ref.detail, ratio);
          reference_fractions.push_back(share(ref_gflops));
          compared_flops += t.flops * t.UsefulShare() * t.num_layers;  // for the peak share
          ratios.push_back(ratio);
          ratio_indices.push_back(i + 1);
          ratio_labels.push_back(t.label);
          task_json["ratio"] = ratio;
          tuned_latency += summary->best_cost_s * t.num_layers;
          reference_latency += ref.seconds * t.num_layers;
        } else {
          absl::StrAppendFormat(&line, " | %s failed: %s", suite.reference, ref.detail);
          latency_complete = remeasured_complete = false;
        }
        if (absl::GetFlag(FLAGS_remeasure)) {
          if (remeasured_seconds > 0) {
            absl::StrAppendFormat(&line, " | re-measured %.1f GFLOPS%s", remeasured_gflops,
                                  peak_text(share(remeasured_gflops)));
            if (ref.seconds > 0) {
              remeasured_fractions.push_back(share(remeasured_gflops));
              const double ratio = remeasured_gflops / ref_gflops;
              absl::StrAppendFormat(&line, " %.2fx", ratio);
              remeasured_ratios.push_back(ratio);
              remeasured_indices.push_back(i + 1);
              remeasured_labels.push_back(t.label);
              task_json["remeasured_ratio"] = ratio;
              remeasured_latency += remeasured_seconds * t.num_layers;
            }
          } else {
            absl::StrAppendFormat(&line, " | re-measure failed: %s", remeasure_error);
            remeasured_complete = false;
          }
        }
        std::printf("%s\n", line.c_str());
        std::fflush(stdout);

        task_json["workload_text"] = summary->workload;
        task_json["task_name"] = summary->template_name;
        task_json["trials"] = job->trials;
        task_json["refused_before_measuring"] = summary->refused_before_measuring;
        task_json["tuned_gflops"] = tuned_gflops;
        task_json["tuned_seconds"] = summary->best_cost_s;
        task_json["best_config"] = summary->best_config;
        if (absl::GetFlag(FLAGS_remeasure)) {
          task_json["remeasured"] = remeasured_seconds > 0
                                        ? Json{{"seconds", remeasured_seconds},
                                               {"rounds_seconds", m.ours_rounds},
                                               {"failed_rounds", m.ours_failed_rounds},
                                               {"gflops", remeasured_gflops},
                                               {"fraction_of_fma_peak", share(remeasured_gflops)}}
                                        : Json{{"error", remeasure_error}};
        }
        task_json["reference"] = ref.json;
        task_json["reference"]["name"] = suite.reference;
        if (ref.seconds > 0) {
          task_json["reference"]["gflops"] = ref_gflops;  // of the median
          task_json["reference"]["fraction_of_fma_peak"] = share(ref_gflops);
        }
        const LocalTimings& lt = job->timings;
        task_json["tuning_time"] = {
            {"wall_seconds", job->wall_seconds},
            {"build_wall_seconds", lt.build_wall_seconds},
            {"measure_wall_seconds", lt.measure_wall_seconds},
            {"model_seconds", summary->model.total_seconds()},
            {"other_seconds", job->wall_seconds - lt.build_wall_seconds - lt.measure_wall_seconds},
            {"kernel_run_seconds", lt.run_seconds},
            {"check_seconds", lt.check_seconds},
            {"prepare_seconds", lt.prepare_seconds},
            {"built", lt.built}};
        run_json["tasks"].push_back(task_json);
        write_report();
      }

      const double other = wall - build - measure;
      Json summary_json = RatioSummary(ratios, ratio_indices, ratio_labels);
      summary_json["flops_share_compared"] = flops_share;
      summary_json["latency_complete"] = latency_complete;
      summary_json["tuned_latency_seconds"] = tuned_latency;
      summary_json["reference_latency_seconds"] = reference_latency;
      if (absl::GetFlag(FLAGS_remeasure)) {
        summary_json["remeasured"] =
            RatioSummary(remeasured_ratios, remeasured_indices, remeasured_labels);
        summary_json["remeasured"]["latency_seconds"] = remeasured_latency;
        summary_json["remeasured"]["latency_complete"] = remeasured_complete;
      }
      // Geomeans over the tasks each figure exists for; "latency_weighted":
      // the compared tasks' FLOPs over the model's layers divided by their
      // summed latency, as a share of the peak (what the layers reach in all).
      Json peak_summary = {{"fma_peak_gflops", peak.gflops},
                           {"fma_peak_isa", peak.isa},
                           {"tuned_geomean", Geomean(tuned_fractions)},
                           {"reference_geomean", Geomean(reference_fractions)}};
      if (tuned_latency > 0 && reference_latency > 0) {
        peak_summary["tuned_latency_weighted"] =
            FractionOfPeak(compared_flops / tuned_latency / 1e9, peak);
        peak_summary["reference_latency_weighted"] =
            FractionOfPeak(compared_flops / reference_latency / 1e9, peak);
      }
      if (absl::GetFlag(FLAGS_remeasure))
        peak_summary["remeasured_geomean"] = Geomean(remeasured_fractions);
      summary_json["fraction_of_fma_peak"] = peak_summary;
      run_json["summary"] = summary_json;
      run_json["tuning_time"] = {
          {"trials", trials},
          {"wall_seconds", wall},
          {"build_wall_seconds", build},
          {"measure_wall_seconds", measure},
          {"model_seconds", model},
          {"other_seconds", other},
          {"note",
           "other = wall - build - measure: the tuner's own time (model_seconds is part of it) and "
           "the rest of the loop"},
          {"remeasure_and_reference_wall_seconds", remeasure_wall}};
      write_report();

      if (!ratios.empty()) {
        std::printf("%s summary: %d task(s); tuned/%s geomean %.2fx, min %.2fx (task %d)",
                    prefix.c_str(), static_cast<int>(ratios.size()), suite.reference.c_str(),
                    Geomean(ratios), summary_json["min_ratio"].get<double>(),
                    summary_json["min_ratio_task"].get<int>());
        if (!remeasured_ratios.empty()) {
          std::printf("; re-measured geomean %.2fx, min %.2fx", Geomean(remeasured_ratios),
                      summary_json["remeasured"]["min_ratio"].get<double>());
        }
        std::printf("\n");
        std::printf(
            "%s latency summed over %s: tuned %.3f ms", prefix.c_str(),
            suite.model.empty() ? "the tasks" : absl::StrCat(suite.model, "'s layers").c_str(),
            tuned_latency * 1e3);
        if (!remeasured_ratios.empty())
          std::printf(" (re-measured %.3f ms)", remeasured_latency * 1e3);
        std::printf(" | %s %.3f ms%s\n", suite.reference.c_str(), reference_latency * 1e3,
                    latency_complete ? "" : " (incomplete: some task failed)");
        if (flops_share > 0) {
          std::printf("%s tasks compared cover %.1f%% of %s's FLOPs\n", prefix.c_str(),
                      100 * flops_share, suite.model.c_str());
        }
      } else {
        std::printf("%s summary: no task compared\n", prefix.c_str());
      }
      if (peak.gflops > 0 && !tuned_fractions.empty()) {
        std::printf("%s share of the %.1f GFLOPS FMA peak (geomean): tuned %.1f%%", prefix.c_str(),
                    peak.gflops, 100 * Geomean(tuned_fractions));
        if (!remeasured_fractions.empty())
          std::printf(" (re-measured %.1f%%)", 100 * Geomean(remeasured_fractions));
        if (!reference_fractions.empty()) {
          std::printf(" | %s %.1f%%", suite.reference.c_str(), 100 * Geomean(reference_fractions));
        }
        std::printf("\n");
      }
      std::printf(
          "%s tuning time: %.1f s wall for %lld trials = build %.1f s + measure %.1f s + other "
          "%.1f s "
          "(of which model %.1f s); re-measure and reference %.1f s\n",
          prefix.c_str(), wall, static_cast<long long>(trials), build, measure, other, model,
          remeasure_wall);
      const FmaPeak peak_at_end = bench::MeasureFmaPeak(threads, kPeakRounds, isa->peak_isa);
      run_json["fma_peak"]["end"] = peak_at_end.json;
      if (peak.gflops > 0 && peak_at_end.gflops > 0) {
        const double drift = peak_at_end.gflops / peak.gflops - 1;
        run_json["fma_peak"]["end_vs_start"] = drift;
        std::printf("%s FMA peak %.1f GFLOPS at start, %.1f at end (%+.1f%%)%s\n", prefix.c_str(),
                    peak.gflops, peak_at_end.gflops, 100 * drift,
                    std::abs(drift) > 0.05 ? ": the machine changed during the run, %peak is "
                                             "uncertain by as much"
                                           : "");
      }
      run_json["other_busy_cores_at_end"] = OtherBusyCores();
      const double other_busy = std::max(run_json["other_busy_cores_at_start"].get<double>(),
                                         run_json["other_busy_cores_at_end"].get<double>());
      if (other_busy > 0.2) {
        std::printf("%s note: other work kept %.1f of %u CPUs busy; these timings are skewed\n",
                    prefix.c_str(), other_busy, std::thread::hardware_concurrency());
      }
      write_report();
      std::fflush(stdout);
    }
  }
  if (!json_path.empty()) std::printf("wrote %s\n", json_path.c_str());
  return 0;
}

}  // namespace
}  // namespace tunefleet

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "model_bench [--suites resnet18,mobilenet_dw,batch_matmul] [--threads 2,1] [--trials 1000] "
      "[--tasks 1,3] [--layout NCHWc|NCHW] [--json PATH]");
  absl::ParseCommandLine(argc, argv);
  return tunefleet::Main();
}
