#include "tuner_process/job_runner.h"

#include <algorithm>
#include <chrono>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "proto_convert/measure_result.h"
#include "proto_convert/task_spec.h"
#include "tuner_core/tuners/tuner_factory.h"

namespace tunefleet {
namespace {

double NowSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

absl::StatusOr<std::unique_ptr<JobRunner>> JobRunner::Create(
    const proto::JobAssignment& assignment) {
  const proto::JobSpec& spec = assignment.spec();
  absl::StatusOr<std::unique_ptr<Task>> made = TaskFromSpec(spec.task());
  if (!made.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("job ", assignment.job_id(), ": ", made.status().message()));
  }
  std::unique_ptr<Task> task = *std::move(made);
  TunerOptions tuner_options;
  tuner_options.seed = spec.seed();
  tuner_options.task = task.get();  // owned by the runner, outlives the tuner
  TF_ASSIGN_OR_RETURN(std::unique_ptr<Tuner> tuner,
                      MakeTuner(spec.tuner(), task->space(), tuner_options));
  std::unique_ptr<JobRunner> runner(
      new JobRunner(assignment.job_id(), spec, std::move(task), std::move(tuner)));
  runner->started_ = NowSeconds();
  runner->window_ = std::max(1, assignment.suggested_window());
  for (const proto::KnownTrial& t : assignment.trials()) {
    runner->tuner_->MarkVisited(t.config_index());
    ++runner->known_;
    if (t.done()) {
      runner->Learn(t.config_json(), t.result());
    } else {
      ++runner->in_flight_;
    }
  }
  return runner;
}

void JobRunner::Learn(const std::string& config_json, const proto::TrialResult& result) {
  ++done_;
  MeasureResult m = ToMeasureResult(result);
  last_gflops_ = 0;
  if (m.ok()) {
    double cost = m.MeanCost();
    last_gflops_ = cost > 0 ? task_->workload().flops() / cost / 1e9 : 0;
    if (best_cost_ == 0 || cost < best_cost_) {
      best_cost_ = cost;
      best_gflops_ = last_gflops_;
      best_trial_ = done_ - 1;
    }
  }
  absl::StatusOr<Config> config = task_->space().FromJsonString(config_json);
  if (!config.ok()) {
    TF_LOG(WARNING) << "job " << job_id_
                    << ": a result for a config outside the space: " << config.status();
    return;
  }
  tuner_->Update({TrialResult{*std::move(config), std::move(m)}});
}

proto::ProposeTrials JobRunner::NextProposals() {
  proto::ProposeTrials p;
  p.set_job_id(job_id_);
  if (finished_sent_) return p;
  const int64_t n = spec_.n_trial();
  if (spec_.early_stopping() >= 0 && best_trial_ >= 0 &&
      done_ - best_trial_ >= spec_.early_stopping()) {
    finished_sent_ = true;
    p.set_finished(true);
    p.set_finish_reason(absl::StrCat("early stopping: no better config in the last ",
                                     spec_.early_stopping(), " trials"));
    return p;
  }
  const int64_t room = std::min<int64_t>(window_ - in_flight_, n - known_);
  if (room > 0 && tuner_->HasNext()) {
    std::vector<Config> configs = tuner_->NextBatch(static_cast<int>(room));
    for (const Config& c : configs) {
      proto::ProposedConfig* pc = p.add_configs();
      pc->set_config_json(c.ToJson().dump());
      pc->set_config_index(c.index());
    }
    in_flight_ += static_cast<int64_t>(configs.size());
    known_ += static_cast<int64_t>(configs.size());
  }
  if (known_ < n && !tuner_->HasNext()) {
    finished_sent_ = true;
    p.set_finished(true);
    p.set_finish_reason(
        absl::StrCat("the search space is exhausted (", task_->space().size(), " configs)"));
  }
  return p;
}

void JobRunner::OnAccepted(const proto::TrialsAccepted& accepted) {
  const int64_t rejected = accepted.rejected_size();
  in_flight_ = std::max<int64_t>(0, in_flight_ - rejected);
  known_ = std::max<int64_t>(0, known_ - rejected);
  for (const std::string& why : accepted.rejected()) {
    TF_LOG(WARNING) << "job " << job_id_ << ": the tracker refused a config: " << why;
  }
}

void JobRunner::OnTrialUpdate(const proto::TrialUpdate& update) {
  if (update.suggested_window() > 0) window_ = update.suggested_window();
  in_flight_ = std::max<int64_t>(0, in_flight_ - 1);
  Learn(update.config_json(), update.result());
}

std::string JobRunner::Progress() const {
  return ProgressLine(absl::StrCat("[", job_id_, "]"), last_gflops_, best_gflops_, done_,
                      spec_.n_trial(), NowSeconds() - started_);
}

}  // namespace tunefleet
