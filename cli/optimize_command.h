// `tunefleet optimize`: from an ONNX file to a compiled library in one
// command, within a time budget:
//
//   tunefleet optimize --model x.onnx --time_budget 10m -o out/ [--threads 2]
//
//  1. tunes the model's tasks locally as one job (local/tune_command.h)
//     with the gradient task scheduler, which spends the budget where it
//     expects the model's latency to drop most, and stops proposing trials
//     when the budget is spent; then validates each task's winners (their
//     re-measurement comes after the budget); records in out/records.jsonl;
//  2. compiles the model with those records into out/ (model.so);
//  3. times the compiled model and, where ONNX Runtime for Node is
//     installed (bench/install_onnxruntime.sh), ONNX Runtime on the same
//     machine, same threads, same zero input, one after the other, and prints
//     both and their ratio; where it is not, it says so.
#ifndef TUNEFLEET_CLI_OPTIMIZE_COMMAND_H_
#define TUNEFLEET_CLI_OPTIMIZE_COMMAND_H_

#include <optional>
#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "cli/model_command.h"
#include "local/tune_command.h"
#include "proto/fleet.pb.h"
#include "tuner_core/graph/onnx_import.h"

namespace tunefleet {

struct OptimizeOptions {
  std::string model;  // an .onnx file
  OnnxImportOptions onnx;
  std::string output_dir;
  // The tuning job of `model` (ModelJobSpec): its tasks, target, tuner,
  // trials cap per task, measurement and validation options; a time budget
  // (time_budget_s > 0) is required.
  proto::JobSpec job;
  // How this host runs it (its log is set to output_dir/records.jsonl).
  LocalRunOptions run;
  int threads = 1;  // for the timing runs (ours and ONNX Runtime's)
  int runs = 50;
  // ONNX Runtime for Node: the onnxruntime-node package directory and the
  // timing script; empty: looked up (third_party/node/node_modules/
  // onnxruntime-node and bench/compiled_model_bench_ort.js, in the current
  // directory and above this executable).
  std::string ort_module;
  std::string ort_script;
};

struct OptimizeSummary {
  LocalJobSummary tuning;
  double tuned_ms = 0;           // the compiled model's median latency
  std::optional<double> ort_ms;  // ONNX Runtime's, when measured
  std::string ort_note;          // why ONNX Runtime was not measured
  double wall_seconds = 0;       // the whole command
};

// Runs the three steps, printing each step's report to `out` and the
// tuner's progress to `progress`. InvalidArgument for a missing budget or
// output directory; the errors of tuning, compiling and running.
[[nodiscard]] absl::StatusOr<OptimizeSummary> RunOptimize(const OptimizeOptions& options,
                                                          std::ostream& progress,
                                                          std::ostream& out);

}  // namespace tunefleet

#endif  // TUNEFLEET_CLI_OPTIMIZE_COMMAND_H_
