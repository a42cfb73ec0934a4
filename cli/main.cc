// tunefleet: the command line. Flags -> options -> one command -> exit code.
//   tunefleet tune --workload dense --shape 1024,1024,1024 --trials 500 --log records.jsonl
//   tunefleet best --log records.jsonl
//   tunefleet templates
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "cli/tune_command.h"

ABSL_FLAG(std::string, workload, "dense", "workload to tune");
ABSL_FLAG(std::string, shape, "", "workload shape, e.g. M,N,K for dense");
ABSL_FLAG(std::string, layout, "NK", "dense: NK (B is [N,K], like a linear layer) or KN");
ABSL_FLAG(std::string, template_name, "", "template (default: the workload's best)");
ABSL_FLAG(std::string, tuner, "random", "search strategy: grid | random");
ABSL_FLAG(int64_t, trials, 500, "number of trials");
ABSL_FLAG(int64_t, early_stopping, -1, "stop after this many trials without improvement (<0: off)");
ABSL_FLAG(int32_t, batch, 8, "configs built in parallel, then measured one by one");
ABSL_FLAG(std::string, log, "", "records file (JSON lines, appended)");
ABSL_FLAG(std::string, target, "", "LLVM target string (default: the host, llvm -mcpu=<cpu>)");
ABSL_FLAG(uint64_t, seed, 0, "tuner seed (a run can be replayed)");
ABSL_FLAG(int32_t, threads, 0, "kernel threads (0: every core)");
ABSL_FLAG(int32_t, number, 4, "runs per repeat (AutoTVM number)");
ABSL_FLAG(int32_t, repeat, 3, "repeats (AutoTVM repeat)");
ABSL_FLAG(int32_t, min_repeat_ms, 0, "grow number until a repeat lasts this long");
ABSL_FLAG(double, cooldown, 0.0, "seconds to sleep between repeats (AutoTVM default 0.1)");
ABSL_FLAG(bool, cache_flush, false, "flush the inputs from the CPU caches before each repeat");
ABSL_FLAG(double, timeout, 10.0, "seconds one measurement may take before RUN_TIMEOUT");
ABSL_FLAG(bool, resume, true, "skip configs already recorded in --log for this task");

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "tunefleet <tune|best|templates> [flags]\n"
      "  tune       build and measure configs locally (no RPC) and record them\n"
      "  best       print the best record per task in --log\n"
      "  templates  list the kernel templates");
  std::vector<char*> positional = absl::ParseCommandLine(argc, argv);
  const std::string command = positional.size() > 1 ? positional[1] : "";

  absl::Status status;
  if (command == "tune") {
    tunefleet::TuneCommandOptions o;
    o.workload = absl::GetFlag(FLAGS_workload);
    o.shape = absl::GetFlag(FLAGS_shape);
    o.layout = absl::GetFlag(FLAGS_layout);
    o.template_name = absl::GetFlag(FLAGS_template_name);
    o.tuner = absl::GetFlag(FLAGS_tuner);
    o.trials = absl::GetFlag(FLAGS_trials);
    o.early_stopping = absl::GetFlag(FLAGS_early_stopping);
    o.batch_size = absl::GetFlag(FLAGS_batch);
    o.log = absl::GetFlag(FLAGS_log);
    o.target = absl::GetFlag(FLAGS_target);
    o.seed = absl::GetFlag(FLAGS_seed);
    o.resume = absl::GetFlag(FLAGS_resume);
    o.local.runner.num_threads = absl::GetFlag(FLAGS_threads);
    o.local.measure.number = absl::GetFlag(FLAGS_number);
    o.local.measure.repeat = absl::GetFlag(FLAGS_repeat);
    o.local.measure.min_repeat_ms = absl::GetFlag(FLAGS_min_repeat_ms);
    o.local.measure.cooldown_interval_s = absl::GetFlag(FLAGS_cooldown);
    o.local.measure.enable_cpu_cache_flush = absl::GetFlag(FLAGS_cache_flush);
    o.local.measure.timeout_s = absl::GetFlag(FLAGS_timeout);
    status = tunefleet::RunTune(o, std::cerr, std::cout).status();
  } else if (command == "best") {
    status = tunefleet::RunBest(absl::GetFlag(FLAGS_log), std::cout);
  } else if (command == "templates") {
    for (const tunefleet::Template* t : tunefleet::AllTemplates()) {
      std::cout << t->name() << " (" << t->workload_name() << "): " << t->description() << "\n";
    }
  } else {
    std::cerr << absl::ProgramUsageMessage() << "\n";
    return 2;
  }
  if (!status.ok()) {
    std::cerr << "tunefleet " << command << ": " << status.message() << "\n";
    return 1;
  }
  return 0;
}
