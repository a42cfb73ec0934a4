// Tracker failover on a PostgreSQL store (issue 39): two tracker replicas,
// simulated agents and a real builder and tuner on 127.0.0.1, one long job,
// and `--kills` kill -9s of whichever replica leads, at random points of the
// job (the killed one restarted as a standby after each). Per kill: the time
// from the kill to the first trial the new leader acknowledges (a trial
// counted done beyond what the new leader reported on its first answer, so
// never one the old leader acknowledged). At the end: trials lost and
// measured twice, from the job's records, and the builds and measurements in
// flight at the kills that the next leader adopted (tracker/lease_tokens.h).
//
//   bazel run -c opt //bench:tracker_failover_bench -- --kills 20
//       --json bench/results/tracker_failover.json   (one command)
//
// The PostgreSQL server is Debian's, started here as the tests start it but
// durable (fsync and synchronous_commit on), the replicas on their defaults
// (--standby_poll_s 1, --lease_check_s 1, --lease_ttl_s 5) unless
// --tracker_flags says otherwise.
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <random>
#include <set>
#include <thread>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "clients/cpp/fleet_client.h"
#include "common/status_macros.h"
#include "launcher/fleet_launcher.h"
#include "nlohmann/json.hpp"
#include "tracker/store/postgres_test_server.h"
#include "tuner_core/records/record.h"

ABSL_FLAG(int, kills, 20, "kill -9s of the leader");
ABSL_FLAG(int, agents, 4, "simulated agents");
ABSL_FLAG(double, sim_measure_ms, 100, "simulated measurement time");
ABSL_FLAG(double, min_run_s, 0.5, "least time the job runs between a failover and the next kill");
ABSL_FLAG(double, max_run_s, 2.5, "most time the job runs between a failover and the next kill");
ABSL_FLAG(std::string, tracker_flags, "", "more tracker flags, comma-separated");
ABSL_FLAG(int, seed, 1, "random kill points");
ABSL_FLAG(std::string, json, "", "write the figures here");

namespace tunefleet {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

double Quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[std::min(v.size() - 1, static_cast<size_t>(q * v.size()))];
}

int64_t CountOf(const std::string& text, const std::string& what) {
  int64_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

[[nodiscard]] absl::StatusOr<nlohmann::json> Run() {
  PostgresTestServer::Options pg_options;
  pg_options.durable = true;
  TF_ASSIGN_OR_RETURN(std::unique_ptr<PostgresTestServer> pg,
                      PostgresTestServer::Start(pg_options));
  TF_ASSIGN_OR_RETURN(std::string store, pg->NewDatabase("failover"));

  const int kills = absl::GetFlag(FLAGS_kills);
  FleetLauncher::Options o;
  o.store = store;
  o.trackers = 2;
  o.device_key = "sim";
  o.agents = 1;
  o.agents_per_process = absl::GetFlag(FLAGS_agents);
  o.simulate_measure_ms = absl::GetFlag(FLAGS_sim_measure_ms);
  o.simulate_build_ms = 1;
  o.builder_parallelism = 4;
  for (absl::string_view flag :
       absl::StrSplit(absl::GetFlag(FLAGS_tracker_flags), ',', absl::SkipEmpty())) {
    o.tracker_flags.emplace_back(flag);
  }
  FleetLauncher fleet(o);
  TF_RETURN_IF_ERROR(fleet.Start());
  TF_ASSIGN_OR_RETURN(int leader, fleet.WaitForLeaderAt(1, 30));

  // Enough trials that the job outlives every kill.
  const double trials_per_s = o.agents_per_process * 1000.0 / o.simulate_measure_ms;
  const int64_t n_trial =
      static_cast<int64_t>(kills * (absl::GetFlag(FLAGS_max_run_s) + 6) * trials_per_s + 50);
  proto::JobSpec spec = fleet.DenseJob(n_trial, "1024,1024,1024");
  spec.set_validate_top_k(0);
  TF_ASSIGN_OR_RETURN(proto::JobStatus job, fleet.client().Submit(spec));
  // A client that leaves a silent replica quickly, for the polling below.
  TF_ASSIGN_OR_RETURN(FleetAddress address, ResolveFleet("", "", fleet.dir()));
  FleetClient quick(address, /*deadline_s=*/1);

  std::mt19937 random(absl::GetFlag(FLAGS_seed));
  std::uniform_real_distribution<double> run_s(absl::GetFlag(FLAGS_min_run_s),
                                               absl::GetFlag(FLAGS_max_run_s));
  std::vector<double> failover_s, takeover_s;
  int64_t max_seen = 0;  // the most trials any answer counted done
  nlohmann::json each = nlohmann::json::array();
  for (int k = 0; k < kills; ++k) {
    std::this_thread::sleep_for(std::chrono::duration<double>(run_s(random)));
    const Clock::time_point killed = Clock::now();
    fleet.tracker(leader).Kill(SIGKILL);
    fleet.tracker(leader).Wait(10);
    TF_ASSIGN_OR_RETURN(const int next, fleet.WaitForLeaderAt(k + 2, 30));
    const double takeover = Seconds(Clock::now() - killed);
    // The new leader's first answer is the baseline; the first trial done
    // beyond it is one the new leader acknowledged.
    int64_t baseline = -1;
    double failover = -1;
    for (int i = 0; i < 60000 && failover < 0; ++i) {
      absl::StatusOr<proto::JobStatus> status = quick.Get(job.job_id());
      if (status.ok()) {
        max_seen = std::max(max_seen, status->trials_done());
        if (status->state() != proto::RUNNING && status->state() != proto::QUEUED) {
          return absl::FailedPreconditionError(absl::StrCat(
              "the job ended (", proto::JobState_Name(status->state()), ") after ", k, " kills"));
        }
        if (baseline < 0) {
          baseline = status->trials_done();
        } else if (status->trials_done() > baseline) {
          failover = Seconds(Clock::now() - killed);
        }
      }
      if (failover < 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (failover < 0) return absl::DeadlineExceededError("no trial acknowledged after a kill");
    failover_s.push_back(failover);
    takeover_s.push_back(takeover);
    each.push_back({{"kill", k + 1}, {"takeover_s", takeover}, {"failover_s", failover}});
    std::cout << absl::StrFormat(
        "kill %2d: replica %d killed; replica %d led after %.3f s, first trial acknowledged "
        "after %.3f s\n",
        k + 1, leader, next, takeover, failover);
    TF_RETURN_IF_ERROR(fleet.StartTracker(leader));  // back as a standby
    leader = next;
  }

  TF_RETURN_IF_ERROR(fleet.client().Cancel(job.job_id()).status());
  TF_ASSIGN_OR_RETURN(proto::JobStatus ended, fleet.WaitForJob(job.job_id(), 120));
  TF_ASSIGN_OR_RETURN(std::vector<std::string> lines, fleet.client().Export(job.job_id()));
  std::set<int64_t> configs;
  for (const std::string& line : lines) {
    TF_ASSIGN_OR_RETURN(Record record, Record::FromLine(line));
    configs.insert(record.config.value("index", int64_t{-1}));
  }
  const int64_t duplicated = static_cast<int64_t>(lines.size() - configs.size());
  // Lost: trials some answer counted done (or the end does) without a
  // record at the end.
  const int64_t lost = std::max<int64_t>(
      0, std::max(max_seen, ended.trials_done()) - static_cast<int64_t>(configs.size()));
  // Work in flight at a kill that the next leader took instead of doing it
  // again (its log names each adoption; logs are appended across restarts).
  int64_t adopted_builds = 0, adopted_measures = 0;
  for (int i = 0; i < o.trackers; ++i) {
    const std::string log = fleet.Log(FleetLauncher::TrackerName(i));
    adopted_builds += CountOf(log, "adopted the build result");
    adopted_measures += CountOf(log, "adopted the measure result");
  }
  nlohmann::json out = {
      {"kills", kills},
      {"agents", o.agents_per_process},
      {"sim_measure_ms", o.simulate_measure_ms},
      {"failover_median_s", Quantile(failover_s, 0.5)},
      {"failover_worst_s", *std::max_element(failover_s.begin(), failover_s.end())},
      {"takeover_median_s", Quantile(takeover_s, 0.5)},
      {"takeover_worst_s", *std::max_element(takeover_s.begin(), takeover_s.end())},
      {"trials_done", ended.trials_done()},
      {"records", lines.size()},
      {"trials_lost", lost},
      {"trials_duplicated", duplicated},
      {"adopted_builds", adopted_builds},
      {"adopted_measures", adopted_measures},
      {"each", each}};
  std::cout << absl::StrFormat(
      "failover over %d kill -9s of the leader: kill -> first trial acknowledged by the new "
      "leader median %.3f s, worst %.3f s (goal <= 5); kill -> new leader median %.3f s, worst "
      "%.3f s; %d trials done, %d records: %d lost, %d duplicated; in flight at the kills and "
      "delivered to the next leader: %d builds, %d measurements\n",
      kills, Quantile(failover_s, 0.5), out["failover_worst_s"].get<double>(),
      Quantile(takeover_s, 0.5), out["takeover_worst_s"].get<double>(), ended.trials_done(),
      lines.size(), lost, duplicated, adopted_builds, adopted_measures);
  return out;
}

}  // namespace
}  // namespace tunefleet

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  absl::StatusOr<nlohmann::json> result = tunefleet::Run();
  if (!result.ok()) {
    std::cerr << "tracker_failover_bench: " << result.status() << "\n";
    return 1;
  }
  if (const std::string path = absl::GetFlag(FLAGS_json); !path.empty()) {
    std::ofstream(path) << result->dump(2) << "\n";
  }
  return 0;
}
