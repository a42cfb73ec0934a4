// Reading logs that TVM's AutoTVM wrote (autotvm.record.encode, TVM v0.18 and
// earlier), line by line, as TuneFleet records. A v0.2 line looks like
//
//   {"input": ["llvm -keys=cpu -mcpu=skylake-avx512", "dense_nopack.x86",
//              [["TENSOR", [1, 512], "float32"], ["TENSOR", [1000, 512], "float32"],
//               null, "float32"], {}],
//    "config": {"index": 123, "code_hash": null,
//               "entity": [["tile_y", "sp", [-1, 1, 1]], ["unroll_kw", "ot", true], ...]},
//    "result": [[0.0012], 0, 1.23, 1700000000.0], "version": 0.2, "tvm_version": "0.18.0"}
//
// (v0.1 lines, {"i": ..., "r": ..., "v": 0.1}, are refused with a reason, as
// TVM itself has refused them since v0.7). A line becomes a record when
//   1. its task maps onto a TuneFleet workload (tvm_workload.h),
//   2. a TuneFleet template serves that workload: the template of the same
//      name if there is one, else the workload's default for the target, and
//   3. its config is a config of that template's space: every knob of the
//      space exactly once, no other knob, each value one of its choices
//      (JSON true/false read as 1/0 for integer knobs). AutoTVM's "index"
//      counts in AutoTVM's space, so ours is recomputed from the entity.
// Otherwise the line's error says which step failed and why. The record's
// target is TVM's target string unchanged; the result keeps costs, error
// number (the same numbering), total time and timestamp.
//
// ReadRecordLines (record_file.h) reads whole files of either format.
#ifndef TUNEFLEET_TUNER_CORE_RECORDS_TVM_RECORD_H_
#define TUNEFLEET_TUNER_CORE_RECORDS_TVM_RECORD_H_

#include <memory>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "tuner_core/records/record.h"
#include "tuner_core/space/config_space.h"

namespace tunefleet {

// True when a parsed line is in AutoTVM's shape and not TuneFleet's: a v0.1
// line, or a line whose "tvm_version" was not written by TuneFleet.
bool IsTvmRecordJson(const nlohmann::json& line);

// Converts AutoTVM lines into records. Keeps the spaces of the tasks it has
// seen, so a log of many trials of few tasks defines each space once. Not
// thread-safe.
class TvmRecordConverter {
 public:
  // InvalidArgument naming why the line is not a usable record: not JSON,
  // not an AutoTVM record, a task with no TuneFleet workload or template, or
  // a config outside the template's space.
  [[nodiscard]] absl::StatusOr<Record> Convert(std::string_view line);
  // The same, for a line already parsed.
  [[nodiscard]] absl::StatusOr<Record> ConvertJson(const nlohmann::json& line);

 private:
  struct TemplateSpace {
    std::string template_name;
    ConfigSpace space;
  };
  // The template and space for a workload, made once per (task, workload
  // args, target kind).
  [[nodiscard]] absl::StatusOr<std::shared_ptr<const TemplateSpace>> SpaceFor(
      const std::string& tvm_task_name, const std::string& workload_name,
      const nlohmann::json& workload_args, const std::string& target);

  // Failures are kept too: a task that cannot be served fails every line.
  absl::flat_hash_map<std::string, absl::StatusOr<std::shared_ptr<const TemplateSpace>>> spaces_;
};

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_RECORDS_TVM_RECORD_H_
