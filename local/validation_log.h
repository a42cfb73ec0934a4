// Writes validations (validated winners, tuner_core/measure/validation.h)
// into a records file: each validated record's search line gets the
// "validation" object (record.h), every other line stays byte-identical.
//
//   TF_ASSIGN_OR_RETURN(int updated, WriteValidationsToLog("r.jsonl", validated_records));
//
// The file is replaced atomically: the new content goes to a temporary file
// in the same directory, which is fsynced and renamed over the old one (and
// the directory fsynced), so a crash leaves either the old or the new file.
// Nobody may be appending to the file meanwhile (a writer still open on the
// old file would append to the replaced copy): close the RecordWriter first.
#ifndef TUNEFLEET_LOCAL_VALIDATION_LOG_H_
#define TUNEFLEET_LOCAL_VALIDATION_LOG_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tuner_core/records/record.h"

namespace tunefleet {

// For each record of `validated` (its `validation` set), finds the line of
// `path` in TuneFleet's format with the same task_name, workload_name,
// workload_args, target and config "index" that succeeded, the cheapest
// such line if there are several (ties: the first), and sets that line's
// "validation" (replacing an earlier one). Returns how many lines changed;
// a record with no such line changes none (e.g. a config resumed from an
// AutoTVM line). The file is rewritten only when a line changed; its
// permissions are kept. NotFound when `path` does not exist; Internal
// naming the path and the system error for I/O failures.
[[nodiscard]] absl::StatusOr<int> WriteValidationsToLog(const std::string& path,
                                                        const std::vector<Record>& validated);

}  // namespace tunefleet

#endif  // TUNEFLEET_LOCAL_VALIDATION_LOG_H_
