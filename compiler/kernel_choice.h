// Which config each tuned layer of a model is compiled with: AutoTVM's
// ApplyHistoryBest over a records file (the best record of the layer's
// workload for the compile target), or, for a layer no record covers, a
// default config of the workload's default template with a warning naming
// the layer (AutoTVM's fallback). Defaults (toolchain/default_config.h):
// vectors of the target's width, register tiles by its vector registers,
// and for dense dense_gemm.x86's dot kernel (a few rows) or its weights
// packed once at compile time. Beside the best, each workload's candidates
// (one per layout the records offer) let layout_choice.h trade a little kernel time for fewer
// relayouts.
//
//   TF_ASSIGN_OR_RETURN(RecordSelection selection,
//                       SelectRecords("r.jsonl", layers, "llvm -mcpu=skylake"));
//   TF_ASSIGN_OR_RETURN(KernelChoice choice, ChooseKernel(layer, selection, target, 16));
#ifndef TUNEFLEET_COMPILER_KERNEL_CHOICE_H_
#define TUNEFLEET_COMPILER_KERNEL_CHOICE_H_

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "toolchain/default_config.h"
#include "tuner_core/models/model_zoo.h"
#include "tuner_core/records/record.h"
#include "tuner_core/templates/task.h"

namespace tunefleet {

struct RecordSelection {
  // Best record per (workload name, canonical args dump), with its line.
  std::map<std::pair<std::string, std::string>, std::pair<Record, int64_t>> best;
  // Per workload, the best record, then the fastest successful record of
  // each other template and channel-block/row-tile knobs (each layout the
  // records offer; a validated record before any search figure, then by
  // ReportedCost(), as BestRecord orders them), with their lines: what a
  // layout-aware choice (layout_choice.h) picks from.
  std::map<std::pair<std::string, std::string>, std::vector<std::pair<Record, int64_t>>> candidates;
  std::string path;
  // Records ignored: other targets, workloads the model does not have, a torn last line,
  // configs whose register tile no longer fits the target (a template that now tiles
  // the workload differently).
  std::vector<std::string> warnings;
};

// Reads `path` (empty: no records) and keeps the best successful record of
// each workload of `layers` for `target` (exact string) whose config still
// builds there (its register tile fits the target's registers). InvalidArgument
// naming the file and line for a corrupt line; FailedPrecondition when the
// file holds records but none for `target` (naming the targets it has).
[[nodiscard]] absl::StatusOr<RecordSelection> SelectRecords(const std::string& path,
                                                            const std::vector<ModelLayer>& layers,
                                                            const std::string& target);

struct KernelChoice {
  std::unique_ptr<Task> task;
  Config config;
  bool tuned = false;  // false: the default config (no record)
  std::string source;  // "r.jsonl:12" or "default config"
};

// The task and config of `layer`: its best record's, or the default
// template's default config (`vector_lanes` fp32 lanes of one of the
// target's vector registers guide the default, which is always a config the
// builder would build for `target`: its register tile fits the target's
// vector registers, tuner_core/templates/register_fit.h). Errors name the record line whose
// template or config does not fit the workload. `tile`: how a default config's register tile is
// chosen (toolchain/default_config.h).
[[nodiscard]] absl::StatusOr<KernelChoice> ChooseKernel(const ModelLayer& layer,
                                                        const RecordSelection& records,
                                                        const std::string& target, int vector_lanes,
                                                        DefaultTile tile = DefaultTile::kTarget);

// The records of `layer`'s workload that ChooseKernel picks from
// (RecordSelection::candidates; empty when none).
const std::vector<std::pair<Record, int64_t>>& CandidateRecords(const ModelLayer& layer,
                                                                const RecordSelection& records);

// The task and config of one record (a candidate of CandidateRecords);
// errors as ChooseKernel's.
[[nodiscard]] absl::StatusOr<KernelChoice> KernelChoiceOfRecord(const Record& record, int64_t line,
                                                                const std::string& path,
                                                                const std::string& target);

}  // namespace tunefleet

#endif  // TUNEFLEET_COMPILER_KERNEL_CHOICE_H_
