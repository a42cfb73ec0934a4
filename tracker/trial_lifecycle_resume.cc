// TrialLifecycle's resumption (trial_lifecycle.h): loading a store's jobs
// and trials back into the table after a restart.
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "proto_convert/task_spec.h"
#include "tracker/trial_lifecycle.h"
#include "tracker/validation.h"

namespace tunefleet {

namespace {

// A spec stored before MeasureOptions' fields were `optional`: proto3 left
// out the fields that were zero, which now read as unset (default). They
// were zero; keep them so.
void KeepStoredZeros(proto::MeasureOptions& m) {
  if (!m.has_cooldown_interval_s()) m.set_cooldown_interval_s(0);
  if (!m.has_check_correctness()) m.set_check_correctness(false);
  if (!m.has_input_seed()) m.set_input_seed(0);
}

}  // namespace

absl::Status TrialLifecycle::Resume(Store& store) {
  TF_ASSIGN_OR_RETURN(std::vector<StoredJob> stored, store.LoadJobs());
  for (StoredJob& stored_job : stored) {
    auto job = std::make_unique<Job>();
    job->stored = std::move(stored_job);
    const std::string id = job->stored.job_id;
    // A job stored before jobs had several tasks takes the canonical form.
    if (job->stored.spec.has_task()) KeepStoredZeros(*job->stored.spec.mutable_measure());
    const absl::Status canonical = CanonicalizeJobTasks(job->stored.spec);
    absl::StatusOr<std::vector<JobTask>> tasks =
        canonical.ok() ? LoadJobTasks(job->stored.spec)
                       : absl::StatusOr<std::vector<JobTask>>(canonical);
    std::string cannot_resume;
    if (!tasks.ok()) {
      cannot_resume = std::string(tasks.status().message());
    } else {
      job->tasks = std::move(*tasks);
      // Finished jobs too: their per-task progress and best are what the
      // job API reports of them.
      absl::StatusOr<std::vector<StoredTrial>> trials = store.LoadTrials(id);
      if (absl::IsDataLoss(trials.status())) {
        // A damaged trial row fails its job only; every other job resumes.
        TF_LOG(ERROR) << "job " << id << ": " << trials.status().message();
        cannot_resume = std::string(trials.status().message());
      } else if (!trials.ok()) {
        return trials.status();
      } else {
        cannot_resume = LoadTrials(*job, *trials);
      }
    }
    if (!cannot_resume.empty() && !job->finished()) {
      // The code that accepted it no longer does (e.g. a template was
      // removed) or a row is damaged: fail this job, keep the others.
      job->stored.state = proto::FAILED;
      job->stored.message = absl::StrCat("cannot resume: ", cannot_resume);
      job->stored.finished_at = clock_->WallSeconds();
      job->to_build.clear();
      TF_RETURN_IF_ERROR(writer_->PutJob(job->stored));
    }
    if (!job->finished()) {
      if (job->stored.state == proto::RUNNING)
        job->stored.state = proto::QUEUED;  // until a tuner claims it
      TF_LOG(INFO) << "resuming job " << id << ": " << job->done << " of "
                   << job->stored.spec.n_trial() << " trials done, " << job->to_build.size()
                   << " to build again";
    }
    jobs_->Add(std::move(job));
  }
  return absl::OkStatus();
}

std::string TrialLifecycle::LoadTrials(Job& job, std::vector<StoredTrial>& rows) {
  for (StoredTrial& row : rows) {
    if (row.task_index < 0 || row.task_index >= static_cast<int32_t>(job.tasks.size())) {
      return absl::StrCat("trial ", row.trial_id, " names task ", row.task_index,
                          " but the job has ", job.tasks.size(), " tasks");
    }
    Trial t;
    t.id = row.trial_id;
    t.config_json = std::move(row.config_json);
    t.config_index = row.config_index;
    t.task_index = row.task_index;
    t.attempts = row.attempts;
    t.validates = row.validates;
    t.validation_pass = row.validation_pass;
    if (t.validates >= 0) {
      ++job.validations;
    } else {
      ++job.tasks[t.task_index].trials;
    }
    if (row.done) {
      t.done = true;
      t.state = TrialState::kDone;
      t.result = std::move(row.result);
      if (t.validates >= 0) {
        ++job.validations_done;
      } else {
        ++job.done;
        CountOutcome(job, t);
      }
    } else if (!job.finished()) {
      t.state = TrialState::kToBuild;
      t.queued_at = clock_->NowSeconds();
      job.to_build.push_back(t.id);
    } else {
      t.state = TrialState::kDone;  // dropped when its job ended
    }
    job.trials.emplace(t.id, std::move(t));
  }
  for (const auto& [id, t] : job.trials) {
    if (t.validates >= 0 && job.trials.count(t.validates) == 0) {
      return absl::StrCat("validation trial ", id, " validates trial ", t.validates,
                          " that the job does not have");
    }
  }
  // A finished job's validation was stored before it ended: apply it.
  if (job.finished() && job.validations > 0 && job.validations_done == job.validations) {
    ApplyValidation(job, SummarizeValidation(job));
  }
  return "";
}

}  // namespace tunefleet
