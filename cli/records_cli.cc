// tunefleet best and measure: the best record per task of --log (or of a
// fleet job, --job), and re-measuring the top records on this host or on
// the agents of --key through the fleet.
#include <iostream>

#include "absl/flags/flag.h"
#include "cli/cli_commands.h"
#include "cli/fleet_commands.h"
#include "cli/measure_fleet.h"
#include "cli/shared_flags.h"
#include "common/status_macros.h"
#include "local/measure_command.h"
#include "local/tune_command.h"
#include "proto_convert/run_request.h"

ABSL_FLAG(int32_t, top, tunefleet::kDefaultValidateTopK,
          "measure: records re-measured per task (the best by their reported figure)");
ABSL_FLAG(int32_t, passes, tunefleet::kDefaultValidationPasses,
          "measure: measurements of each record (the re-measured cost is their median)");

namespace tunefleet {

[[nodiscard]] absl::Status BestCli(const CliArgs&) {
  const std::string job = FleetJobFlag();
  if (job.empty()) return RunBest(absl::GetFlag(FLAGS_log), std::cout);
  TF_ASSIGN_OR_RETURN(const int task, TaskIndexFromFlag());
  return WithFleetClient(
      [&](FleetClient& client) { return RunFleetBest(client, job, task, std::cout); });
}

[[nodiscard]] absl::Status MeasureCli(const CliArgs&) {
  const RemeasureSelection records =
      RemeasureSelectionFromFlags(absl::GetFlag(FLAGS_top), absl::GetFlag(FLAGS_passes));
  const std::string key = absl::GetFlag(FLAGS_key);
  if (key == "local") {
    MeasureCommandOptions o;
    o.records = records;
    o.local.runner.num_threads = absl::GetFlag(FLAGS_threads);
    o.local.measure = MeasureFromFlags();
    return RunMeasure(o, std::cerr, std::cout).status();
  }
  return WithFleetClient([&](FleetClient& client) {
    FleetMeasureOptions o;
    o.records = records;
    o.key = key;
    o.measure = ToProto(MeasureFromFlags());
    return RunFleetMeasure(client, o, std::cerr, std::cout).status();
  });
}

}  // namespace tunefleet
