#include "cli/fleet_commands.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "common/clock.h"
#include "common/daemon_util.h"
#include "common/file_util.h"
#include "common/status_macros.h"
#include "proto_convert/job_state.h"
#include "proto_convert/measure_result.h"
#include "tuner_core/tuners/tuner.h"

namespace tunefleet {
namespace {

std::string StateName(proto::JobState s) { return proto::JobState_Name(s); }

// How long `watch` keeps trying to reach a tracker that went away.
constexpr double kWatchReconnectSeconds = 120;

// One line per finished trial of a model job: the trial's task (0-based, as
// --task takes it) and the model's estimated latency (sum over tasks of
// layers x best latency).
std::string ModelProgressLine(const proto::JobStatus& s, const proto::JobEvent& e) {
  const int n = s.tasks_size();
  const int t = e.task_index();
  const MeasureResult result = ToMeasureResult(e.result());
  const double elapsed = s.started_at() > 0 ? e.result().timestamp() - s.started_at() : 0;
  std::string trial = result.ok() ? absl::StrFormat("%.4f ms", result.MeanCost() * 1e3)
                                  : std::string(MeasureErrorName(result.error_no));
  return absl::StrFormat(
      "[%s] task %2d of %d: %-10s | tasks tuned %d/%d | estimated latency %.4f ms | trials %d/%d "
      "| %.1f s",
      s.job_id(), t, n, trial, n - s.untuned_tasks(), n, s.estimated_latency_s() * 1e3,
      s.trials_done(), s.spec().n_trial(), elapsed);
}

// Which figure a best is and what stands beside it, e.g. "validated:
// median of 3 passes, spread 1.2 %; search figure 142.40 GFLOPS" or
// "search figure, not validated".
std::string FigureNote(const std::string& figure, double gflops, double cost_s,
                       double search_cost_s, double rel_spread, int passes) {
  if (figure != "validated") return "search figure, not validated";
  const double search_gflops = search_cost_s > 0 ? gflops * cost_s / search_cost_s : 0;
  return absl::StrFormat(
      "validated: median of %d re-measurement passes, spread %.1f %%; search figure %.2f GFLOPS",
      passes, rel_spread * 100, search_gflops);
}

// Each task of a model job: its best, its share of the estimated latency.
void PrintTaskTable(const proto::JobStatus& s, std::ostream& out) {
  out << absl::StrFormat("%-5s %-7s %-7s %-10s %-10s %-9s %-12s %s\n", "task", "layers", "trials",
                         "GFLOPS", "figure", "search", "ms x layers", "workload");
  for (const proto::TaskStatus& t : s.tasks()) {
    const double search_gflops =
        t.best_search_cost_s() > 0 ? t.best_gflops() * t.best_cost_s() / t.best_search_cost_s() : 0;
    out << absl::StrFormat("%-5d %-7g %-7d %-10.2f %-10s %-9.2f %-12.4f %s\n", t.index(),
                           t.weight(), t.trials_done(), t.best_gflops(),
                           t.best_figure().empty() ? "-" : t.best_figure(), search_gflops,
                           t.best_cost_s() * t.weight() * 1e3, t.name());
  }
  out << absl::StrFormat("estimated latency (sum of tuned tasks' best x layers, %s): %.4f ms",
                         s.best_figure() == "validated" ? "validated figures" : "search figures",
                         s.estimated_latency_s() * 1e3);
  if (s.untuned_tasks() > 0) out << " (" << s.untuned_tasks() << " tasks without a result)";
  out << "\n" << s.trials_done() << " trials (" << s.trials_failed() << " failed)\n";
  if (!s.confirmation().empty()) out << "agents: " << s.confirmation() << "\n";
  for (const proto::TaskStatus& t : s.tasks()) {
    if (absl::StartsWith(t.confirmation(), "agents disagree")) {
      out << "task " << t.index() << ": " << t.confirmation() << "\n";
    }
  }
}

}  // namespace

[[nodiscard]] absl::StatusOr<proto::JobStatus> RunSubmit(FleetClient& client,
                                                         const proto::JobSpec& spec,
                                                         std::ostream& out) {
  TF_ASSIGN_OR_RETURN(proto::JobStatus status, client.Submit(spec));
  out << status.job_id() << "\n";
  return status;
}

[[nodiscard]] absl::Status RunWatch(FleetClient& client, const std::string& job_id, bool live,
                                    std::ostream& out) {
  proto::JobStatus last;
  double current = 0;
  auto on_event = [&](const proto::JobEvent& e) {
    last = e.status();
    const proto::JobStatus& s = e.status();
    if (e.trial_id() >= 0 && e.has_validates()) {
      const MeasureResult result = ToMeasureResult(e.result());
      out << absl::StrFormat("[%s] validating: %d/%d re-measurements (task %d, trial %d: %s)",
                             job_id, s.validations_done(), s.validations_total(), e.task_index(),
                             e.validates(),
                             result.ok() ? absl::StrFormat("%.4f ms", result.MeanCost() * 1e3)
                                         : std::string(MeasureErrorName(result.error_no)));
      out << (live ? "\r" : "\n") << std::flush;
    } else if (e.trial_id() >= 0 && s.tasks_size() > 1) {
      out << ModelProgressLine(s, e);
      out << (live ? "\r" : "\n") << std::flush;
    } else if (e.trial_id() >= 0) {
      // GFLOPS of this trial from the best one's: flops = best_gflops * best_cost.
      const MeasureResult result = ToMeasureResult(e.result());
      const double cost = result.MeanCost();
      current = (result.ok() && cost > 0) ? s.best_gflops() * s.best_cost_s() / cost : 0;
      const double elapsed = s.started_at() > 0 ? e.result().timestamp() - s.started_at() : 0;
      out << ProgressLine(absl::StrCat("[", job_id, "]"), current, s.best_gflops(), s.trials_done(),
                          s.spec().n_trial(), elapsed);
      if (!result.ok() && !live) {
        out << "  (" << MeasureErrorName(result.error_no) << ": " << result.error_msg.substr(0, 120)
            << ")";
      }
      out << (live ? "\r" : "\n") << std::flush;
    } else if (IsFinalJobState(s.state()) || !live) {
      if (live) out << "\n";
      out << job_id << " " << StateName(s.state())
          << (s.message().empty() ? "" : ": " + s.message()) << "\n";
    }
  };
  // A tracker that restarts (or a broken connection) is waited for: the
  // watch resumes from the job's current state once it answers again.
  double backoff_s = 0.25;
  double waited_s = 0;
  while (true) {
    bool heard = false;
    const absl::Status watched = client.Watch(job_id, [&](const proto::JobEvent& e) {
      heard = true;
      on_event(e);
    });
    if (IsFinalJobState(last.state())) break;
    if (watched.ok()) break;  // the tracker ended the stream
    if (!absl::IsUnavailable(watched)) return watched;
    if (heard) waited_s = 0;
    if (waited_s >= kWatchReconnectSeconds) {
      return absl::UnavailableError(absl::StrCat("lost the tracker for ", waited_s,
                                                 " s while watching ", job_id, ": ",
                                                 watched.message()));
    }
    out << (live ? "\n" : "") << "(" << watched.message() << "; reconnecting)\n" << std::flush;
    std::this_thread::sleep_for(std::chrono::duration<double>(backoff_s));
    waited_s += backoff_s;
    backoff_s = std::min(2 * backoff_s, 5.0);
  }
  if (last.state() == proto::SUCCEEDED && last.tasks_size() > 1) {
    PrintTaskTable(last, out);
    return absl::OkStatus();
  }
  if (last.state() == proto::SUCCEEDED) {
    out << "best: " << absl::StrFormat("%.2f", last.best_gflops()) << " GFLOPS ("
        << FigureNote(last.best_figure(), last.best_gflops(), last.best_cost_s(),
                      last.best_search_cost_s(), last.best_rel_spread(),
                      last.tasks_size() > 0 ? last.tasks(0).best_validation_passes() : 0)
        << "), " << last.trials_done() << " trials (" << last.trials_failed() << " failed)\n";
    if (!last.confirmation().empty()) out << "agents: " << last.confirmation() << "\n";
    return absl::OkStatus();
  }
  if (last.state() == proto::FAILED)
    return absl::AbortedError(absl::StrCat("job ", job_id, " failed: ", last.message()));
  if (last.state() == proto::CANCELLED)
    return absl::CancelledError(absl::StrCat("job ", job_id, " was cancelled"));
  return absl::OkStatus();
}

[[nodiscard]] absl::Status RunDevices(FleetClient& client, std::ostream& out) {
  TF_ASSIGN_OR_RETURN(proto::ListDevicesResponse devices, client.Devices());
  out << absl::StrFormat("%-8s %-24s %-10s %-11s %6s %9s %-20s  %s\n", "ROLE", "NAME", "KEY",
                         "STATE", "LEASES", "COMPLETED", "CALIBRATION", "DEVICE");
  std::vector<std::string> quarantined;
  for (const proto::WorkerStatus& w : devices.workers()) {
    std::string device;
    if (w.role() == proto::AGENT) {
      device = absl::StrCat(w.device().cpu_model(), ", ", w.device().cores(), " cores");
      if (!w.device().gpu_name().empty()) {
        absl::StrAppend(&device, ", GPU ", w.device().gpu_name(), " (sm_",
                        w.device().compute_capability_major(),
                        w.device().compute_capability_minor(), ")");
      }
    }
    std::string role = proto::WorkerRole_Name(w.role());
    for (char& c : role) c = static_cast<char>(std::tolower(c));
    // The agent's latest calibration: throughput, spread and how far it is
    // from its first passing figure.
    std::string calibration = "-";
    if (w.has_calibration()) {
      calibration = w.calibration().error().empty()
                        ? absl::StrFormat("%.1f GF ±%.1f%%", w.calibration().gflops(),
                                          100 * w.calibration().noise())
                        : "failed";
      if (w.calibration().error().empty() && w.baseline_gflops() > 0) {
        absl::StrAppend(
            &calibration,
            absl::StrFormat(" %+.0f%%",
                            100 * (w.calibration().gflops() / w.baseline_gflops() - 1)));
      }
    }
    out << absl::StrFormat("%-8s %-24s %-10s %-11s %6d %9d %-20s  %s\n", role, w.name(),
                           w.device_key(), w.state(), w.leases(), w.completed(), calibration,
                           device);
    if (!w.quarantine().empty())
      quarantined.push_back(absl::StrCat(w.name(), ": ", w.quarantine()));
  }
  for (const std::string& line : quarantined) out << "quarantined " << line << "\n";
  return absl::OkStatus();
}

[[nodiscard]] absl::Status RunQueue(FleetClient& client, std::ostream& out) {
  TF_ASSIGN_OR_RETURN(proto::QueueSummaryResponse q, client.Queue());
  out << "Device keys\n"
      << absl::StrFormat("%-12s %6s %6s %6s %8s %12s\n", "KEY", "TOTAL", "FREE", "BUSY", "PENDING",
                         "OLDEST(s)");
  for (const proto::KeySummary& k : q.keys()) {
    out << absl::StrFormat("%-12s %6d %6d %6d %8d %12.1f\n", k.device_key(), k.total(), k.free(),
                           k.busy(), k.pending(), k.oldest_pending_s());
  }
  out << "Jobs\n"
      << absl::StrFormat("%-10s %-10s %8s %8s %10s %9s %8s\n", "JOB", "KEY", "TO_BUILD", "BUILDING",
                         "TO_MEASURE", "MEASURING", "DONE");
  for (const proto::JobQueueSummary& j : q.jobs()) {
    out << absl::StrFormat("%-10s %-10s %8d %8d %10d %9d %4d/%-4d\n", j.job_id(), j.device_key(),
                           j.to_build(), j.building(), j.to_measure(), j.measuring(), j.done(),
                           j.n_trial());
  }
  if (q.users_size() > 0) {
    // Quotas: "-" for none.
    auto limit = [](auto value) { return value > 0 ? absl::StrCat(value) : std::string("-"); };
    out << "Users\n"
        << absl::StrFormat("%-22s %5s %5s %10s %9s %7s %9s  %s\n", "USER", "JOBS", "QUOTA",
                           "TRIALS/1H", "QUOTA/1H", "MEASURE", "SHARE", "HELD");
    for (const proto::UserSummary& u : q.users()) {
      out << absl::StrFormat("%-22s %5d %5s %10d %9s %7d %9s  %s\n",
                             u.user().empty() ? "(no token)" : u.user(), u.jobs_in_flight(),
                             limit(u.quota().max_jobs_in_flight()), u.trials_last_hour(),
                             limit(u.quota().max_trials_per_hour()), u.measuring(),
                             limit(u.quota().max_agent_share()), u.held());
    }
  }
  out << absl::StrFormat("builders %d (%d slots free, %d builds pending), tuners %d\n",
                         q.builders(), q.build_slots_free(), q.builds_pending(), q.tuners());
  if (q.dispatch_samples() > 0) {
    out << absl::StrFormat("dispatch latency p50 %.3f ms, p99 %.3f ms (%d samples)\n",
                           q.dispatch_p50_s() * 1e3, q.dispatch_p99_s() * 1e3,
                           q.dispatch_samples());
  }
  return absl::OkStatus();
}

[[nodiscard]] absl::Status RunJobs(FleetClient& client, bool all, std::ostream& out) {
  TF_ASSIGN_OR_RETURN(std::vector<proto::JobStatus> jobs, client.List(all));
  out << absl::StrFormat("%-10s %-10s %-8s %-10s %11s %10s %-9s  %s\n", "JOB", "STATE", "TUNER",
                         "KEY", "TRIALS", "BEST", "FIGURE", "TASK");
  for (const proto::JobStatus& j : jobs) {
    std::string what;
    if (j.spec().tasks_size() == 1) {
      what = absl::StrCat(j.spec().tasks(0).task().workload_name(), " ",
                          j.spec().tasks(0).task().workload_args_json());
    } else {
      what = absl::StrFormat("%s: %d tasks, est. %.3f ms", j.spec().model(), j.spec().tasks_size(),
                             j.estimated_latency_s() * 1e3);
    }
    out << absl::StrFormat("%-10s %-10s %-8s %-10s %5d/%-5d %10.2f %-9s  %s\n", j.job_id(),
                           StateName(j.state()), j.spec().tuner(), j.spec().device_key(),
                           j.trials_done(), j.spec().n_trial(), j.best_gflops(),
                           j.best_figure().empty() ? "-" : j.best_figure(), what);
  }
  return absl::OkStatus();
}

[[nodiscard]] absl::Status RunFleetBest(FleetClient& client, const std::string& job_id,
                                        int32_t task_index, std::ostream& out) {
  if (!job_id.empty() && task_index < 0) {
    TF_ASSIGN_OR_RETURN(proto::JobStatus status, client.Get(job_id));
    if (status.tasks_size() > 1) {
      PrintTaskTable(status, out);
      return absl::OkStatus();
    }
  }
  proto::BestConfigRequest request;
  request.set_job_id(job_id);
  if (task_index >= 0) request.set_task_index(task_index);
  TF_ASSIGN_OR_RETURN(proto::BestConfigResponse best, client.Best(request));
  // One truth per key: whether the key's agents agree on this winner.
  std::string confirmation;
  if (!job_id.empty()) {
    absl::StatusOr<proto::JobStatus> status = client.Get(job_id);
    if (status.ok() && status->tasks_size() > std::max(task_index, 0)) {
      confirmation = status->tasks(std::max(task_index, 0)).confirmation();
    }
  }
  out << absl::StrFormat(
             "%.2f GFLOPS (%s)\n", best.gflops(),
             best.figure() == "validated"
                 ? absl::StrFormat("validated: median of %d re-measurement passes, "
                                   "spread %.1f %%; search figure %.2f GFLOPS",
                                   best.passes(), best.rel_spread() * 100, best.search_gflops())
                 : std::string("search figure, not validated"))
      << (confirmation.empty() ? "" : absl::StrCat("agents: ", confirmation, "\n"))
      << best.record_line() << "\n";
  return absl::OkStatus();
}

[[nodiscard]] absl::Status RunExport(FleetClient& client, const std::string& job_id,
                                     int32_t task_index, const std::string& path,
                                     std::ostream& out) {
  TF_ASSIGN_OR_RETURN(std::vector<std::string> lines, client.Export(job_id, task_index));
  if (path.empty()) {
    for (const std::string& l : lines) out << l << "\n";
    return absl::OkStatus();
  }
  // Idempotent: records already in the file (the same line) are skipped, so
  // exporting again after more trials adds only the new ones; the file is
  // rewritten atomically, so a reader never sees it half written.
  std::string content;
  absl::StatusOr<std::string> existing = ReadFileToString(path, kMaxRecordLogBytes);
  if (existing.ok()) {
    content = *std::move(existing);
  } else if (!absl::IsNotFound(existing.status())) {
    return existing.status();
  }
  absl::flat_hash_set<absl::string_view> present;
  for (absl::string_view line : absl::StrSplit(content, '\n')) present.insert(line);
  std::vector<const std::string*> added;
  for (const std::string& l : lines) {
    if (present.insert(l).second) added.push_back(&l);
  }
  if (!added.empty()) {
    std::string updated = content;
    if (!updated.empty() && updated.back() != '\n') updated.push_back('\n');
    for (const std::string* l : added) absl::StrAppend(&updated, *l, "\n");
    TF_RETURN_IF_ERROR(ReplaceFileAtomically(path, updated));
  }
  out << "wrote " << added.size() << " records to " << path;
  if (added.size() < lines.size()) out << " (" << lines.size() - added.size() << " already there)";
  out << "\n";
  return absl::OkStatus();
}

[[nodiscard]] absl::Status RunCancel(FleetClient& client, const std::string& job_id,
                                     std::ostream& out) {
  TF_ASSIGN_OR_RETURN(proto::JobStatus status, client.Cancel(job_id));
  out << job_id << " " << StateName(status.state()) << "\n";
  return absl::OkStatus();
}

FleetLauncher::Options UpFleetOptions() {
  FleetLauncher::Options options;
  options.dir = ".tunefleet";
  options.device_key = "local";
  options.builder_parallelism = 0;
  options.agent_threads = 0;
  options.name_prefix = absl::StrCat(getpid(), "-");
  options.heartbeat_s.reset();
  options.worker_timeout_s.reset();
  options.measure_lease_grace_s.reset();
  options.tracker_flags = {"--quarantine_recheck_s=5"};
  return options;
}

[[nodiscard]] absl::Status RunUp(const FleetLauncher::Options& options, std::ostream& out) {
  if (options.dir.empty()) return absl::InvalidArgumentError("up: the fleet directory is empty");
  // Block SIGINT/SIGTERM here (children get an empty mask) and wait for them.
  BlockTerminationSignals();
  FleetLauncher fleet(options);
  TF_RETURN_IF_ERROR(fleet.Start());
  out << "tunefleet up: tracker " << fleet.address() << " (store " << options.dir
      << "/tracker.db), " << options.builders << " builder(s), " << options.agents
      << " agent(s) on key \"" << options.device_key << "\", " << options.tuners
      << " tuner(s); logs and tokens in " << options.dir << "/\n"
      << "  submit with: tunefleet submit --key " << options.device_key
      << " --shape 512,512,512 --trials 100\n"
      << "  stop with Ctrl-C (or kill " << getpid() << "); a child that dies is restarted\n"
      << "  tracker pid " << fleet.tracker().pid();
  for (int i = 0; i < options.builders; ++i)
    out << ", builder-" << i << " " << fleet.builder(i).pid();
  for (int i = 0; i < options.agents; ++i) out << ", agent-" << i << " " << fleet.agent(i).pid();
  for (int i = 0; i < options.tuners; ++i) out << ", tuner-" << i << " " << fleet.tuner(i).pid();
  out << "\n" << std::flush;
  // Supervise the children until SIGINT/SIGTERM: a child that dies is
  // reported (which one, and its exit code or signal) and restarted with
  // backoff; one that dies too often stops the whole fleet with an error.
  RealClock clock;
  sigset_t termination;
  sigemptyset(&termination);
  sigaddset(&termination, SIGINT);
  sigaddset(&termination, SIGTERM);
  absl::Status result = absl::OkStatus();
  int sig = 0;
  while (sig <= 0) {
    struct timespec poll = {0, 200'000'000};
    sig = sigtimedwait(&termination, nullptr, &poll);
    if (sig > 0) break;
    for (const FleetLauncher::ChildEvent& event : fleet.Supervise(clock)) {
      out << "tunefleet up: " << event.ToString() << "\n" << std::flush;
      if (event.kind == FleetLauncher::ChildEvent::Kind::kGaveUp && result.ok()) {
        result = absl::AbortedError(absl::StrCat("up: ", event.ToString()));
      }
    }
    if (!result.ok()) break;
  }
  out << "tunefleet up: stopping"
      << (sig > 0 ? absl::StrCat(" (", sig == SIGINT ? "SIGINT" : "SIGTERM", ")") : "") << "\n"
      << std::flush;
  fleet.Stop(5.0);  // workers first, the tracker last
  return result;
}

}  // namespace tunefleet
