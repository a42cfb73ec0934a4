// The local-mode commands of the `tunefleet` CLI as library functions, so the
// benchmark and tests call exactly what users run:
//
//   tunefleet tune --workload dense --shape 1024,1024,1024 --tuner xgb
//       --trials 500 --log records.jsonl [--transfer_log other_shapes.jsonl]
//   tunefleet best --log records.jsonl
#ifndef TUNEFLEET_LOCAL_TUNE_COMMAND_H_
#define TUNEFLEET_LOCAL_TUNE_COMMAND_H_

#include <cstdint>
#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "local/local_measurer.h"
#include "nlohmann/json.hpp"

namespace tunefleet {

struct TuneCommandOptions {
  std::string workload = "dense";
  nlohmann::json args;           // the workload's args (JSON object); null: from shape/layout
  std::string shape;             // "M,N,K" for dense, "B,M,N,K" for batch_matmul
  std::string layout = "NK";     // dense: NK (B is [N,K]) or KN
  std::string template_name;     // empty: the workload's default template
  std::string tuner = "random";  // grid | random | ga | xgb | xgb_rank | xgb_knob | xgb_curve
  int plan_size = 64;            // xgb*: refit every plan_size results
  std::string transfer_log;      // xgb*: records of other shapes to warm-start the model
  int64_t trials = 500;
  int64_t early_stopping = -1;
  int batch_size = 8;
  std::string log;     // records file (appended); empty: none
  std::string target;  // empty: the host ("llvm -mcpu=<host cpu>")
  uint64_t seed = 0;
  bool resume = true;                     // skip configs already in --log for this task
  std::string task_label = "[Task 1/1]";  // prefix of the progress line
  LocalMeasurerOptions local;
};

struct TuneSummary {
  std::string task_name;
  std::string workload;  // Describe()
  std::string target;
  int64_t trials = 0;
  int64_t resumed = 0;  // configs skipped because --log had them
  double best_gflops = 0;
  double best_cost_seconds = 0;
  nlohmann::json best_config;  // null when nothing succeeded
  double wall_seconds = 0;
  LocalTimings timings;
  double model_seconds = 0;  // xgb*: fitting + selecting (ModelTimings::total_seconds)
};

// Workload args from the CLI's --workload/--shape/--layout (dense and
// batch_matmul; other workloads take --args).
[[nodiscard]] absl::StatusOr<nlohmann::json> WorkloadArgsFromShape(const std::string& workload,
                                                                   const std::string& shape,
                                                                   const std::string& layout);

// Runs the tuning job; progress lines go to `progress`, the summary to `out`.
[[nodiscard]] absl::StatusOr<TuneSummary> RunTune(const TuneCommandOptions& options,
                                                  std::ostream& progress, std::ostream& out);

// Prints the best record per task in `log` with its GFLOPS.
[[nodiscard]] absl::Status RunBest(const std::string& log, std::ostream& out);

}  // namespace tunefleet

#endif  // TUNEFLEET_LOCAL_TUNE_COMMAND_H_
