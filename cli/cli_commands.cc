#include "cli/cli_commands.h"

#include <algorithm>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "cli/credential_commands.h"
#include "tuner_core/templates/template.h"

namespace tunefleet {
namespace {

constexpr char kLocal[] = "local mode (one process, no RPC)";
constexpr char kFleet[] = "the fleet";
constexpr char kCredentials[] = "credentials";

[[nodiscard]] absl::Status TemplatesCli(const CliArgs&) {
  for (const Template* t : AllTemplates()) {
    std::cout << t->name() << " (" << t->workload_name() << "): " << t->description() << "\n";
  }
  return absl::OkStatus();
}

[[nodiscard]] absl::Status TokenCli(const CliArgs& args) {
  return RunTokenCommand(args, std::cin, std::cout);
}
[[nodiscard]] absl::Status KeysCli(const CliArgs& args) { return RunKeysCommand(args, std::cout); }

}  // namespace

const std::vector<CliCommand>& CliCommands() {
  static const std::vector<CliCommand> commands = {
      {"optimize", kLocal,
       "tune --model (ONNX) within --time_budget (10m), compile it into -o DIR and\n"
       "time it beside ONNX Runtime (where onnxruntime-node is installed)",
       &OptimizeCli},
      {"compile", kLocal,
       "compile --model (ONNX) with the best of --records for --target into a\n"
       "library: -o DIR (DIR/model.so; C API: compiler/runtime/tunefleet_model.h)",
       &CompileCli},
      {"run", kLocal,
       "run a compiled model (--model DIR) on --input (.npy/raw), write --output\n"
       "(.npy) or print the top classes; latency over --runs (--threads);\n"
       "--profile: then the time of every plan step (node, layouts), each kernel's\n"
       "own time (called back to back) and the model's cost over their sum",
       &RunCli},
      {"tune", kLocal,
       "build and measure configs locally and record them in --log\n"
       "(--workload with --shape or --args, or every task of --model), then\n"
       "re-measure its top --validate_top_k configs (default 5; 0: off)\n"
       "--validation_passes times each and report the validated best",
       &TuneCli},
      {"tasks", kLocal, "list the tuning tasks of --model", &TasksCli},
      {"best", kLocal,
       "print the best record per task in --log (or of --job on the fleet), and\n"
       "which figure it is: validated (median of passes, spread) or the search's",
       &BestCli},
      {"measure", kLocal,
       "re-measure the top --top records per task of --log on this host, --passes\n"
       "times each in fresh runner children (--task: one task), against the\n"
       "recorded figures; with --key K, on the agents of key K through the fleet\n"
       "(--key local, the default, is this host)",
       &MeasureCli},
      {"train_prior", kLocal,
       "train the xgb tuner's cost-model priors (one per template) on every trial\n"
       "of the LOG files given (one CPU family) and write them to -o FILE\n"
       "(the shipped ones: tuner_core/pretuned/data/priors/)",
       &TrainPriorCli},
      {"templates", kLocal, "list the kernel templates", &TemplatesCli},
      {"operators", kLocal,
       "list the ONNX operators compile claims and the attributes each supports", &OperatorsCli},
      {"up", kFleet, "start tracker, builders, agents and tuners on 127.0.0.1", &UpCli},
      {"submit", kFleet,
       "submit a tuning job (--key, --shape, --trials, --tuner, ...), or a whole\n"
       "model as one job (--model resnet-18|x.onnx --trials_per_task N\n"
       "[--task_policy gradient|round_robin|sequential] [--selective=top3])",
       &SubmitCli},
      {"watch", kFleet, "follow a job (--job), AutoTVM's progress line", &WatchCli},
      {"jobs", kFleet, "list jobs (--all: finished ones too)", &JobsCli},
      {"devices", kFleet, "list connected builders, agents and tuners", &DevicesCli},
      {"queue", kFleet, "per device key: total/free/busy/pending; per job: in flight and done",
       &QueueCli},
      {"export", kFleet, "write a job's records (--job; all jobs without) to --log or stdout",
       &ExportCli},
      {"cancel", kFleet, "cancel a job (--job)", &CancelCli},
      {"token", kCredentials,
       "token new: make a token (--role, [--device_keys], [--identity]), append its\n"
       "hash to --tokens (the tracker's token file), write it to --token_out;\n"
       "token hash: print the token file line of the token read on stdin (--role)",
       &TokenCli},
      {"keys", kCredentials,
       "keys new: make a builder signing key (--signing_key_out) and pin its public\n"
       "key in --pinned_keys (the tracker's --builder_keys)",
       &KeysCli},
  };
  return commands;
}

std::string CliUsage() {
  std::string usage = "tunefleet <command> [flags]";
  // The names' column is as wide as the longest name, so none is cut.
  size_t width = 0;
  for (const CliCommand& command : CliCommands()) {
    width = std::max(width, std::string(command.name).size());
  }
  const std::string continuation = absl::StrCat("\n", std::string(width + 3, ' '));
  const char* group = nullptr;
  for (const CliCommand& command : CliCommands()) {
    if (group == nullptr || std::string(group) != command.group) {
      group = command.group;
      absl::StrAppend(&usage, "\n", group, ":");
    }
    std::string name = command.name;
    name.resize(width, ' ');
    absl::StrAppend(&usage, "\n  ", name, " ",
                    absl::StrReplaceAll(command.usage, {{"\n", continuation}}));
  }
  return usage;
}

}  // namespace tunefleet
