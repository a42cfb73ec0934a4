// SchedulerParts: the scheduler's parts (job table, worker registry, store
// writer, trial life cycle, lease keeper, dispatcher) wired as the Scheduler
// facade wires them, over a FailingStore, fake metrics and a FakeClock, with
// helpers to add workers and jobs. For the focused tests of each part:
//
//   SchedulerParts parts;
//   Worker& agent = parts.AddWorker(proto::AGENT, "agent", "cpu");
//   Job& job = parts.SubmitJob(/*n_trial=*/4);
//   parts.ProposeConfigs(job, {1, 2});
#ifndef TUNEFLEET_TRACKER_SCHEDULER_PARTS_FOR_TEST_H_
#define TUNEFLEET_TRACKER_SCHEDULER_PARTS_FOR_TEST_H_

#include <memory>
#include <string>
#include <vector>

#include "common/clock.h"
#include "proto_convert/measure_result.h"
#include "proto_convert/run_request.h"
#include "proto_convert/task_spec.h"
#include "tracker/dispatcher.h"
#include "tracker/fake_metrics.h"
#include "tracker/fake_outbox.h"
#include "tracker/job_table.h"
#include "tracker/lease_keeper.h"
#include "tracker/store/failing_store.h"
#include "tracker/store_writer.h"
#include "tracker/trial_lifecycle.h"
#include "tracker/worker_registry.h"

namespace tunefleet {

struct SchedulerParts {
  static constexpr char kDenseArgs[] = R"({"M":32,"N":32,"K":32,"layout":"NK"})";

  explicit SchedulerParts(SchedulerOptions scheduler_options = SchedulerOptions())
      : options(std::move(scheduler_options)) {}

  // A worker registered from `peer` (agents: reporting `llvm_cpu`, when
  // given); its outbox is outbox_of(worker).
  Worker& AddWorker(proto::WorkerRole role, const std::string& name,
                    const std::string& device_key = "", int parallelism = 1,
                    const std::string& peer = "test", const std::string& llvm_cpu = "") {
    proto::Register r;
    r.set_role(role);
    r.set_name(name);
    r.set_device_key(device_key);
    r.set_parallelism(parallelism);
    if (!llvm_cpu.empty()) r.mutable_device()->set_llvm_cpu(llvm_cpu);
    return workers.Add(r, peer, std::make_shared<FakeOutbox>(), clock.NowSeconds(),
                       clock.WallSeconds());
  }
  static FakeOutbox& outbox_of(const Worker& worker) {
    return static_cast<FakeOutbox&>(*worker.outbox);
  }

  // A QUEUED dense job on `device_key`, stored and in the table; it
  // validates its top `validate_top_k` (0: off, so tests of other parts
  // see only the search's trials) in `passes` passes.
  Job& SubmitJob(int64_t n_trial, const std::string& device_key = "cpu", int priority = 1,
                 int validate_top_k = 0, int passes = 3) {
    proto::JobSpec spec;
    spec.set_validate_top_k(validate_top_k);
    spec.set_validation_passes(passes);
    spec.set_device_key(device_key);
    spec.set_n_trial(n_trial);
    spec.set_priority(priority);
    spec.mutable_task()->set_workload_name("dense");
    spec.mutable_task()->set_workload_args_json(kDenseArgs);
    spec.mutable_task()->set_target("llvm");
    spec = CompleteJobSpec(spec, options).value();
    Job& job = *lifecycle.Submit(spec, LoadJobTasks(spec).value()).value();
    dispatcher.Enroll(job);
    return job;
  }

  // The trials `tuner` (which must hold the job) proposes, by config index.
  std::vector<Trial*> ProposeConfigs(Job& job, Worker& tuner, const std::vector<int64_t>& indices,
                                     bool finished = false, int32_t task_index = 0) {
    proto::ProposeTrials propose;
    propose.set_job_id(job.stored.job_id);
    propose.set_finished(finished);
    for (int64_t i : indices) {
      proto::ProposedConfig* c = propose.add_configs();
      c->set_config_json(job.tasks[task_index].task->space().Get(i).value().ToJson().dump());
      c->set_config_index(i);
      c->set_task_index(task_index);
    }
    const int64_t before = static_cast<int64_t>(job.trials.size());
    lifecycle.Propose(job, tuner, propose, clock.NowSeconds());
    std::vector<Trial*> created;
    for (auto& [id, trial] : job.trials) {
      if (id >= before) created.push_back(&trial);
    }
    return created;
  }

  SchedulerOptions options;
  FakeClock clock{/*start_nanos=*/50'000'000'000};
  FailingStore store;
  FakeTrackerMetrics metrics;
  JobTable jobs;
  WorkerRegistry workers{options.isolate_measurements};
  StoreWriter writer{&store};
  TrialLifecycle lifecycle{&options, &jobs, &workers, &writer, &metrics, &clock};
  LeaseKeeper leases{&jobs, &workers, &lifecycle, &metrics};
  Dispatcher dispatcher{&options, &jobs, &workers, &leases, &lifecycle, &metrics, &clock};
};

}  // namespace tunefleet

#endif  // TUNEFLEET_TRACKER_SCHEDULER_PARTS_FOR_TEST_H_
