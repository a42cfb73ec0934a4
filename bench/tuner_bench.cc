// Tuning curves of the search strategies on real dense kernels: random,
// genetic and XGBoost (+ transfer learning), side by side.
//
//   bazel run -c opt //bench:tuner_bench -- --json /tmp/tuner.json --png /tmp/tuner.png
//
// For each shape: a reference run of --random_trials random configs gives
// the "best random GFLOPS"; then every tuner runs --trials trials for each of
// --seeds seeds, and we report the trials each needs to reach 90% and 95% of
// the reference, and the model's share of the run time (fit + selection
// against the measured build + run time of its trials). Transfer: XGBoost on
// --transfer_shape for --transfer_seeds seeds, cold and warm-started with the
// other shapes' tuning logs (every config this invocation tried on them).
//
// Measurements are memoised: each distinct (shape, config) is built and
// measured once (and appended to --cache, so a later run reuses it); every
// tuner and seed replays the same measured costs. A config's time share is
// its batch's build + measure wall time divided by the batch size.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/flags/flag.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "bench/bench_main.h"
#include "bench/bench_report.h"
#include "bench/feature_speed.h"
#include "bench/memoizing_measurer.h"
#include "common/status_macros.h"
#include "local/local_measurer.h"
#include "nlohmann/json.hpp"
#include "tuner_core/models/model_zoo.h"
#include "tuner_core/records/record_file.h"
#include "tuner_core/records/task_record.h"
#include "tuner_core/tuners/tuner_factory.h"
#include "tuner_core/tuners/xgb_tuner.h"
#include "tuner_core/workloads/workload.h"

ABSL_FLAG(
    std::string, shapes, "1024,1024,1024;16,1024,1024;1,1000,512",
    "';'-separated tasks: M,N,K for dense, bmm:B,M,N,K for batch_matmul, or MODEL#I for task I "
    "(1-based) of a model, e.g. resnet-18#2");
ABSL_FLAG(std::string, tuners, "random,ga,xgb",
          "tuners to compare (any of random, ga, xgb, xgb_rank, ...)");
ABSL_FLAG(int64_t, trials, 200, "trials per tuner run");
ABSL_FLAG(int64_t, random_trials, 1000, "trials of the random reference run per shape");
ABSL_FLAG(int32_t, seeds, 3, "seeds per tuner (1..seeds)");
ABSL_FLAG(std::string, transfer_shape, "512,512,512",
          "new shape tuned cold and with the other shapes' records (empty: skip transfer)");
ABSL_FLAG(int32_t, transfer_seeds, 5, "seeds of the transfer comparison (cold and warm each)");
ABSL_FLAG(int32_t, plan_size, 64, "xgb plan size");
ABSL_FLAG(int32_t, sa_iter, -1,
          "xgb: simulated annealing steps per selection (-1: the tuner's default)");
ABSL_FLAG(int32_t, sa_early_stop, -1,
          "xgb: SA stops after this many steps without a new top config (-1: default)");
ABSL_FLAG(int32_t, sa_chains, -1, "xgb: parallel SA chains (-1: default)");
ABSL_FLAG(int32_t, sa_seeds, -1,
          "xgb: SA chains seeded at the best measured configs (-1: default; 0: none)");
ABSL_FLAG(int32_t, feature_threads, 0, "xgb: feature threads (0: the tuner's default)");
ABSL_FLAG(int32_t, ga_pop, 100, "ga population");
ABSL_FLAG(int32_t, batch, 8, "configs per measure batch");
ABSL_FLAG(int32_t, threads, 2, "kernel threads");
ABSL_FLAG(int32_t, number, 2, "time evaluator number");
ABSL_FLAG(int32_t, repeat, 3, "time evaluator repeat");
ABSL_FLAG(int32_t, min_repeat_ms, 30, "time evaluator min_repeat_ms");
ABSL_FLAG(std::string, cache, "/tmp/tunefleet_tuner_bench_cache.jsonl",
          "measured records, reused by later runs (delete it to measure afresh)");
ABSL_FLAG(std::string, json, "", "write the figures here as JSON (rewritten after every run)");
ABSL_FLAG(std::string, png, "", "write the tuning curves here (needs gnuplot)");

namespace tunefleet {
namespace {

using Json = nlohmann::json;

struct Shape {
  std::string text;
  std::unique_ptr<Task> task;
  std::unique_ptr<MemoizingMeasurer> measurer;
  std::set<int64_t> tried;  // configs some run of this invocation measured: the shape's tuning log
};

struct RunResult {
  std::vector<double> curve;  // best GFLOPS after each trial
  std::vector<XgbTuner::HistoryShapeReport>
      history;  // xgb with history: the shapes' weights at the end
  double model_seconds = 0, fit_seconds = 0, select_seconds = 0, feature_seconds = 0;
  double measure_equivalent_seconds = 0;  // sum of the trials' build + measure shares
  double wall_seconds = 0;
  int64_t fits = 0;
};

// "M,N,K" (dense, layout NK), "bmm:B,M,N,K" (batch_matmul, layout NK) or
// "MODEL#I" (the model's I-th task, 1-based).
[[nodiscard]] absl::StatusOr<std::unique_ptr<Task>> MakeBenchTask(const std::string& text,
                                                                  const std::string& target) {
  if (const size_t hash = text.find('#'); hash != std::string::npos) {
    const std::string model = text.substr(0, hash);
    int index = 0;
    if (!absl::SimpleAtoi(text.substr(hash + 1), &index)) {
      return absl::InvalidArgumentError(absl::StrCat("task number in \"", text, "\""));
    }
    TF_ASSIGN_OR_RETURN(std::vector<ModelTask> tasks, ModelTasks(model));
    if (index < 1 || index > static_cast<int>(tasks.size())) {
      return absl::InvalidArgumentError(
          absl::StrCat(model, " has tasks 1..", tasks.size(), ", not ", index));
    }
    return Task::Make("", tasks[index - 1].workload, tasks[index - 1].args, target);
  }
  if (text.rfind("bmm:", 0) == 0) {
    TF_ASSIGN_OR_RETURN(Json args, WorkloadArgsFromShape("batch_matmul", text.substr(4), "NK"));
    return Task::Make("", "batch_matmul", args, target);
  }
  TF_ASSIGN_OR_RETURN(Json args, WorkloadArgsFromShape("dense", text, "NK"));
  return Task::Make("", "dense", args, target);
}

double Gflops(const Task& task, const MeasureResult& r) {
  return r.ok() && r.MeanCost() > 0 ? task.workload().flops() / r.MeanCost() / 1e9 : 0;
}

RunResult RunTuner(const std::string& name, Shape& shape, uint64_t seed, int64_t trials,
                   const std::vector<Record>& history) {
  TunerOptions options;
  options.seed = seed;
  options.task = shape.task.get();
  options.history = history;
  options.xgb.plan_size = absl::GetFlag(FLAGS_plan_size);
  if (absl::GetFlag(FLAGS_sa_iter) >= 0) options.xgb.sa.n_iter = absl::GetFlag(FLAGS_sa_iter);
  if (absl::GetFlag(FLAGS_sa_early_stop) > 0)
    options.xgb.sa.early_stop = absl::GetFlag(FLAGS_sa_early_stop);
  if (absl::GetFlag(FLAGS_sa_chains) > 0)
    options.xgb.sa.parallel_size = absl::GetFlag(FLAGS_sa_chains);
  options.xgb.feature_threads = absl::GetFlag(FLAGS_feature_threads);
  if (absl::GetFlag(FLAGS_sa_seeds) >= 0) options.xgb.sa_seeds = absl::GetFlag(FLAGS_sa_seeds);
  options.ga.pop_size = absl::GetFlag(FLAGS_ga_pop);
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::unique_ptr<Tuner>> tuner = MakeTuner(name, shape.task->space(), options);
  if (!tuner.ok()) {
    std::fprintf(stderr, "tuner %s: %s\n", name.c_str(),
                 std::string(tuner.status().message()).c_str());
    std::exit(1);
  }
  RunResult run;
  double best = 0;
  TuneCallback record = [&](const std::vector<TrialResult>& batch) {
    for (const TrialResult& t : batch) {
      shape.tried.insert(t.config.index());
      best = std::max(best, Gflops(*shape.task, t.result));
      run.curve.push_back(best);
      run.measure_equivalent_seconds += t.result.all_cost;
    }
  };
  TuneOptions tune;
  tune.n_trial = trials;
  tune.batch_size = absl::GetFlag(FLAGS_batch);
  tune.flops = shape.task->workload().flops();
  tune.show_progress = false;
  absl::Status status = (*tuner)->Tune(*shape.measurer, tune, {record});
  if (!status.ok()) {
    std::fprintf(stderr, "tuning %s: %s\n", name.c_str(), std::string(status.message()).c_str());
    std::exit(1);
  }
  run.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (auto* xgb = dynamic_cast<XgbTuner*>(tuner->get())) {
    const ModelTimings& m = xgb->model_timings();
    run.model_seconds = m.total_seconds();
    run.fit_seconds = m.fit_seconds;
    run.select_seconds = m.select_seconds;
    run.feature_seconds = m.feature_seconds;
    run.fits = m.fits;
    run.history = xgb->history_shapes();
    if (!xgb->model_status().ok()) {
      std::fprintf(stderr, "warning: %s model: %s\n", name.c_str(),
                   std::string(xgb->model_status().message()).c_str());
    }
  }
  return run;
}

// The xgb tuner's SA settings in effect (defaults with the flags applied).
Json XgbSaJson() {
  XgbTunerOptions xgb;
  const int iter = absl::GetFlag(FLAGS_sa_iter), stop = absl::GetFlag(FLAGS_sa_early_stop),
            chains = absl::GetFlag(FLAGS_sa_chains), seeds = absl::GetFlag(FLAGS_sa_seeds);
  return {{"n_iter", iter >= 0 ? iter : xgb.sa.n_iter},
          {"early_stop", stop > 0 ? stop : xgb.sa.early_stop},
          {"parallel_size", chains > 0 ? chains : xgb.sa.parallel_size},
          {"sa_seeds", seeds >= 0 ? seeds : xgb.sa_seeds}};
}

// 1-based trial at which the curve first reaches `target`; 0 if never.
int64_t TrialsTo(const std::vector<double>& curve, double target) {
  for (size_t i = 0; i < curve.size(); ++i) {
    if (curve[i] >= target) return static_cast<int64_t>(i) + 1;
  }
  return 0;
}

// Mean of the reached values, and how many reached.
Json Reach(const std::vector<RunResult>& runs, double target) {
  std::vector<int64_t> reached;
  for (const RunResult& r : runs) {
    if (int64_t t = TrialsTo(r.curve, target); t > 0) reached.push_back(t);
  }
  Json j = {{"reached", reached.size()}, {"runs", runs.size()}, {"trials", reached}};
  if (!reached.empty()) {
    double sum = 0;
    for (int64_t t : reached) sum += t;
    j["mean_trials"] = sum / reached.size();
  } else {
    j["mean_trials"] = nullptr;
  }
  return j;
}

std::vector<double> MeanCurve(const std::vector<RunResult>& runs) {
  size_t length = 0;
  for (const RunResult& r : runs) length = std::max(length, r.curve.size());
  std::vector<double> mean(length, 0);
  for (size_t i = 0; i < length; ++i) {
    for (const RunResult& r : runs)
      mean[i] += r.curve.empty() ? 0 : r.curve[std::min(i, r.curve.size() - 1)];
    mean[i] /= runs.size();
  }
  return mean;
}

std::string ReachText(const Json& j) {
  if (j["mean_trials"].is_null()) return absl::StrFormat("never (0/%d)", j["runs"].get<int>());
  return absl::StrFormat("%.0f (%d/%d)", j["mean_trials"].get<double>(), j["reached"].get<int>(),
                         j["runs"].get<int>());
}

// One panel of the PNG: mean curves per series, plus the 95% line.
struct Panel {
  std::string title;
  std::vector<std::string> series;
  std::vector<std::vector<double>> curves;
  double reference95 = 0;
};

void WritePng(const std::string& png, const std::vector<Panel>& panels) {
  if (png.empty() || panels.empty()) return;
  const std::string script_path = png + ".gp";
  std::ofstream script(script_path);
  const int cols = panels.size() > 1 ? 2 : 1, rows = (static_cast<int>(panels.size()) + 1) / 2;
  script << "set terminal png noenhanced size " << 640 * cols << "," << 420 * rows << "\n"
         << "set output '" << png << "'\n"
         << "set multiplot layout " << rows << "," << cols << "\n"
         << "set key bottom right\nset grid\nset xlabel 'trials'\nset ylabel 'best GFLOPS'\n";
  for (size_t p = 0; p < panels.size(); ++p) {
    const Panel& panel = panels[p];
    const std::string data = absl::StrCat(png, ".panel", p, ".dat");
    std::ofstream out(data);
    size_t length = 0;
    for (const auto& c : panel.curves) length = std::max(length, c.size());
    for (size_t i = 0; i < length; ++i) {
      out << i + 1;
      for (const auto& c : panel.curves)
        out << " " << (i < c.size() ? c[i] : c.empty() ? 0 : c.back());
      out << "\n";
    }
    script << "set title '" << panel.title << "'\nplot ";
    for (size_t s = 0; s < panel.series.size(); ++s) {
      script << "'" << data << "' using 1:" << s + 2 << " with lines lw 2 title '"
             << panel.series[s] << "', ";
    }
    script << panel.reference95 << " with lines dt 2 lc rgb 'gray' title '95% of best random'\n";
  }
  script << "unset multiplot\n";
  script.close();
  const int rc = std::system(absl::StrCat("gnuplot '", script_path, "' 2>&1").c_str());
  if (rc != 0) {
    std::printf(
        "PNG not written: gnuplot failed or is missing (apt-get install gnuplot-nox); script: %s\n",
        script_path.c_str());
  } else {
    std::printf("PNG: %s (gnuplot script %s)\n", png.c_str(), script_path.c_str());
  }
}

int Main() {
  LocalMeasurerOptions measure;
  measure.runner.num_threads = absl::GetFlag(FLAGS_threads);
  measure.measure.number = absl::GetFlag(FLAGS_number);
  measure.measure.repeat = absl::GetFlag(FLAGS_repeat);
  measure.measure.min_repeat_ms = absl::GetFlag(FLAGS_min_repeat_ms);
  measure.measure.cooldown_interval_s = 0;
  const std::string target = HostTargetString();
  const std::string cache_path = absl::GetFlag(FLAGS_cache);
  const int64_t trials = absl::GetFlag(FLAGS_trials),
                random_trials = absl::GetFlag(FLAGS_random_trials);
  const int seeds = absl::GetFlag(FLAGS_seeds);
  const std::vector<std::string> tuner_names =
      absl::StrSplit(absl::GetFlag(FLAGS_tuners), ',', absl::SkipEmpty());

  // Earlier measurements, keyed by workload args.
  std::map<std::string, std::vector<Record>> cached_by_args;
  int64_t cached_records = 0;
  if (absl::StatusOr<ReadReport> report = ReadRecords(cache_path); report.ok()) {
    for (Record& r : report->records) {
      if (r.target != target) continue;
      cached_by_args[r.workload_args.dump()].push_back(std::move(r));
      ++cached_records;
    }
  }
  absl::StatusOr<std::unique_ptr<RecordWriter>> writer = RecordWriter::Open(cache_path);
  if (!writer.ok()) {
    std::fprintf(stderr, "cache %s: %s\n", cache_path.c_str(),
                 std::string(writer.status().message()).c_str());
    return 1;
  }

  auto make_shape = [&](const std::string& text) {
    Shape shape;
    shape.text = text;
    absl::StatusOr<std::unique_ptr<Task>> task = MakeBenchTask(text, target);
    if (!task.ok()) {
      std::fprintf(stderr, "shape %s: %s\n", text.c_str(),
                   std::string(task.status().message()).c_str());
      std::exit(1);
    }
    shape.task = std::move(*task);
    shape.measurer = std::make_unique<MemoizingMeasurer>(*shape.task, measure, writer->get());
    for (const Record& r : cached_by_args[shape.task->workload().args().dump()]) {
      if (r.task_name != shape.task->name()) continue;
      absl::StatusOr<Config> c = shape.task->space().FromJson(r.config);
      if (c.ok()) shape.measurer->Preload(c->index(), r.result);
    }
    return shape;
  };

  Json report = {
      {"benchmark", "tuner"},
      {"target", target},
      {"memoized_measurements", true},
      {"note",
       "each distinct (shape, config) is built and measured once and cached; every tuner and "
       "seed replays the same measured costs. measure_equivalent_seconds sums each trial's "
       "share of its batch's build + measure wall time when it was measured. Tuners given the "
       "same seed draw the same first random configs (common random numbers)."},
      {"cache", cache_path},
      {"cache_records_at_start", cached_records},
      {"measure_options",
       {{"threads", measure.runner.num_threads},
        {"number", measure.measure.number},
        {"repeat", measure.measure.repeat},
        {"min_repeat_ms", measure.measure.min_repeat_ms},
        {"cooldown_s", 0}}},
      {"trials", trials},
      {"random_trials", random_trials},
      {"seeds", seeds},
      {"plan_size", absl::GetFlag(FLAGS_plan_size)},
      {"xgb_sa", XgbSaJson()},
      {"shapes", Json::array()}};
  auto save = [&]() { bench::WriteJsonReport(absl::GetFlag(FLAGS_json), report).IgnoreError(); };
  std::printf(
      "Measurements are memoised: each (shape, config) is measured once (cache %s, %lld records at "
      "start);\n"
      "all tuners and seeds replay the same measured costs.\n",
      cache_path.c_str(), static_cast<long long>(cached_records));

  std::vector<Panel> panels;
  std::vector<Shape> shapes;
  for (const std::string& text :
       std::vector<std::string>(absl::StrSplit(absl::GetFlag(FLAGS_shapes), ';'))) {
    shapes.push_back(make_shape(text));
    Shape& shape = shapes.back();
    const RunResult reference = RunTuner("random", shape, 0, random_trials, {});
    const double best_random = reference.curve.empty() ? 0 : reference.curve.back();
    std::printf("\n== %s %s (%s): %lld configs; best of %lld random trials: %.2f GFLOPS\n",
                shape.task->workload().name().c_str(), text.c_str(), shape.task->name().c_str(),
                static_cast<long long>(shape.task->space().size()),
                static_cast<long long>(random_trials), best_random);
    // Feature extraction speed on this shape (one thread).
    const Json feature_speed = FeatureConfigsPerSecond(*shape.task, 3000);
    std::printf("features, configs/s on one core: itervar %.0f, curve %.0f, knob %.0f\n",
                feature_speed.value("itervar", 0.0), feature_speed.value("curve", 0.0),
                feature_speed.value("knob", 0.0));
    std::printf("%-10s %16s %16s %14s %12s %22s\n", "tuner", "trials to 90%", "trials to 95%",
                "best@trials", "best/ref", "model share of time");
    Json shape_json = {{"shape", text},
                       {"space_size", shape.task->space().size()},
                       {"random_reference",
                        {{"trials", random_trials},
                         {"seed", 0},
                         {"best_gflops", best_random},
                         {"curve", reference.curve}}},
                       {"feature_configs_per_second_one_core", feature_speed},
                       {"tuners", Json::object()}};
    Panel panel{
        absl::StrCat(shape.task->workload().name(), " ", text, " (mean of ", seeds, " seeds)"),
        {},
        {},
        0.95 * best_random};
    for (const std::string& name : tuner_names) {
      std::vector<RunResult> runs;
      Json runs_json = Json::array();
      double model = 0, equivalent = 0, fit = 0, select = 0, best_sum = 0;
      for (int seed = 1; seed <= seeds; ++seed) {
        runs.push_back(RunTuner(name, shape, seed, trials, {}));
        const RunResult& r = runs.back();
        model += r.model_seconds;
        fit += r.fit_seconds;
        select += r.select_seconds;
        equivalent += r.measure_equivalent_seconds;
        best_sum += r.curve.empty() ? 0 : r.curve.back();
        runs_json.push_back({{"seed", seed},
                             {"best_gflops", r.curve.empty() ? 0 : r.curve.back()},
                             {"trials_to_90", TrialsTo(r.curve, 0.9 * best_random)},
                             {"trials_to_95", TrialsTo(r.curve, 0.95 * best_random)},
                             {"model_seconds", r.model_seconds},
                             {"fit_seconds", r.fit_seconds},
                             {"select_seconds", r.select_seconds},
                             {"feature_seconds", r.feature_seconds},
                             {"fits", r.fits},
                             {"measure_equivalent_seconds", r.measure_equivalent_seconds},
                             {"bench_wall_seconds", r.wall_seconds},
                             {"curve", r.curve}});
      }
      const Json reach90 = Reach(runs, 0.9 * best_random),
                 reach95 = Reach(runs, 0.95 * best_random);
      const double share = model / std::max(model + equivalent, 1e-9);
      const double mean_best = best_sum / seeds;
      std::printf(
          "%-10s %16s %16s %14.2f %11.1f%% %21s\n", name.c_str(), ReachText(reach90).c_str(),
          ReachText(reach95).c_str(), mean_best, 100 * mean_best / std::max(best_random, 1e-9),
          model > 0
              ? absl::StrFormat("%.1f%% (fit %.1fs sel %.1fs)", 100 * share, fit, select).c_str()
              : "-");
      std::fflush(stdout);
      shape_json["tuners"][name] = {
          {"runs", runs_json},
          {"trials_to_90", reach90},
          {"trials_to_95", reach95},
          {"mean_best_gflops", mean_best},
          {"mean_best_over_reference", mean_best / std::max(best_random, 1e-9)},
          {"model_seconds", model},
          {"fit_seconds", fit},
          {"select_seconds", select},
          {"measure_equivalent_seconds", equivalent},
          {"model_share_of_time", share}};
      panel.series.push_back(name);
      panel.curves.push_back(MeanCurve(runs));
    }
    shape_json["measured_configs"] = shape.measurer->measured();
    shape_json["distinct_configs"] = shape.measurer->cached();
    shape_json["measure_wall_seconds"] = shape.measurer->measure_wall_seconds();
    report["shapes"].push_back(shape_json);
    panels.push_back(std::move(panel));
    save();
  }

  const std::string transfer_text = absl::GetFlag(FLAGS_transfer_shape);
  if (!transfer_text.empty()) {
    Shape shape = make_shape(transfer_text);
    // History: the tuning log of the other shapes of the same template, i.e.
    // every config this invocation tried on them (reference and tuner runs;
    // not the whole cache, so the history does not grow from run to run).
    std::vector<Record> history;
    size_t history_shapes = 0;
    for (const Shape& s : shapes) {
      if (s.task->name() != shape.task->name() ||
          s.task->workload().args() == shape.task->workload().args()) {
        continue;
      }
      ++history_shapes;
      for (int64_t index : s.tried) {  // sorted, so the history (and the run) replays
        history.push_back(
            RecordOf(*s.task, *s.task->space().Get(index), s.measurer->results().at(index)));
      }
    }
    const RunResult reference = RunTuner("random", shape, 0, random_trials, {});
    const double best_random = reference.curve.empty() ? 0 : reference.curve.back();
    std::vector<RunResult> cold, warm;
    const int transfer_seeds = absl::GetFlag(FLAGS_transfer_seeds);
    Json per_seed = Json::array();
    for (int seed = 1; seed <= transfer_seeds; ++seed) {
      cold.push_back(RunTuner("xgb", shape, seed, trials, {}));
      warm.push_back(RunTuner("xgb", shape, seed, trials, history));
      Json weights = Json::array();
      for (const XgbTuner::HistoryShapeReport& h : warm.back().history) {
        weights.push_back({{"workload_args", Json::parse(h.workload_args)},
                           {"records", h.records},
                           {"weight", h.weight},
                           {"ranking_accuracy", h.ranking_accuracy}});
      }
      const int64_t cold95 = TrialsTo(cold.back().curve, 0.95 * best_random);
      const int64_t warm95 = TrialsTo(warm.back().curve, 0.95 * best_random);
      std::printf("seed %d: trials to 95%%: cold %lld, warm %lld; history weights at the end:",
                  seed, static_cast<long long>(cold95), static_cast<long long>(warm95));
      for (const XgbTuner::HistoryShapeReport& h : warm.back().history) {
        std::printf(" %s %.3f (ranks %.2f)", h.workload_args.c_str(), h.weight, h.ranking_accuracy);
      }
      std::printf("\n");
      std::fflush(stdout);
      per_seed.push_back({{"seed", seed},
                          {"cold_trials_to_95", cold95},
                          {"warm_trials_to_95", warm95},
                          {"warm_history_shapes_at_end", weights}});
    }
    const Json cold95 = Reach(cold, 0.95 * best_random), warm95 = Reach(warm, 0.95 * best_random);
    const Json cold90 = Reach(cold, 0.9 * best_random), warm90 = Reach(warm, 0.9 * best_random);
    std::printf(
        "\n== transfer to %s %s with %zu records of %zu other shapes; best of %lld random: %.2f "
        "GFLOPS\n",
        shape.task->workload().name().c_str(), transfer_text.c_str(), history.size(),
        history_shapes, static_cast<long long>(random_trials), best_random);
    std::printf("xgb cold: trials to 90%% %s, to 95%% %s\n", ReachText(cold90).c_str(),
                ReachText(cold95).c_str());
    std::printf("xgb warm: trials to 90%% %s, to 95%% %s\n", ReachText(warm90).c_str(),
                ReachText(warm95).c_str());
    Json transfer = {
        {"shape", transfer_text},
        {"history_records", history.size()},
        {"history_shapes", history_shapes},
        {"random_reference", {{"trials", random_trials}, {"best_gflops", best_random}}},
        {"cold", {{"trials_to_90", cold90}, {"trials_to_95", cold95}}},
        {"warm", {{"trials_to_90", warm90}, {"trials_to_95", warm95}}}};
    Json cold_curves = Json::array(), warm_curves = Json::array();
    for (const RunResult& r : cold) cold_curves.push_back(r.curve);
    for (const RunResult& r : warm) warm_curves.push_back(r.curve);
    transfer["seeds"] = transfer_seeds;
    transfer["per_seed"] = per_seed;
    transfer["cold"]["curves"] = cold_curves;
    transfer["warm"]["curves"] = warm_curves;
    if (!cold95["mean_trials"].is_null() && !warm95["mean_trials"].is_null()) {
      const double ratio =
          warm95["mean_trials"].get<double>() / cold95["mean_trials"].get<double>();
      transfer["warm_over_cold_trials_to_95"] = ratio;
      std::printf("warm / cold trials to 95%%: %.2f (target <= 0.5)\n", ratio);
    }
    report["transfer"] = transfer;
    panels.push_back(Panel{absl::StrCat("transfer to ", shape.task->workload().name(), " ",
                                        transfer_text, " (mean of ", transfer_seeds, " seeds)"),
                           {"xgb cold", "xgb + history of other shapes"},
                           {MeanCurve(cold), MeanCurve(warm)},
                           0.95 * best_random});
    save();
  }
  WritePng(absl::GetFlag(FLAGS_png), panels);
  return 0;
}

}  // namespace

int bench::BenchMain() { return Main(); }

}  // namespace tunefleet
