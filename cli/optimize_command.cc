#include "cli/optimize_command.h"

#include <filesystem>
#include <fstream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cli/compile_commands.h"
#include "common/clock.h"
#include "common/process.h"
#include "common/status_macros.h"
#include "compiler/npy.h"
#include "nlohmann/json.hpp"

namespace tunefleet {
namespace {

namespace fs = std::filesystem;

// `relative` in the current directory or in a directory above this
// executable (a Bazel build's bazel-bin/cli/tunefleet finds the source tree
// through the bazel-bin link's target: <output base>/execroot/... has no
// sources, so the walk also follows the current directory); empty when none.
std::string FindInTree(const std::string& relative) {
  std::error_code error;
  if (fs::exists(relative, error)) return fs::absolute(relative, error).string();
  fs::path dir = fs::read_symlink("/proc/self/exe", error).parent_path();
  for (; !error && !dir.empty() && dir != dir.root_path(); dir = dir.parent_path()) {
    if (fs::exists(dir / relative, error)) return (dir / relative).string();
  }
  return "";
}

// ONNX Runtime's median latency on `input` (the script's JSON line), or why
// it could not be measured.
[[nodiscard]] absl::StatusOr<double> TimeOnnxRuntime(const OptimizeOptions& options,
                                                     const std::string& input) {
  TF_ASSIGN_OR_RETURN(const std::string node, FindOnPath("node"));
  const std::string module = options.ort_module.empty()
                                 ? FindInTree("third_party/node/node_modules/onnxruntime-node")
                                 : options.ort_module;
  if (module.empty()) {
    return absl::NotFoundError(
        "onnxruntime-node is not installed (bench/install_onnxruntime.sh installs it)");
  }
  const std::string script = options.ort_script.empty()
                                 ? FindInTree("bench/compiled_model_bench_ort.js")
                                 : options.ort_script;
  if (script.empty()) return absl::NotFoundError("bench/compiled_model_bench_ort.js not found");
  const std::string log = (fs::path(options.output_dir) / "onnxruntime.json").string();
  TF_ASSIGN_OR_RETURN(Process p,
                      Process::Spawn({node, script, "--module", module, "--onnx", options.model,
                                      "--input", input, "--threads", absl::StrCat(options.threads),
                                      "--runs", absl::StrCat(options.runs)},
                                     log));
  const std::optional<int> status = p.Wait(600);
  if (!status.has_value()) return absl::DeadlineExceededError("ONNX Runtime ran over 600 s");
  std::ifstream in(log);
  std::string line, last;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] == '{') last = line;
  }
  const nlohmann::json result = nlohmann::json::parse(last, nullptr, /*allow_exceptions=*/false);
  if (result.is_object() && result.contains("median_ms") && result["median_ms"].is_number()) {
    return result["median_ms"].get<double>();
  }
  return absl::InternalError(absl::StrCat(
      "ONNX Runtime: ",
      result.is_object() && result.contains("error") ? result["error"].dump() : "no result", " (",
      log, ")"));
}

}  // namespace

[[nodiscard]] absl::StatusOr<OptimizeSummary> RunOptimize(const OptimizeOptions& options,
                                                          std::ostream& progress,
                                                          std::ostream& out) {
  if (!options.job.has_time_budget_s() || options.job.time_budget_s() <= 0) {
    return absl::InvalidArgumentError("optimize needs --time_budget (e.g. 10m, 90s)");
  }
  if (options.output_dir.empty()) return absl::InvalidArgumentError("optimize needs -o DIR");
  std::error_code error;
  fs::create_directories(options.output_dir, error);
  if (error) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot create ", options.output_dir, ": ", error.message()));
  }
  const Stopwatch watch;
  OptimizeSummary summary;

  if (options.job.tasks_size() == 0) {
    return absl::InvalidArgumentError(absl::StrCat("optimize: no task to tune in ", options.model));
  }
  out << "== 1/3 tuning within " << options.job.time_budget_s() << " s\n";
  LocalRunOptions tune = options.run;
  tune.log = (fs::path(options.output_dir) / "records.jsonl").string();
  TF_ASSIGN_OR_RETURN(summary.tuning, RunTune(options.job, tune, progress, out));

  out << "== 2/3 compiling\n";
  CompileOptions compile{.model = options.model,
                         .records = tune.log,
                         .target = options.job.tasks(0).task().target(),
                         .output_dir = options.output_dir,
                         .onnx = options.onnx};
  TF_RETURN_IF_ERROR(RunCompileCommand(compile, out));

  out << "== 3/3 timing (" << options.threads << " threads, " << options.runs << " runs)\n";
  RunModelOptions run{
      .model = options.output_dir, .threads = options.threads, .repeat = options.runs};
  TF_ASSIGN_OR_RETURN(ModelRun ours, RunModelCommand(run, out));
  summary.tuned_ms = ours.median_ms;
  // ONNX Runtime is fed the zeros the library was.
  const std::string input = (fs::path(options.output_dir) / "input.npy").string();
  TF_RETURN_IF_ERROR(WriteNpy(input, ours.input));
  absl::StatusOr<double> ort = TimeOnnxRuntime(options, input);
  summary.wall_seconds = watch.ElapsedSeconds();
  out << absl::StrFormat("\ncompiled model: %.3f ms (median)\n", summary.tuned_ms);
  if (ort.ok()) {
    summary.ort_ms = *ort;
    out << absl::StrFormat(
        "ONNX Runtime:   %.3f ms (median, same threads and input): ours is "
        "%.2fx its speed\n",
        *ort, *ort / summary.tuned_ms);
  } else {
    summary.ort_note = std::string(ort.status().message());
    out << "ONNX Runtime:   not measured: " << summary.ort_note << "\n";
  }
  out << absl::StrFormat("optimize: %.1f s in all (%.1f s tuning); library %s/model.so\n",
                         summary.wall_seconds, summary.tuning.wall_seconds, options.output_dir);
  return summary;
}

}  // namespace tunefleet
