// The files shipped with the project, built into the binaries by
// embed_records.sh: records (data/<family>.jsonl, read through
// PretunedRecords, pretuned_records.h) and cost-model priors
// (data/priors/<family>.jsonl, read through CostModelPriors,
// cost_model_prior.h), not directly.
#ifndef TUNEFLEET_TUNER_CORE_PRETUNED_SHIPPED_RECORDS_H_
#define TUNEFLEET_TUNER_CORE_PRETUNED_SHIPPED_RECORDS_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"

namespace tunefleet {

struct ShippedRecordFile {
  absl::string_view family;  // e.g. "x86_64-avx512" (TargetSpec::family())
  absl::string_view text;    // the file's lines
};

std::vector<ShippedRecordFile> ShippedRecordFiles();
std::vector<ShippedRecordFile> ShippedPriorFiles();
// The families of `files`, in their order.
inline std::vector<std::string> FamiliesOf(const std::vector<ShippedRecordFile>& files) {
  std::vector<std::string> families;
  for (const ShippedRecordFile& file : files) families.emplace_back(file.family);
  return families;
}

// The file of `family` among `files`, parsed by T::Parse(text, source) once
// per process and family (every task of every job reads the same one); an
// empty T where none is shipped. Thread-safe. `what` names it in errors
// ("the records" -> "the records shipped for x86_64-avx2 line 3: ...").
template <typename T>
[[nodiscard]] absl::StatusOr<std::shared_ptr<const T>> ParseShippedOnce(
    absl::string_view family, const std::vector<ShippedRecordFile>& files, absl::string_view what) {
  static absl::Mutex mu(absl::kConstInit);
  static auto* const parsed = new std::map<std::string, std::shared_ptr<const T>, std::less<>>();
  absl::MutexLock lock(&mu);
  auto found = parsed->find(family);
  if (found != parsed->end()) return found->second;
  T value;
  for (const ShippedRecordFile& file : files) {
    if (file.family != family) continue;
    absl::StatusOr<T> read = T::Parse(file.text, absl::StrCat(what, " shipped for ", family));
    if (!read.ok()) return read.status();
    value = *std::move(read);
  }
  auto shared = std::make_shared<const T>(std::move(value));
  parsed->emplace(std::string(family), shared);
  return shared;
}

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_PRETUNED_SHIPPED_RECORDS_H_
