// tunefleet up: a tracker, builders, agents and tuners on 127.0.0.1 until
// Ctrl-C.
#include <iostream>

#include "absl/flags/flag.h"
#include "cli/cli_commands.h"
#include "cli/fleet_commands.h"
#include "cli/shared_flags.h"
#include "common/status_macros.h"

ABSL_FLAG(int32_t, agents, 1, "up: device agents to start");
ABSL_FLAG(int32_t, builders, 1, "up: builders to start");
ABSL_FLAG(int32_t, tuners, 1, "up: tuner processes to start");
ABSL_FLAG(int32_t, builder_parallelism, 0, "up: builds at once per builder (0: every core)");
ABSL_FLAG(int32_t, port, 0, "up: tracker port (0: any free port)");
ABSL_FLAG(int32_t, metrics_port, 0, "up: tracker /metrics port (0: any free port)");
ABSL_FLAG(int32_t, max_restarts, 5,
          "up: restarts of a child that dies (backoff 0.5 s doubling to 30 s) before `up` "
          "stops the fleet; a child that ran 60 s starts counting again");

namespace tunefleet {

[[nodiscard]] absl::Status UpCli(const CliArgs&) {
  FleetLauncher::Options o = UpFleetOptions();
  const std::string dir = absl::GetFlag(FLAGS_fleet_dir);
  if (!dir.empty()) o.dir = dir;
  o.port = absl::GetFlag(FLAGS_port);
  o.metrics_port = absl::GetFlag(FLAGS_metrics_port);
  o.builders = absl::GetFlag(FLAGS_builders);
  o.builder_parallelism = absl::GetFlag(FLAGS_builder_parallelism);
  o.agents = absl::GetFlag(FLAGS_agents);
  o.device_key = absl::GetFlag(FLAGS_key);
  o.agent_threads = absl::GetFlag(FLAGS_threads);
  o.tuners = absl::GetFlag(FLAGS_tuners);
  o.restart.max_restarts = absl::GetFlag(FLAGS_max_restarts);
  return RunUp(o, std::cout);
}

}  // namespace tunefleet
