// Issue 17's figures: batch-1 latency of ResNet-18 and MobileNet-v2 compiled
// by `tunefleet compile` (for this host, default configs or --records),
// beside PyTorch on the same seeded model (the fastest of eager, frozen jit
// and optimize_for_inference, same thread count, OPENBLAS_NUM_THREADS set to
// it), and beside ONNX Runtime (npm's onnxruntime-node, installed by
// bench/install_onnxruntime.sh; skipped with a message when absent) on the
// same ONNX file, at 1 and 2 threads. The reference is the faster of PyTorch
// and ONNX Runtime; ONNX Runtime's output is checked against PyTorch's on the
// same input (//compiler:torch_references) and the benchmark fails when they
// differ. Every figure comes from a fresh process, and the compiled model's,
// PyTorch's and ONNX Runtime's processes alternate, --rounds times; the
// figure is the median over rounds of each process's median. Where the
// compiled model's time goes comes from the runtime's per-step timing
// (CompiledModel::SetProfiling) in a separate profiled run: tuned kernels,
// layout changes, pooling, the rest.
//
//   bazel run -c opt //bench:compiled_model_bench -- --out=bench/results/compiled_model.json
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "bench/bench_main.h"
#include "bench/bench_util.h"
#include "common/median.h"
#include "compiler/model_compiler.h"
#include "compiler/runtime/model_runtime.h"
#include "compiler/runtime/step_profile.h"
#include "nlohmann/json.hpp"
#include "toolchain/codegen/target.h"

ABSL_FLAG(std::string, models, "resnet18,mobilenet_v2", "exported models (tuner_core/graph)");
ABSL_FLAG(std::string, records, "", "records file; empty: default configs everywhere");
ABSL_FLAG(std::string, threads, "1,2", "thread counts");
ABSL_FLAG(int, rounds, 3, "fresh processes per model, thread count and side");
ABSL_FLAG(int, runs, 50, "timed runs per process (after 10 warm-ups)");
ABSL_FLAG(std::string, out, "", "write the results as JSON here too");
ABSL_FLAG(std::string, onnxruntime_node, "",
          "onnxruntime-node's folder; empty: third_party/node/node_modules/onnxruntime-node "
          "of this checkout (bench/install_onnxruntime.sh)");
ABSL_FLAG(bool, layout_aware, true,
          "compile with the layout-aware choice among near-best records (false: every layer's "
          "best record, AutoTVM's pick-best)");
ABSL_FLAG(std::string, work_dir, "/tmp/compiled_model_bench", "where the models are compiled");
// Child mode: time one compiled model and print JSON.
ABSL_FLAG(std::string, child_model, "", "internal: run this compiled model and print JSON");
ABSL_FLAG(int, child_threads, 1, "internal");
ABSL_FLAG(bool, child_profile, false, "internal: per-step times instead of latency");
ABSL_FLAG(
    bool, profile_steps, false,
    "print every plan step of the profiled run (node, layouts, ms), not only the totals by kind");

namespace tunefleet::bench {
namespace {

// ONNX Runtime's output against PyTorch's above this max |a - b| / max |b|
// means the two are not running the same model: no valid reference.
constexpr double kMaxOrtError = 1e-4;

// onnxruntime-node's folder, or "" (with a message) when it is not installed.
// The runfile of the ORT script links back into the checkout, which holds
// third_party/node/.
std::string OnnxRuntimeNodeDir(const std::string& runfiles) {
  std::string dir = absl::GetFlag(FLAGS_onnxruntime_node);
  if (dir.empty()) {
    char real[PATH_MAX];
    const std::string script = runfiles + "bench/compiled_model_bench_ort.js";
    if (realpath(script.c_str(), real) != nullptr) {
      std::string checkout(real);
      checkout = checkout.substr(0, checkout.rfind("/bench/"));
      dir = checkout + "/third_party/node/node_modules/onnxruntime-node";
    }
  }
  if (dir.empty() || access((dir + "/package.json").c_str(), R_OK) != 0) {
    std::printf(
        "ONNX Runtime: onnxruntime-node not found at '%s'; run bench/install_onnxruntime.sh "
        "(or pass --onnxruntime_node). Skipping ONNX Runtime.\n",
        dir.c_str());
    return "";
  }
  if (system("node --version >/dev/null 2>&1") != 0) {
    std::printf("ONNX Runtime: 'node' is not on PATH. Skipping ONNX Runtime.\n");
    return "";
  }
  return dir;
}

int Child() {
  absl::StatusOr<std::unique_ptr<CompiledModel>> model =
      CompiledModel::Open(absl::GetFlag(FLAGS_child_model));
  if (!model.ok()) {
    std::cout << nlohmann::json{{"error", std::string(model.status().message())}} << "\n";
    return 1;
  }
  (*model)->SetThreads(absl::GetFlag(FLAGS_child_threads));
  std::vector<std::vector<float>> in, out;
  std::vector<const void*> in_ptrs;
  std::vector<float*> out_ptrs;
  for (const PlanTensor& t : (*model)->inputs()) {
    if (t.type != ElementType::kFloat32) {  // its values would need a meaning (ids)
      std::cout << nlohmann::json{{"error", "input '" + t.name + "' is not float32"}} << "\n";
      return 1;
    }
    int64_t n = 1;
    for (int64_t d : t.shape) n *= d;
    in.emplace_back(n);
    for (int64_t i = 0; i < n; ++i) in.back()[i] = static_cast<float>((i * 7919) % 255) / 255.0f;
    in_ptrs.push_back(in.back().data());
  }
  for (const PlanTensor& t : (*model)->outputs()) {
    int64_t n = 1;
    for (int64_t d : t.shape) n *= d;
    out.emplace_back(n);
    out_ptrs.push_back(out.back().data());
  }
  const int runs = absl::GetFlag(FLAGS_runs);
  for (int i = 0; i < 10; ++i) {
    if (!(*model)->Run(in_ptrs, out_ptrs).ok()) return 1;
  }
  nlohmann::json result;
  if (absl::GetFlag(FLAGS_child_profile)) {
    (*model)->SetProfiling(true);
    for (int i = 0; i < runs; ++i) (void)(*model)->Run(in_ptrs, out_ptrs);
    const ModelPlan& plan = (*model)->plan();
    const std::map<std::string, double> by_kind = MsByKind(plan, (*model)->step_seconds(), runs);
    double total = 0;
    for (const auto& [kind, ms] : by_kind) total += ms;
    result["profile_ms"] = by_kind;
    result["profile_total_ms"] = total;
    double epilogue_ms = 0;
    for (double seconds : (*model)->epilogue_seconds()) epilogue_ms += seconds * 1e3 / runs;
    result["kernel_epilogues_ms"] = epilogue_ms;  // part of the kernels' times
    if (absl::GetFlag(FLAGS_profile_steps)) {
      result["step_table"] =
          FormatStepProfile(plan, (*model)->step_seconds(), runs, (*model)->epilogue_seconds());
    }
    result["steps"] = plan.steps.size();
    result["arena_mib"] = (*model)->arena_floats() * 4.0 / (1 << 20);
  } else {
    std::vector<double> ms;
    for (int i = 0; i < runs; ++i) {
      const auto start = std::chrono::steady_clock::now();
      if (!(*model)->Run(in_ptrs, out_ptrs).ok()) return 1;
      ms.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count());
    }
    result["median_ms"] = Median(ms);
  }
  std::cout << result << "\n";
  return 0;
}

}  // namespace

int BenchMain() {
  if (!absl::GetFlag(FLAGS_child_model).empty()) return Child();
  const std::string self = ExeDir() + "/compiled_model_bench";
  // Runfiles of this binary: the exports and the reference script.
  const std::string runfiles = self + ".runfiles/tunefleet/";
  const std::string target = HostTargetString();
  const std::string work = absl::GetFlag(FLAGS_work_dir);
  (void)!system(absl::StrCat("mkdir -p ", work).c_str());
  std::vector<int> thread_counts;
  for (absl::string_view t : absl::StrSplit(absl::GetFlag(FLAGS_threads), ',')) {
    thread_counts.push_back(std::stoi(std::string(t)));
  }
  const std::string ort_dir = OnnxRuntimeNodeDir(runfiles);
  nlohmann::json results = {
      {"target", target},
      {"records", absl::GetFlag(FLAGS_records).empty() ? "none (default configs)"
                                                       : absl::GetFlag(FLAGS_records)},
      {"rounds", absl::GetFlag(FLAGS_rounds)},
      {"runs", absl::GetFlag(FLAGS_runs)},
      {"onnxruntime_node", ort_dir.empty() ? "not installed" : ort_dir},
      {"models", nlohmann::json::array()}};
  for (absl::string_view name : absl::StrSplit(absl::GetFlag(FLAGS_models), ',')) {
    const std::string model(name);
    CompileOptions options{.model = runfiles + "tuner_core/graph/testdata/" + model + ".onnx",
                           .records = absl::GetFlag(FLAGS_records),
                           .target = target,
                           .output_dir = work + "/" + model,
                           .layout_aware = absl::GetFlag(FLAGS_layout_aware)};
    absl::StatusOr<CompileReport> report = CompileModel(options);
    if (!report.ok()) {
      std::cerr << model << ": " << report.status() << "\n";
      return 1;
    }
    for (int threads : thread_counts) {
      std::vector<double> compiled_ms;
      std::map<std::string, std::vector<double>> torch_ms;
      const std::string child =
          absl::StrCat(self, " --child_model=", options.output_dir, " --child_threads=", threads,
                       " --runs=", absl::GetFlag(FLAGS_runs));
      const std::string torch =
          absl::StrCat("OPENBLAS_NUM_THREADS=", threads, " /usr/bin/python3 ", runfiles,
                       "bench/compiled_model_bench_torch.py --export ", runfiles,
                       "tuner_core/graph/export_onnx.py --model ", model, " --threads ", threads,
                       " --runs ", absl::GetFlag(FLAGS_runs));
      const std::string testdata = runfiles + "compiler/testdata/" + model;
      const std::string ort = absl::StrCat(
          "node ", runfiles, "bench/compiled_model_bench_ort.js --module ", ort_dir, " --onnx ",
          options.model, " --input ", testdata, "_input.npy --expected ", testdata,
          "_expected.npy --threads ", threads, " --runs ", absl::GetFlag(FLAGS_runs));
      std::vector<double> ort_ms;
      double ort_error = 0;
      std::string ort_version;
      for (int round = 0; round < absl::GetFlag(FLAGS_rounds); ++round) {
        nlohmann::json c = RunJsonCommand(child);
        if (c.contains("median_ms")) compiled_ms.push_back(c["median_ms"].get<double>());
        nlohmann::json t = RunJsonCommand(torch);
        for (const char* way : {"eager", "jit", "ofi"}) {
          if (t.contains(way)) torch_ms[way].push_back(t[way].get<double>());
        }
        if (t.contains("error")) std::cerr << "torch: " << t["error"] << "\n";
        if (ort_dir.empty()) continue;
        nlohmann::json o = RunJsonCommand(ort);
        if (!o.contains("median_ms") || !o.contains("max_rel_error")) {
          std::cerr << model << " " << threads << "t: ONNX Runtime failed: " << o.dump() << "\n";
          return 1;
        }
        ort_ms.push_back(o["median_ms"].get<double>());
        ort_error = std::max(ort_error, o["max_rel_error"].get<double>());
        ort_version = o.value("ort", "");
      }
      if (ort_error > kMaxOrtError) {
        std::cerr << model << " " << threads << "t: ONNX Runtime's output differs from PyTorch's "
                  << "(max relative error " << ort_error << " > " << kMaxOrtError
                  << "): not the same model, no valid reference\n";
        return 1;
      }
      nlohmann::json profile =
          RunJsonCommand(child + " --child_profile" +
                         (absl::GetFlag(FLAGS_profile_steps) ? " --profile_steps" : ""));
      if (profile.contains("step_table")) {
        std::printf("%s %dt, per step (%d runs):\n%s", model.c_str(), threads,
                    absl::GetFlag(FLAGS_runs), profile["step_table"].get<std::string>().c_str());
        profile.erase("step_table");
      }
      nlohmann::json row = {{"model", model},
                            {"threads", threads},
                            {"kernels", report->kernels},
                            {"tuned_layers", report->tuned_layers},
                            {"default_layers", report->default_layers},
                            {"compiled_ms", Median(compiled_ms)},
                            {"compiled_ms_per_round", compiled_ms},
                            {"profile", profile}};
      double best = 0;
      std::string best_way;
      for (const auto& [way, ms] : torch_ms) {
        row["torch_" + way + "_ms"] = Median(ms);
        if (best == 0 || Median(ms) < best) {
          best = Median(ms);
          best_way = way;
        }
      }
      row["torch_best"] = best_way;
      row["torch_best_ms"] = best;
      row["ratio_compiled_over_torch"] = best > 0 ? Median(compiled_ms) / best : 0;
      // The reference: the faster of PyTorch's best way and ONNX Runtime.
      double reference = best;
      std::string reference_name = "torch_" + best_way;
      if (!ort_ms.empty()) {
        row["ort_version"] = ort_version;
        row["ort_ms"] = Median(ort_ms);
        row["ort_ms_per_round"] = ort_ms;
        row["ort_max_rel_error_vs_torch"] = ort_error;
        row["ratio_compiled_over_ort"] = Median(compiled_ms) / Median(ort_ms);
        if (best == 0 || Median(ort_ms) < best) {
          reference = Median(ort_ms);
          reference_name = "onnxruntime";
        }
      }
      row["reference"] = reference_name;
      row["reference_ms"] = reference;
      row["ratio_compiled_over_reference"] = reference > 0 ? Median(compiled_ms) / reference : 0;
      const std::string ort_text =
          ort_ms.empty() ? "ORT      -   "
                         : absl::StrFormat("ORT %7.2f ms (err %.1e)", Median(ort_ms), ort_error);
      std::printf(
          "%-13s %dt  compiled %7.2f ms  PyTorch %-5s %7.2f ms  %s  ratio to faster (%s) %.2f  "
          "| %s\n",
          model.c_str(), threads, Median(compiled_ms), best_way.c_str(), best, ort_text.c_str(),
          reference_name == "onnxruntime" ? "ORT" : "PyTorch",
          reference > 0 ? Median(compiled_ms) / reference : 0.0,
          profile.value("profile_ms", nlohmann::json::object()).dump().c_str());
      std::fflush(stdout);
      results["models"].push_back(row);
    }
  }
  if (!absl::GetFlag(FLAGS_out).empty()) {
    FILE* f = std::fopen(absl::GetFlag(FLAGS_out).c_str(), "w");
    if (f == nullptr) return 1;
    std::fputs((results.dump(2) + "\n").c_str(), f);
    std::fclose(f);
  }
  return 0;
}

}  // namespace tunefleet::bench
