// The record files shipped with the project (data/<family>.jsonl), built
// into the binaries by embed_records.sh. Read through PretunedRecords
// (pretuned_records.h), not directly.
#ifndef TUNEFLEET_TUNER_CORE_PRETUNED_SHIPPED_RECORDS_H_
#define TUNEFLEET_TUNER_CORE_PRETUNED_SHIPPED_RECORDS_H_

#include <vector>

#include "absl/strings/string_view.h"

namespace tunefleet {

struct ShippedRecordFile {
  absl::string_view family;  // e.g. "x86_64-avx512" (TargetSpec::family())
  absl::string_view text;    // record lines
};

std::vector<ShippedRecordFile> ShippedRecordFiles();

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_PRETUNED_SHIPPED_RECORDS_H_
