// CostOracle: what a config of a workload costs, answered from recorded
// trials, for simulated agents (tests/fake_agent.h) that replay a real
// machine's measurements instead of running kernels: a fleet of 16 agents
// on a 2-core machine then tunes as a fleet of 16 real ones would, with the
// costs and trial times that machine measured (bench/fleet_bench's curve).
//
//   TF_ASSIGN_OR_RETURN(CostOracle oracle, CostOracle::Load("records.jsonl"));
//   TF_ASSIGN_OR_RETURN(CostOracle::Answer a,
//                       oracle.Cost("conv2d_nchw", args_json, config_json));
//   // a.cost_s: the recorded mean cost; a.trial_s: the trial's wall time
//
// A config the records hold gets its own figures (the fastest record when
// it was measured more than once). Another config of a recorded workload
// gets those of the nearest recorded config of that workload (the tabular
// surrogate benchmarks of hyperparameter search use): knob by knob, a number
// or a list of numbers (split factors) counts |log2| of the ratios, any
// other value 0 if equal and 1 if not, a knob the record lacks 1; ties go to
// the record read first. Only successful records are kept. Not for
// production binaries: test scaffolding (testonly).
#ifndef TUNEFLEET_TESTS_COST_ORACLE_H_
#define TUNEFLEET_TESTS_COST_ORACLE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "tuner_core/records/record.h"

namespace tunefleet {

class CostOracle {
 public:
  struct Answer {
    double cost_s = 0;   // the recorded mean cost of one run
    double trial_s = 0;  // the recorded trial's wall time (build + measure)
    bool exact = false;  // the config itself was recorded (else the nearest)
  };

  // InvalidArgument naming the line of a record that does not parse, or
  // when no record is a successful run.
  [[nodiscard]] static absl::StatusOr<CostOracle> Load(const std::string& path);
  [[nodiscard]] static absl::StatusOr<CostOracle> FromRecords(const std::vector<Record>& records);

  // NotFound naming the workload when no record has it; InvalidArgument for
  // args or a config that are not JSON (a config: an object with "entity",
  // or the entity list itself).
  [[nodiscard]] absl::StatusOr<Answer> Cost(const std::string& workload_name,
                                            const std::string& workload_args_json,
                                            const std::string& config_json) const;

  int64_t num_records() const { return num_records_; }
  int num_workloads() const { return static_cast<int>(workloads_.size()); }

 private:
  struct Entry {
    nlohmann::json entity;  // [[knob, kind, value], ...]
    double cost_s = 0;
    double trial_s = 0;
  };
  // (workload name, canonical args) -> its recorded configs.
  absl::flat_hash_map<std::string, std::vector<Entry>> workloads_;
  int64_t num_records_ = 0;
};

}  // namespace tunefleet

#endif  // TUNEFLEET_TESTS_COST_ORACLE_H_
