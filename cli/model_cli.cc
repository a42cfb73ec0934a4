// The model commands: optimize (tune + compile + time beside ONNX Runtime),
// compile, run and operators.
#include <iostream>

#include "absl/flags/flag.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "cli/cli_commands.h"
#include "cli/compile_commands.h"
#include "cli/optimize_command.h"
#include "cli/shared_flags.h"
#include "common/status_macros.h"
#include "toolchain/codegen/target.h"

ABSL_FLAG(std::string, records, "", "compile: tuning records (JSON lines) to apply");
ABSL_FLAG(bool, epilogues_in_kernels, false,
          "compile: apply every kernel's epilogue from inside it as it finishes each row "
          "(measured slower than the pass after it where the output stays in cache)");
ABSL_FLAG(std::string, epilogue_hook_min_mb, "",
          "compile: apply the epilogue from inside the kernels whose output holds at least "
          "this many MiB (empty: the host's last-level cache when compiling for the host; "
          "'none'; --epilogues_in_kernels: all)");
ABSL_FLAG(bool, epilogues_in_stores, true,
          "compile: compute the kernels' epilogues (bias, residual, ReLU, Clip, LeakyRelu, "
          "HardSigmoid, HardSwish) in their final stores where their templates allow; false: "
          "a pass after each kernel (or the hook, above)");
ABSL_FLAG(bool, exp_epilogues_in_stores, false,
          "compile: with --epilogues_in_stores, the exp activations (Sigmoid, SiLU, Tanh, GELU, "
          "Elu) too (measured slower than the runtime's pass on Zen 3)");
ABSL_FLAG(std::string, input, "", "run: input tensor (.npy float32, or raw floats); default zeros");
ABSL_FLAG(std::string, output, "",
          "run: write the model's outputs here (.npy; a comma-separated list for several)");
ABSL_FLAG(bool, profile, false,
          "run: then time every plan step over --runs more runs and print them");
ABSL_FLAG(std::string, ort_module, "",
          "optimize: onnxruntime-node's directory (default: third_party/node/node_modules/"
          "onnxruntime-node here or above the binary)");

namespace tunefleet {

[[nodiscard]] absl::Status OptimizeCli(const CliArgs&) {
  OptimizeOptions o;
  o.model = absl::GetFlag(FLAGS_model);
  o.output_dir = absl::GetFlag(FLAGS_o);
  TF_ASSIGN_OR_RETURN(o.job,
                      JobSpecFromFlags({.target = HostTargetString(), .task_policy = "gradient"}));
  o.job.set_window(absl::GetFlag(FLAGS_batch));
  o.run = LocalRunFromFlags();
  o.threads = RunThreadsFromFlag();
  o.runs = absl::GetFlag(FLAGS_runs);
  o.ort_module = absl::GetFlag(FLAGS_ort_module);
  TF_ASSIGN_OR_RETURN(o.onnx, OnnxOptionsFromFlag());
  return RunOptimize(o, std::cerr, std::cout).status();
}

[[nodiscard]] absl::Status CompileCli(const CliArgs&) {
  CompileOptions o;
  o.model = absl::GetFlag(FLAGS_model);
  o.records = absl::GetFlag(FLAGS_records);
  o.target = absl::GetFlag(FLAGS_target);
  o.output_dir = absl::GetFlag(FLAGS_o);
  o.epilogues_in_stores = absl::GetFlag(FLAGS_epilogues_in_stores);
  o.exp_epilogues_in_stores = absl::GetFlag(FLAGS_exp_epilogues_in_stores);
  const std::string min_mb = absl::GetFlag(FLAGS_epilogue_hook_min_mb);
  double mb = 0;
  if (absl::GetFlag(FLAGS_epilogues_in_kernels)) {
    o.epilogue_hook_min_bytes = 0;
  } else if (min_mb == "none") {
    o.epilogue_hook_min_bytes = kNoEpilogueHook;
  } else if (!min_mb.empty()) {
    if (!absl::SimpleAtod(min_mb, &mb) || !(mb >= 0) || mb > 1e6) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--epilogue_hook_min_mb takes a size in MiB (>= 0) or 'none', got \"", min_mb, "\""));
    }
    o.epilogue_hook_min_bytes = static_cast<int64_t>(mb * (1 << 20));
  }
  TF_ASSIGN_OR_RETURN(o.onnx, OnnxOptionsFromFlag());
  return RunCompileCommand(o, std::cout);
}

[[nodiscard]] absl::Status RunCli(const CliArgs&) {
  RunModelOptions o;
  o.model = absl::GetFlag(FLAGS_model);
  o.input = absl::GetFlag(FLAGS_input);
  o.output = absl::GetFlag(FLAGS_output);
  o.threads = RunThreadsFromFlag();
  o.repeat = absl::GetFlag(FLAGS_runs);
  o.warmup = absl::GetFlag(FLAGS_warmup);
  o.profile = absl::GetFlag(FLAGS_profile);
  return RunModelCommand(o, std::cout).status();
}

[[nodiscard]] absl::Status OperatorsCli(const CliArgs&) {
  RunOperatorsCommand(std::cout);
  return absl::OkStatus();
}

}  // namespace tunefleet
