// The `tunefleet` commands: one function per command, each in the file that
// owns its flags (tune_cli.cc, tasks_cli.cc, records_cli.cc, up_cli.cc,
// fleet_cli.cc, model_cli.cc; the flags several read: shared_flags.h), and
// the table main.cc dispatches on and prints as the usage.
#ifndef TUNEFLEET_CLI_CLI_COMMANDS_H_
#define TUNEFLEET_CLI_CLI_COMMANDS_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "clients/cpp/fleet_client.h"

namespace tunefleet {

// A command's positional arguments after its name (`token new ...`).
using CliArgs = std::vector<std::string>;

struct CliCommand {
  const char* name;
  const char* group;  // the usage's heading: "local mode ...", "the fleet", "credentials"
  const char* usage;  // its usage lines, after the name
  absl::Status (*run)(const CliArgs& args);
};

// Every command, in the usage's order.
const std::vector<CliCommand>& CliCommands();
// The usage: every command's lines under its group's heading.
std::string CliUsage();

[[nodiscard]] absl::Status TuneCli(const CliArgs& args);
[[nodiscard]] absl::Status TasksCli(const CliArgs& args);
[[nodiscard]] absl::Status BestCli(const CliArgs& args);
[[nodiscard]] absl::Status MeasureCli(const CliArgs& args);
[[nodiscard]] absl::Status TrainPriorCli(const CliArgs& args);
[[nodiscard]] absl::Status UpCli(const CliArgs& args);
[[nodiscard]] absl::Status SubmitCli(const CliArgs& args);
[[nodiscard]] absl::Status WatchCli(const CliArgs& args);
[[nodiscard]] absl::Status JobsCli(const CliArgs& args);
[[nodiscard]] absl::Status DevicesCli(const CliArgs& args);
[[nodiscard]] absl::Status QueueCli(const CliArgs& args);
[[nodiscard]] absl::Status ExportCli(const CliArgs& args);
[[nodiscard]] absl::Status CancelCli(const CliArgs& args);
[[nodiscard]] absl::Status OptimizeCli(const CliArgs& args);
[[nodiscard]] absl::Status CompileCli(const CliArgs& args);
[[nodiscard]] absl::Status RunCli(const CliArgs& args);
[[nodiscard]] absl::Status OperatorsCli(const CliArgs& args);

// fleet_cli.cc: --job, and `fn` run on a client of the tracker the flags name
// (--tracker, --token_file, TLS, --insecure, --fleet_dir); an unavailable
// tracker's error says why TLS failed where it did.
std::string FleetJobFlag();
[[nodiscard]] absl::Status WithFleetClient(const std::function<absl::Status(FleetClient&)>& fn);

}  // namespace tunefleet

#endif  // TUNEFLEET_CLI_CLI_COMMANDS_H_
