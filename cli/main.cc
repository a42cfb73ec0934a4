// tunefleet: the command line. Flags -> one command (cli_commands.h) -> exit
// code; each command's flags live in its own file.
//   tunefleet tune --workload dense --shape 1024,1024,1024 --trials 500 --log records.jsonl
//   tunefleet best --log records.jsonl
//   tunefleet measure --log records.jsonl [--top 5] [--task dense_pack.x86] [--passes 3]
//   tunefleet measure --log records.jsonl --key rk3399   # on that key's agents
//   tunefleet templates
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "cli/cli_commands.h"

int main(int argc, char** argv) {
  const std::string usage = tunefleet::CliUsage();
  absl::SetProgramUsageMessage(usage);
  const std::vector<char*> positional = absl::ParseCommandLine(argc, argv);
  const std::string command = positional.size() > 1 ? positional[1] : "";
  for (const tunefleet::CliCommand& c : tunefleet::CliCommands()) {
    if (command != c.name) continue;
    const absl::Status status = c.run(tunefleet::CliArgs(positional.begin() + 2, positional.end()));
    if (status.ok()) return 0;
    std::cerr << "tunefleet " << command << ": " << status.message() << "\n";
    return 1;
  }
  std::cerr << usage << "\n";
  return 2;
}
