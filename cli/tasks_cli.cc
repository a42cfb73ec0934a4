// tunefleet tasks: the tuning tasks of --model, or (--similarity) their
// similarity matrix and selective tuning's clusters.
#include <iostream>

#include "absl/flags/flag.h"
#include "cli/cli_commands.h"
#include "cli/model_command.h"
#include "cli/shared_flags.h"
#include "common/status_macros.h"

ABSL_FLAG(bool, similarity, false,
          "tasks: print the tasks' similarity matrix and selective tuning's clusters");

namespace tunefleet {

[[nodiscard]] absl::Status TasksCli(const CliArgs&) {
  TF_ASSIGN_OR_RETURN(const OnnxImportOptions onnx, OnnxOptionsFromFlag());
  if (absl::GetFlag(FLAGS_similarity)) {
    return RunSimilarity(absl::GetFlag(FLAGS_model), onnx, absl::GetFlag(FLAGS_target),
                         absl::GetFlag(FLAGS_selective_threshold), std::cout);
  }
  return RunTasks(absl::GetFlag(FLAGS_model), onnx, std::cout);
}

}  // namespace tunefleet
