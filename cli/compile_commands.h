// `tunefleet compile` and `tunefleet run` (issue 17): compile an ONNX model
// with tuning records into a library (compiler/model_compiler.h), and run a
// compiled model on an input, printing its output and its latency.
#ifndef TUNEFLEET_CLI_COMPILE_COMMANDS_H_
#define TUNEFLEET_CLI_COMPILE_COMMANDS_H_

#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/model_compiler.h"
#include "compiler/npy.h"

namespace tunefleet {

// Compiles and prints what was done: kernels, layers tuned / on default
// configs, every warning, the library's path.
// `tunefleet operators`: one line per ONNX operator compile claims, the
// operator first, then how it runs and the attributes it supports.
void RunOperatorsCommand(std::ostream& out);

[[nodiscard]] absl::Status RunCompileCommand(const CompileOptions& options, std::ostream& out);

struct RunModelOptions {
  std::string model;   // compile output directory or its model.so
  std::string input;   // .npy or raw floats; empty: zeros
  std::string output;  // .npy to write the first output to; empty: print a summary
  int threads = 1;
  int repeat = 10;  // timed runs, after `warmup` untimed ones
  // Untimed runs first (at least one: the first touches the weights' pages),
  // as many as bench/'s ONNX Runtime and PyTorch harnesses make (10), so a
  // comparison with them times each side equally warm.
  int warmup = 10;
  // Then `repeat` more runs timed per plan step, printed one line per step
  // (node, layouts, ms) and by kind (compiler/runtime/step_profile.h).
  bool profile = false;
};

// Runs the model warmup + repeat times (the first `warmup` untimed); prints the output
// (top-5 classes of a [1, C] output, or the first values; with --output it
// writes the .npy instead), then
//   latency: median X ms (min A, max B; mean M, std dev S over N runs, T threads)
//   Mean inference time (std dev): M ms (S ms)        <- AutoTVM's line
// and with `profile` the per-step table.
struct ModelRun {
  double median_ms = 0, mean_ms = 0;
  FloatTensor input;  // what the model was fed (zeros without options.input)
};
[[nodiscard]] absl::StatusOr<ModelRun> RunModelCommand(const RunModelOptions& options,
                                                       std::ostream& out);

}  // namespace tunefleet

#endif  // TUNEFLEET_CLI_COMPILE_COMMANDS_H_
