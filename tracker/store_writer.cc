#include "tracker/store_writer.h"

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "proto_convert/measure_result.h"
#include "proto_convert/run_request.h"
#include "proto_convert/task_spec.h"
#include "tuner_core/records/record.h"

namespace tunefleet {
namespace {

[[nodiscard]] absl::Status Explained(const absl::Status& status, const std::string& what) {
  if (status.ok()) return status;
  return absl::Status(status.code(),
                      absl::StrCat("store write failed (", what, "): ", status.message()));
}

StoredTrial RowOf(const Job& job, const Trial& trial) {
  StoredTrial row;
  row.job_id = job.stored.job_id;
  row.trial_id = trial.id;
  row.config_json = trial.config_json;
  row.config_index = trial.config_index;
  row.task_index = trial.task_index;
  row.attempts = trial.attempts;
  row.validates = trial.validates;
  row.validation_pass = trial.validation_pass;
  return row;
}

StoredTrial DoneRowOf(const Job& job, const Trial& trial) {
  StoredTrial row = RowOf(job, trial);
  row.done = true;
  row.result = trial.result;
  row.record_line = RecordLineOf(job, trial);
  return row;
}

}  // namespace

absl::Status StoreWriter::PutJob(const StoredJob& job) {
  return Explained(store_->PutJob(job),
                   absl::StrCat("job ", job.job_id, " ", proto::JobState_Name(job.state)));
}

absl::Status StoreWriter::PutNewTrials(const Job& job, const std::vector<Trial>& trials) {
  std::vector<StoredTrial> rows;
  rows.reserve(trials.size());
  for (const Trial& trial : trials) rows.push_back(RowOf(job, trial));
  return Explained(store_->PutTrials(rows), absl::StrCat("new trials of job ", job.stored.job_id));
}

absl::Status StoreWriter::PutAttempts(const Job& job, const Trial& trial) {
  return Explained(store_->PutTrials({RowOf(job, trial)}),
                   absl::StrCat("attempts of job ", job.stored.job_id, " trial ", trial.id));
}

absl::Status StoreWriter::PutResult(const Job& job, const Trial& trial) {
  return Explained(store_->PutTrials({DoneRowOf(job, trial)}),
                   absl::StrCat("result of job ", job.stored.job_id, " trial ", trial.id));
}

absl::Status StoreWriter::PutValidated(const Job& job, const std::vector<Trial>& trials) {
  std::vector<StoredTrial> rows;
  rows.reserve(trials.size());
  for (const Trial& trial : trials) rows.push_back(DoneRowOf(job, trial));
  return Explained(store_->PutTrials(rows),
                   absl::StrCat("validated records of job ", job.stored.job_id));
}

std::string RecordLineOf(const Job& job, const Trial& trial) {
  // A validation measurement's figure lives in its search trial's record.
  if (trial.validates >= 0) return "";
  Record record;
  const Task& task = *job.tasks[trial.task_index].task;
  // The target the trial was built for ("native" resolved), else the task's.
  record.target =
      trial.target.empty() ? job.stored.spec.tasks(trial.task_index).task().target() : trial.target;
  record.task_name = task.name();
  record.workload_name = task.workload().name();
  record.workload_args = task.workload().args();
  record.config = nlohmann::json::parse(trial.config_json, nullptr, false);
  record.result = ToMeasureResult(trial.result);
  record.validation = trial.validation;
  return record.ToLine();
}

}  // namespace tunefleet
