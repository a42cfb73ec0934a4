// The files shipped with the project, built into the binaries by
// embed_records.sh: records (data/<family>.jsonl, read through
// PretunedRecords, pretuned_records.h) and cost-model priors
// (data/priors/<family>.jsonl, read through CostModelPriors,
// cost_model_prior.h), not directly.
#ifndef TUNEFLEET_TUNER_CORE_PRETUNED_SHIPPED_RECORDS_H_
#define TUNEFLEET_TUNER_CORE_PRETUNED_SHIPPED_RECORDS_H_

#include <vector>

#include "absl/strings/string_view.h"

namespace tunefleet {

struct ShippedRecordFile {
  absl::string_view family;  // e.g. "x86_64-avx512" (TargetSpec::family())
  absl::string_view text;    // the file's lines
};

std::vector<ShippedRecordFile> ShippedRecordFiles();
std::vector<ShippedRecordFile> ShippedPriorFiles();

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_PRETUNED_SHIPPED_RECORDS_H_
