// One tuning record: which kernel was tried (target, template, workload), with
// which config, and what the measurement said. Encoded as one JSON line in
// AutoTVM's record shape, so tools that read AutoTVM logs read ours:
//
//   {"input": ["llvm -mcpu=znver3", "dense_pack.x86",
//              ["dense", {"K": 512, "M": 512, "N": 512, "layout": "NK"}], {}],
//    "config": {"index": 17, "code_hash": null, "entity": [["tile_y", "sp", [-1, 4]], ...]},
//    "result": [[0.0012, 0.0011, 0.0012], 0, 1.83, 1700000000.5],
//    "version": 0.2, "tvm_version": "tunefleet-0.1"}
//
// (one line in the file). "result" is [costs, error_no, all_cost, timestamp];
// a failed trial's costs are [1e9], AutoTVM's convention. A failed trial also
// carries a top-level "error_msg" string, which AutoTVM readers ignore, so the
// reason for a failure survives in the log. A success measured by TuneFleet
// carries a top-level "spread" object, {"timed_repeats": 12, "stddev_s":
// 2.1e-05, "rel_ci": 0.014} (MeasureResult's fields; the last two only when
// known), which AutoTVM readers ignore too; FromLine reads it back.
//
// A search record whose config was re-measured as one of the job's top-k
// (validated winners, tuner_core/measure/validation.h) also carries a
// top-level "validation" object, {"cost_s": 0.00118, "pass_costs": [0.00118,
// 0.00119, 0.00117], "failed_passes": 0, "timed_repeats": 54, "rel_spread":
// 0.017, "max_rel_ci": 0.008} ("cost_s" and "rel_spread" are derived from
// "pass_costs" and written for human readers; "max_rel_ci" only when
// known). AutoTVM readers ignore it and see the search measurement; our
// readers report the validated figure (ReportedCost) where there is one.
//
// Reading and writing files of records: record_file.h. Picking the best
// record of a workload: best_record.h.
#ifndef TUNEFLEET_TUNER_CORE_RECORDS_RECORD_H_
#define TUNEFLEET_TUNER_CORE_RECORDS_RECORD_H_

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "tuner_core/measure/measure.h"
#include "tuner_core/measure/validation.h"

namespace tunefleet {

// Written into every record's "version" and "tvm_version" fields.
inline constexpr double kRecordFormatVersion = 0.2;
inline constexpr char kRecordProducer[] = "tunefleet-0.1";

struct Record {
  std::string target;         // target string, e.g. "llvm -mcpu=znver3"
  std::string task_name;      // template name, e.g. "dense_pack.x86"
  std::string workload_name;  // e.g. "dense"
  nlohmann::json workload_args = nlohmann::json::object();  // e.g. {"M": 512, ...}
  nlohmann::json config = nlohmann::json::object();         // raw config JSON (Config::ToJson())
  MeasureResult result;
  // Set when this config was validated (one of its job's top-k).
  std::optional<Validation> validation;

  // The record as one JSON line, without the trailing newline. Failed
  // results are written with costs [1e9].
  std::string ToLine() const;
  // Parses one line. InvalidArgument naming the bad field (e.g.
  // `record field "result"[1] (error_no): ...`) for anything that is not a
  // well-formed record.
  [[nodiscard]] static absl::StatusOr<Record> FromLine(std::string_view line);

  // GFLOPS of this trial for a workload of `flops` floating-point operations:
  // flops / MeanCost / 1e9, or 0 for a failed trial.
  double Gflops(double flops) const;

  // The figure a reader reports for this record: the validated cost when it
  // was validated with a successful pass, else the search's MeanCost(); 1e9
  // for a failed trial.
  double ReportedCost() const;
  bool validated() const { return validation.has_value() && validation->ok(); }
};

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_RECORDS_RECORD_H_
