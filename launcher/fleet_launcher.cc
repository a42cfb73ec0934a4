#include "launcher/fleet_launcher.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "common/file_util.h"
#include "common/signing.h"
#include "common/status_macros.h"
#include "proto_convert/job_state.h"
#include "tracker/auth.h"

namespace tunefleet {
namespace {

// "--name=value", or nothing when the value is unset (the daemon's default).
void AddOptional(std::vector<std::string>& argv, const std::string& name,
                 const std::optional<double>& value) {
  if (value.has_value()) argv.push_back(absl::StrCat("--", name, "=", *value));
}

}  // namespace

FleetLauncher::FleetLauncher(Options options) : options_(std::move(options)) {
  dir_ = options_.dir;
  if (dir_.empty()) {
    const char* tmp = std::getenv("TEST_TMPDIR");
    std::string base = tmp != nullptr ? tmp : "/tmp";
    char templ[4096];
    snprintf(templ, sizeof(templ), "%s/fleet-XXXXXX", base.c_str());
    dir_ = mkdtemp(templ) != nullptr ? templ : base;
  }
  trackers_.resize(std::max(1, options_.trackers));
  ports_.resize(trackers_.size(), 0);
  ports_[0] = options_.port;
  builders_.resize(std::max(0, options_.builders));
  agents_.resize(std::max(0, options_.agents));
  tuners_.resize(std::max(0, options_.tuners));
}

FleetLauncher::~FleetLauncher() { Stop(1); }

void FleetLauncher::Stop(double grace_s) {
  stopped_ = true;  // no more restarts
  for (auto& p : tuners_) p.Stop(grace_s);
  for (auto& p : agents_) p.Stop(grace_s);
  for (auto& p : builders_) p.Stop(grace_s);
  for (auto& p : trackers_) p.Stop(std::max(grace_s, 2.0));
}

std::string FleetLauncher::address() const {
  std::string out;
  for (int port : ports_) absl::StrAppend(&out, out.empty() ? "" : ",", "127.0.0.1:", port);
  return out;
}

int FleetLauncher::LeaderAt(int64_t epoch) const {
  const std::string line = absl::StrCat("took the leader lease at epoch ", epoch, ":");
  for (int i = 0; i < static_cast<int>(trackers_.size()); ++i) {
    if (Log(TrackerName(i)).find(line) != std::string::npos) return i;
  }
  return -1;
}

absl::StatusOr<int> FleetLauncher::WaitForLeaderAt(int64_t epoch, double timeout_s) const {
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
  for (;;) {
    if (const int leader = LeaderAt(epoch); leader >= 0) return leader;
    if (std::chrono::steady_clock::now() >= deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat("no tracker replica took epoch ", epoch, " in ", timeout_s, " s"));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

std::string FleetLauncher::TrackerName(int i) {
  return i == 0 ? "tracker" : absl::StrCat("tracker-", i);
}

std::string FleetLauncher::ChildEvent::ToString() const {
  switch (kind) {
    case Kind::kDied:
      return absl::StrCat(child, " ", detail);
    case Kind::kRestarted:
      return absl::StrCat(child, " restarted (", detail, ")");
    case Kind::kRestartFailed:
      return absl::StrCat(child, " could not be restarted: ", detail);
    case Kind::kGaveUp:
      return absl::StrCat(child, " ", detail);
  }
  return child;
}

std::vector<FleetLauncher::ChildEvent> FleetLauncher::Supervise(ClockInterface& clock) {
  std::vector<ChildEvent> events;
  if (stopped_) return events;
  const double now_s = clock.NowSeconds();
  for (int i = 0; i < static_cast<int>(trackers_.size()); ++i) {
    SuperviseChild(
        TrackerName(i), trackers_[i], [this, i] { return StartTracker(i); }, now_s, events);
  }
  for (int i = 0; i < static_cast<int>(builders_.size()); ++i) {
    SuperviseChild(
        absl::StrCat("builder-", i), builders_[i], [this, i] { return StartBuilder(i); }, now_s,
        events);
  }
  for (int i = 0; i < static_cast<int>(agents_.size()); ++i) {
    SuperviseChild(
        absl::StrCat("agent-", i), agents_[i], [this, i] { return StartAgent(i); }, now_s, events);
  }
  for (int i = 0; i < static_cast<int>(tuners_.size()); ++i) {
    SuperviseChild(
        absl::StrCat("tuner-", i), tuners_[i], [this, i] { return StartTuner(i); }, now_s, events);
  }
  return events;
}

void FleetLauncher::SuperviseChild(const std::string& name, Process& process,
                                   const std::function<absl::Status()>& start, double now_s,
                                   std::vector<ChildEvent>& events) {
  if (process.pid() <= 0) return;  // never started
  Supervised& child =
      supervised_.try_emplace(name, Supervised{RestartPolicy(options_.restart)}).first->second;
  if (child.given_up) return;
  if (!child.restart_at_s.has_value()) {
    const std::optional<int> status = process.Wait(0);
    if (!status.has_value()) {
      if (!child.seen_running) child.policy.Started(now_s);
      child.seen_running = true;
      return;
    }
    const std::string why = DescribeExit(*status);
    child.seen_running = false;
    child.restart_at_s = child.policy.Died(now_s);
    const std::string log = absl::StrCat(" (log: ", dir_, "/", name, ".log)");
    if (!child.restart_at_s.has_value()) {
      child.given_up = true;
      events.push_back({ChildEvent::Kind::kGaveUp, name,
                        absl::StrCat(why, "; not restarting it: it died ",
                                     options_.restart.max_restarts + 1, " times in a row within ",
                                     options_.restart.stable_after_s, " s of its start", log)});
      return;
    }
    events.push_back(
        {ChildEvent::Kind::kDied, name,
         absl::StrCat(why, log, "; restarting it in ", *child.restart_at_s - now_s, " s (restart ",
                      child.policy.restarts(), " of ", options_.restart.max_restarts, ")"),
         *child.restart_at_s});
  }
  if (now_s < *child.restart_at_s) return;
  child.restart_at_s.reset();
  const absl::Status started = start();
  if (!started.ok()) {
    // The dead process stays in place: the next step counts it as another
    // death, so a child that cannot start backs off and is given up on too.
    events.push_back({ChildEvent::Kind::kRestartFailed, name, started.ToString()});
    return;
  }
  child.policy.Started(now_s);
  child.seen_running = true;
  events.push_back({ChildEvent::Kind::kRestarted, name, absl::StrCat("pid ", process.pid())});
}

absl::StatusOr<std::string> FleetLauncher::Binary(const std::string& package,
                                                  const std::string& name, bool test,
                                                  const std::string& test_name) const {
  return test ? FindFleetBinary("tests", test_name) : FindFleetBinary(package, name);
}

absl::Status FleetLauncher::Start() {
  if (options_.builders < 0 || options_.agents < 0 || options_.tuners < 0) {
    return absl::InvalidArgumentError(absl::StrCat("negative process count (builders ",
                                                   options_.builders, ", agents ", options_.agents,
                                                   ", tuners ", options_.tuners, ")"));
  }
  mkdir(dir_.c_str(), 0700);
  struct stat st;
  if (stat(dir_.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat("cannot create the fleet directory ", dir_));
  }
  TF_ASSIGN_OR_RETURN(TokenSet tokens, TokenSet::Generate());
  TF_RETURN_IF_ERROR(tokens.WriteTokenFile(dir_ + "/tokens"));
  TF_RETURN_IF_ERROR(tokens.WriteRoleTokenFiles(dir_));
  // One signing key for this fleet's builders, pinned by its tracker: the
  // agents load only what the builders signed, as in a deployed fleet.
  TF_ASSIGN_OR_RETURN(const SigningKey signing_key, SigningKey::Generate());
  TF_RETURN_IF_ERROR(signing_key.WriteFile(dir_ + "/builder.key"));
  TF_RETURN_IF_ERROR(WritePinnedKeysFile(dir_ + "/builder_keys",
                                         {{"fleet-builders", signing_key.public_key_text()}}));
  if (options_.trackers < 1 ||
      (options_.trackers > 1 && !absl::StartsWith(options_.store, "postgres"))) {
    return absl::InvalidArgumentError(absl::StrCat(
        options_.trackers, " tracker(s): one, or several replicas on a PostgreSQL store"));
  }
  for (int i = 0; i < options_.trackers; ++i) TF_RETURN_IF_ERROR(StartTracker(i));
  TF_RETURN_IF_ERROR(ReplaceFileAtomically(dir_ + "/address", address() + "\n"));
  FleetAddress fleet;
  fleet.address = address();
  fleet.token = tokens.TokenFor(Role::kUser);
  client_ = std::make_unique<FleetClient>(fleet);
  for (int i = 0; i < options_.builders; ++i) TF_RETURN_IF_ERROR(StartBuilder(i));
  for (int i = 0; i < options_.agents; ++i) TF_RETURN_IF_ERROR(StartAgent(i));
  for (int i = 0; i < options_.tuners; ++i) TF_RETURN_IF_ERROR(StartTuner(i));
  // Everyone registered.
  const int expected =
      options_.builders + options_.agents * options_.agents_per_process + options_.tuners;
  return WaitForDevices(
             [expected](const proto::ListDevicesResponse& d) {
               return d.workers_size() == expected;
             },
             options_.start_timeout_s)
      .status();
}

absl::Status FleetLauncher::StartTracker(int i) {
  TF_ASSIGN_OR_RETURN(std::string bin, Binary("tracker", "tunefleet_tracker",
                                              options_.enable_test_templates, "test_tracker"));
  const std::string name = TrackerName(i);
  const std::string port_file = dir_ + "/" + name + ".port";
  std::remove(port_file.c_str());
  if (i < 0 || i >= static_cast<int>(trackers_.size())) {
    return absl::InvalidArgumentError(absl::StrCat("no tracker replica ", i));
  }
  std::vector<std::string> argv = {
      bin,
      absl::StrCat("--listen=127.0.0.1:", ports_[i]),
      "--store=" + (options_.store.empty() ? dir_ + "/tracker.db" : options_.store),
      absl::StrCat("--metrics_listen=127.0.0.1:", i == 0 ? options_.metrics_port : 0),
      "--token_file=" + dir_ + "/tokens",
      "--builder_keys=" + dir_ + "/builder_keys",
      "--port_file=" + port_file,
      absl::StrCat("--store_sync_full=", options_.store_sync_full ? "true" : "false")};
  AddOptional(argv, "heartbeat_s", options_.heartbeat_s);
  AddOptional(argv, "worker_timeout_s", options_.worker_timeout_s);
  AddOptional(argv, "measure_lease_grace_s", options_.measure_lease_grace_s);
  argv.insert(argv.end(), options_.tracker_flags.begin(), options_.tracker_flags.end());
  // Fake agents all run on this host: isolating them would serialise them.
  if (options_.simulate_measure_ms > 0) argv.push_back("--isolate_measurements=false");
  TF_ASSIGN_OR_RETURN(trackers_[i], Process::Spawn(argv, dir_ + "/" + name + ".log"));
  TF_ASSIGN_OR_RETURN(ports_[i], WaitForPortFile(port_file, 30, &trackers_[i]));
  return absl::OkStatus();
}

absl::Status FleetLauncher::StartBuilder(int i) {
  const bool test_builder = options_.enable_test_templates || options_.simulate_build_ms > 0 ||
                            options_.simulate_build_delay_ms > 0;
  TF_ASSIGN_OR_RETURN(std::string bin,
                      Binary("builder_worker", "tunefleet_builder", test_builder, "test_builder"));
  std::vector<std::string> argv = {bin,
                                   "--tracker=" + address(),
                                   "--token_file=" + dir_ + "/builder.token",
                                   "--signing_key=" + dir_ + "/builder.key",
                                   absl::StrCat("--name=builder-", options_.name_prefix, i),
                                   absl::StrCat("--parallelism=", options_.builder_parallelism)};
  if (options_.simulate_build_ms > 0)
    argv.push_back(absl::StrCat("--simulate_build_ms=", options_.simulate_build_ms));
  if (options_.simulate_build_delay_ms > 0) {
    argv.push_back(absl::StrCat("--simulate_build_delay_ms=", options_.simulate_build_delay_ms));
  }
  TF_ASSIGN_OR_RETURN(builders_.at(i),
                      Process::Spawn(argv, absl::StrCat(dir_, "/builder-", i, ".log")));
  return absl::OkStatus();
}

absl::Status FleetLauncher::StartAgent(int i) {
  const bool fake = options_.simulate_measure_ms > 0;
  std::string bin = options_.agent_binary;
  if (bin.empty()) {
    TF_ASSIGN_OR_RETURN(bin, Binary("device_agent", "tunefleet_agent", fake, "fake_agent"));
  }
  std::vector<std::string> argv = options_.agent_command_prefix;
  argv.insert(argv.end(), {bin, "--tracker=" + address(), "--token_file=" + dir_ + "/agent.token",
                           "--key=" + options_.device_key,
                           absl::StrCat("--name=agent-", options_.name_prefix, i)});
  if (fake) {
    argv.push_back(absl::StrCat("--measure_ms=", options_.simulate_measure_ms));
    argv.push_back(absl::StrCat("--agents=", options_.agents_per_process));
    if (options_.agents_swarm_connections > 0) {
      argv.push_back(absl::StrCat("--swarm_connections=", options_.agents_swarm_connections));
    }
  } else {
    argv.push_back(absl::StrCat("--threads=", options_.agent_threads));
  }
  if (!options_.agent_runner_launcher.empty()) {
    argv.push_back("--runner_launcher=" + options_.agent_runner_launcher);
  }
  if (auto flags = options_.agent_flags.find(i); flags != options_.agent_flags.end()) {
    argv.insert(argv.end(), flags->second.begin(), flags->second.end());
  }
  TF_ASSIGN_OR_RETURN(agents_.at(i),
                      Process::Spawn(argv, absl::StrCat(dir_, "/agent-", i, ".log")));
  return absl::OkStatus();
}

absl::Status FleetLauncher::StartTuner(int i) {
  TF_ASSIGN_OR_RETURN(std::string bin, Binary("tuner_process", "tunefleet_tuner",
                                              options_.enable_test_templates, "test_tuner"));
  TF_ASSIGN_OR_RETURN(
      tuners_.at(i),
      Process::Spawn({bin, "--tracker=" + address(), "--token_file=" + dir_ + "/tuner.token",
                      absl::StrCat("--name=tuner-", options_.name_prefix, i)},
                     absl::StrCat(dir_, "/tuner-", i, ".log")));
  return absl::OkStatus();
}

proto::JobSpec FleetLauncher::DenseJob(int64_t n_trial, const std::string& shape) const {
  proto::JobSpec spec;
  spec.set_device_key(options_.device_key);
  std::vector<std::string> dims;
  std::stringstream ss(shape);
  for (std::string d; std::getline(ss, d, ',');) dims.push_back(d);
  spec.mutable_task()->set_workload_name("dense");
  spec.mutable_task()->set_workload_args_json(absl::StrCat(R"({"M":)", dims.at(0), R"(,"N":)",
                                                           dims.at(1), R"(,"K":)", dims.at(2),
                                                           R"(,"layout":"NK"})"));
  spec.mutable_task()->set_target(options_.target);
  spec.set_tuner("random");
  spec.set_n_trial(n_trial);
  spec.set_early_stopping(-1);
  proto::MeasureOptions* m = spec.mutable_measure();
  m->set_number(2);
  m->set_repeat(2);
  m->set_min_repeat_ms(0);
  m->set_cooldown_interval_s(0);
  m->set_timeout_s(5);
  m->set_check_correctness(true);
  m->set_input_seed(1);
  return spec;
}

absl::StatusOr<proto::JobStatus> FleetLauncher::WaitForJob(const std::string& job_id,
                                                           double timeout_s) {
  RealClock clock;
  const double deadline = clock.NowSeconds() + timeout_s;
  absl::Status last = absl::OkStatus();
  while (clock.NowSeconds() < deadline) {
    absl::StatusOr<proto::JobStatus> s = client_->Get(job_id);
    if (s.ok() && IsFinalJobState(s->state())) return s;
    if (!s.ok()) last = s.status();
    clock.SleepSeconds(0.1);
  }
  return absl::DeadlineExceededError(absl::StrCat("job ", job_id, " not finished after ", timeout_s,
                                                  " s (last error: ", last.ToString(), ")"));
}

absl::StatusOr<proto::ListDevicesResponse> FleetLauncher::WaitForDevices(
    const std::function<bool(const proto::ListDevicesResponse&)>& pred, double timeout_s) {
  RealClock clock;
  const double deadline = clock.NowSeconds() + timeout_s;
  while (clock.NowSeconds() < deadline) {
    absl::StatusOr<proto::ListDevicesResponse> d = client_->Devices();
    if (d.ok() && pred(*d)) return d;
    clock.SleepSeconds(0.02);
  }
  return absl::DeadlineExceededError(
      absl::StrCat("fleet not in the expected state after ", timeout_s, " s"));
}

std::string FleetLauncher::Log(const std::string& name) const {
  absl::StatusOr<std::string> log =
      ReadFileToString(absl::StrCat(dir_, "/", name, ".log"), kMaxLogFileBytes);
  return log.ok() ? *log : absl::StrCat("(", log.status().message(), ")");
}

}  // namespace tunefleet
