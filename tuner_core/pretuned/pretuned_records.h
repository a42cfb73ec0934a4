// Records to start tuning from (AutoTVM's TopHub): the fastest configs found
// for the zoo's tasks on each CPU family the project was measured on, shipped
// inside the binaries (data/<family>.jsonl), or a user's own record file.
// They are each task's first candidates, measured on the user's machine like
// every other trial, so they win only where they are fast there: a record
// tuned on another machine can be slow on this one.
//
//   TF_ASSIGN_OR_RETURN(std::shared_ptr<const PretunedRecords> shipped,
//                       PretunedRecords::Shipped("x86_64-avx512"));
//   std::vector<Config> first = shipped->ConfigsFor(task, 3);
//
// Lookup: the records of the task's own template and workload (its name and
// args), fastest first; a task with none takes the records of the nearest
// workload of its template (same workload name and non-numeric args; numeric
// args compared by the sum of |log ratio|), each carried to the nearest
// config of the task's space (MapConfigJsonNearest). A record's target string
// is not compared: its family is (records from a Zen 4 serve a Sapphire
// Rapids, both AVX-512, and are re-measured there).
#ifndef TUNEFLEET_TUNER_CORE_PRETUNED_PRETUNED_RECORDS_H_
#define TUNEFLEET_TUNER_CORE_PRETUNED_PRETUNED_RECORDS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"
#include "tuner_core/space/config_space.h"
#include "tuner_core/templates/task.h"

namespace tunefleet {

// How many pretuned configs a task measures first, locally and on the fleet
// (its own workload's fastest, or the nearest workload's).
inline constexpr int kPretunedConfigsPerTask = 3;

class PretunedRecords {
 public:
  PretunedRecords() = default;  // none: a cold start

  // The records shipped for `family` (TargetSpec::family(), e.g.
  // "x86_64-avx512"); none when the project ships none for it. Parsed once
  // per process and family (every task of every job reads the same ones);
  // thread-safe.
  [[nodiscard]] static absl::StatusOr<std::shared_ptr<const PretunedRecords>> Shipped(
      absl::string_view family);
  // The families the project ships records for.
  static std::vector<std::string> ShippedFamilies();
  // The records of a record file (`tune --log`'s format). Errors of
  // ReadFileToString; InvalidArgument naming the line of a malformed record.
  [[nodiscard]] static absl::StatusOr<PretunedRecords> ReadFile(const std::string& path);
  // Record lines; `source` names them in errors. Failed trials are skipped.
  [[nodiscard]] static absl::StatusOr<PretunedRecords> Parse(absl::string_view text,
                                                             absl::string_view source);

  // Up to `k` distinct configs of the task's space, fastest first: its own
  // workload's records, else the nearest workload's. Empty when the
  // template has no record.
  std::vector<Config> ConfigsFor(const Task& task, int k) const;

  int64_t num_records() const { return num_records_; }
  int num_workloads() const;

 private:
  struct Workload {
    std::string name;
    nlohmann::json args;
    std::vector<std::pair<double, nlohmann::json>> configs;  // (cost, config JSON), fastest first
  };
  // By template name.
  std::map<std::string, std::vector<Workload>> by_template_;
  int64_t num_records_ = 0;
};

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_PRETUNED_PRETUNED_RECORDS_H_
