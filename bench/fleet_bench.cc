// The fleet's own costs, each against its reference measured in the same run:
//
//  1. overhead: the same dense job tuned in local mode (one process, no RPC)
//     and through a fleet of real processes on 127.0.0.1 (tracker, builder,
//     agent, tuner); the difference in wall time per trial.
//  2. throughput: N simulated agents (they sleep --sim_measure_ms instead of
//     running a kernel; builders compile nothing) for N = 1, 4, 16, 64;
//     trials per second against N times one agent's.
//  3. dispatch: 1,000 simulated agents and 10 jobs; the tracker's
//     measurement dispatch latency p50/p99 (QueueSummary: from the message
//     that made a dispatch possible to the request queued on the agent's
//     stream) and its throughput (trials per second), for each agent count
//     of --dispatch_agents and each store of --stores: the tracker's SQLite
//     file (synchronous=NORMAL, or sqlite-full: each commit synced, the
//     tracker's default), and PostgreSQL (a durable server started here, a
//     fresh database per run), the runs of one agent count interleaved. The agents are one
//     FakeAgentSwarm process (a stream each over --dispatch_swarm_connections
//     connections), so 10,000 fit on 2 cores.
//
//  4. curve: a model job (ResNet-18's 12 tasks, the xgb tuner, a time
//     budget) on 1, 4 and 16 simulated agents that replay a real machine's
//     recorded trials (tests/cost_oracle.h: each config costs what it cost
//     there and takes its recorded trial time; a config never recorded, the
//     nearest recorded one's); the model's estimated latency (each task's
//     best cost, weighted by its layers) against wall time, and how much
//     faster N agents reach the latencies one agent reached (ideal: N x).
//
//   bazel run -c opt //bench:fleet_bench -- --json bench/results/fleet.json
//   bazel run -c opt //bench:fleet_bench -- --parts dispatch --dispatch_agents 1000,10000
//       --stores sqlite,sqlite-full,postgres   (one command)
#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <thread>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "common/median.h"
#include "common/status_macros.h"
#include "launcher/fleet_launcher.h"
#include "local/tune_command.h"
#include "nlohmann/json.hpp"
#include "proto_convert/model_job.h"
#include "proto_convert/task_spec.h"
#include "tracker/store/postgres_test_server.h"
#include "tuner_core/graph/model_source.h"
#include "tuner_core/records/record.h"
#include "tuner_core/workloads/workload.h"

ABSL_FLAG(std::string, json, "", "write the figures here");
ABSL_FLAG(std::string, parts, "overhead,throughput,dispatch",
          "which parts to run (and curve, which is not run by default)");
ABSL_FLAG(std::string, shape, "256,256,256", "overhead: dense M,N,K");
ABSL_FLAG(int64_t, trials, 64, "overhead: trials of the job");
ABSL_FLAG(int, threads, 2, "overhead: kernel threads (local runner and agent)");
ABSL_FLAG(int, rounds, 3, "overhead: local and fleet runs, interleaved; medians reported");
ABSL_FLAG(std::string, agents, "1,4,16,64", "throughput: agent counts");
ABSL_FLAG(double, sim_measure_ms, 100, "throughput: simulated measurement time");
ABSL_FLAG(int, trials_per_agent, 20, "throughput: trials per agent");
ABSL_FLAG(std::string, dispatch_agents, "1000", "dispatch: simulated agent counts");
ABSL_FLAG(std::string, stores, "sqlite",
          "dispatch: the tracker's stores, each run per agent count: sqlite (synchronous=NORMAL), "
          "sqlite-full (each commit synced: the tracker's default), postgres");
ABSL_FLAG(bool, postgres_durable, true,
          "dispatch: the PostgreSQL server syncs each commit (false: fsync and synchronous_commit "
          "off, to see what the syncs cost)");
ABSL_FLAG(int, dispatch_rounds, 1, "dispatch: runs of each store per agent count, interleaved");
ABSL_FLAG(int, dispatch_jobs, 10, "dispatch: concurrent jobs");
ABSL_FLAG(int, dispatch_swarm_connections, 16,
          "dispatch: the simulated agents as one swarm over this many connections "
          "(tests/fake_agent_swarm.h; 0: a worker runtime per agent, as real agents run)");
ABSL_FLAG(int64_t, dispatch_trials, 300, "dispatch: trials per job");
ABSL_FLAG(double, dispatch_measure_ms, 2000, "dispatch: simulated measurement time");
ABSL_FLAG(std::string, curve_agents, "1,4,16", "curve: simulated agent counts");
ABSL_FLAG(std::string, curve_model, "resnet-18", "curve: the model (built-in name or ONNX file)");
ABSL_FLAG(std::string, curve_costs, "bench/data/resnet18_zen1_trials.jsonl",
          "curve: the recorded trials the simulated agents replay");
ABSL_FLAG(std::string, curve_target, "llvm -mcpu=znver1", "curve: the target the trials ran on");
ABSL_FLAG(std::string, curve_tuner, "xgb", "curve: the job's tuner");
ABSL_FLAG(double, curve_budget_s, 240,
          "curve: one agent's time budget; N agents get this / N (at least --curve_min_budget_s)");
ABSL_FLAG(double, curve_min_budget_s, 30, "curve: the shortest budget");
ABSL_FLAG(double, curve_time_scale, 1, "curve: a simulated trial takes its recorded time x this");
ABSL_FLAG(std::string, curve_transfer, "",
          "curve: the job's transfer_between_tasks (true | false; empty: the spec's default, off)");
ABSL_FLAG(int, curve_rounds, 1, "curve: runs per agent count (seeds 1, 2, ...), interleaved");
ABSL_FLAG(int32_t, validate_top_k, -1,
          "configs each job re-measures once its search ends (-1: the tracker's default, 5; "
          "0: no validation)");

namespace tunefleet {
namespace {

// A job of this benchmark: `fleet`'s dense job with --validate_top_k.
proto::JobSpec BenchJob(const FleetLauncher& fleet, int64_t trials, const std::string& shape) {
  proto::JobSpec spec = fleet.DenseJob(trials, shape);
  if (absl::GetFlag(FLAGS_validate_top_k) >= 0) {
    spec.set_validate_top_k(absl::GetFlag(FLAGS_validate_top_k));
  }
  return spec;
}

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

proto::MeasureOptions BenchMeasure() {
  proto::MeasureOptions m;
  m.set_number(4);
  m.set_repeat(3);
  m.set_min_repeat_ms(0);
  m.set_cooldown_interval_s(0);
  m.set_timeout_s(10);
  m.set_check_correctness(true);
  m.set_input_seed(1);
  return m;
}

std::vector<double> Timestamps(FleetLauncher& fleet, const std::string& job_id) {
  std::vector<double> t;
  const std::vector<std::string> lines = fleet.client().Export(job_id).value();
  for (const std::string& line : lines) {
    absl::StatusOr<Record> r = Record::FromLine(line);
    if (r.ok()) t.push_back(r->result.timestamp);
  }
  std::sort(t.begin(), t.end());
  return t;
}

// The grid tuner proposes configs in index order, so local mode and the
// fleet measure exactly the same configs (a random tuner's batches differ in
// size between the two, and so would the kernels timed).
[[nodiscard]] absl::StatusOr<nlohmann::json> Overhead() {
  const std::string shape = absl::GetFlag(FLAGS_shape);
  const int64_t trials = absl::GetFlag(FLAGS_trials);
  const int threads = absl::GetFlag(FLAGS_threads);
  const int rounds = absl::GetFlag(FLAGS_rounds);
  FleetLauncher::Options o;
  o.device_key = "bench";
  o.builder_parallelism = 2;
  o.agent_threads = threads;
  std::vector<double> local_walls, fleet_walls, overheads;
  double local_best = 0, fleet_best = 0;
  for (int round = 0; round < rounds; ++round) {
    // The same job locally: the spec the fleet gets, with its measure options.
    proto::JobSpec local;
    TF_ASSIGN_OR_RETURN(const nlohmann::json args, WorkloadArgsFromShape("dense", shape, "NK"));
    *local.mutable_task() = MakeTaskSpec("", "dense", args, "llvm -mcpu=native");
    local.set_tuner("grid");
    local.set_n_trial(trials);
    *local.mutable_measure() = BenchMeasure();
    if (absl::GetFlag(FLAGS_validate_top_k) >= 0) {
      local.set_validate_top_k(absl::GetFlag(FLAGS_validate_top_k));
    }
    LocalRunOptions run;
    run.resume = false;
    run.host.runner.num_threads = threads;
    std::ostringstream sink;
    const double t0 = Now();
    absl::StatusOr<LocalJobSummary> summary = RunTune(local, run, sink, sink);
    if (!summary.ok()) return summary.status();
    const double local_wall = Now() - t0;
    local_best = summary->tasks[0].best_gflops();

    // A fresh fleet per round (its builder's artifact cache would otherwise
    // answer the same configs without compiling), started before the clock
    // runs: startup is not per trial.
    FleetLauncher fleet(o);
    if (absl::Status s = fleet.Start(); !s.ok()) return s;
    proto::JobSpec spec = BenchJob(fleet, trials, shape);
    spec.set_tuner("grid");
    *spec.mutable_measure() = BenchMeasure();
    const double f0 = Now();
    absl::StatusOr<proto::JobStatus> job = fleet.client().Submit(spec);
    if (!job.ok()) return job.status();
    absl::StatusOr<proto::JobStatus> done = fleet.WaitForJob(job->job_id(), 1800);
    if (!done.ok()) return done.status();
    const double fleet_wall = Now() - f0;
    fleet_best = done->best_gflops();
    local_walls.push_back(local_wall);
    fleet_walls.push_back(fleet_wall);
    overheads.push_back((fleet_wall - local_wall) / trials * 1e3);
    std::cout << absl::StrFormat("overhead  round %d: local %.2f s, fleet %.2f s: %+.1f ms/trial\n",
                                 round + 1, local_wall, fleet_wall, overheads.back());
  }
  nlohmann::json out;
  out["shape"] = shape;
  out["trials"] = trials;
  out["tuner"] = "grid";
  out["rounds"] = rounds;
  out["local_wall_s"] = local_walls;
  out["fleet_wall_s"] = fleet_walls;
  out["overhead_ms_per_trial_each_round"] = overheads;
  out["local_ms_per_trial_median"] = Median(local_walls) / trials * 1e3;
  out["fleet_ms_per_trial_median"] = Median(fleet_walls) / trials * 1e3;
  out["overhead_ms_per_trial_median"] = Median(overheads);
  out["local_best_gflops"] = local_best;
  out["fleet_best_gflops"] = fleet_best;
  std::cout << absl::StrFormat(
      "overhead  dense %s, %d trials (grid: the same configs both ways), median of %d rounds: "
      "local %.1f ms/trial, "
      "fleet %.1f ms/trial: fleet overhead %+.1f ms/trial (target <= 10); best %.1f vs %.1f "
      "GFLOPS\n",
      shape, trials, rounds, Median(local_walls) / trials * 1e3, Median(fleet_walls) / trials * 1e3,
      Median(overheads), local_best, fleet_best);
  return out;
}

[[nodiscard]] absl::StatusOr<nlohmann::json> Throughput() {
  nlohmann::json out = nlohmann::json::array();
  double one = 0;
  for (absl::string_view n_text : absl::StrSplit(absl::GetFlag(FLAGS_agents), ',')) {
    const int n = std::stoi(std::string(n_text));
    FleetLauncher::Options o;
    o.device_key = "sim";
    o.agents = 1;
    o.agents_per_process = n;
    o.simulate_measure_ms = absl::GetFlag(FLAGS_sim_measure_ms);
    o.simulate_build_ms = 1;
    o.builder_parallelism = 16;
    o.worker_timeout_s = 30;
    FleetLauncher fleet(o);
    if (absl::Status s = fleet.Start(); !s.ok()) return s;
    const int64_t trials = static_cast<int64_t>(absl::GetFlag(FLAGS_trials_per_agent)) * n + 1;
    proto::JobSpec spec = BenchJob(fleet, trials, "512,512,512");
    absl::StatusOr<proto::JobStatus> job = fleet.client().Submit(spec);
    if (!job.ok()) return job.status();
    absl::StatusOr<proto::JobStatus> done = fleet.WaitForJob(job->job_id(), 1800);
    if (!done.ok()) return done.status();
    std::vector<double> t = Timestamps(fleet, job->job_id());
    // Steady state: from the first result to the last.
    const double rate =
        t.size() > 1 ? static_cast<double>(t.size() - 1) / (t.back() - t.front()) : 0;
    if (n == 1) one = rate;
    const double ratio = one > 0 ? rate / (one * n) : 0;
    out.push_back({{"agents", n},
                   {"trials", trials},
                   {"trials_per_s", rate},
                   {"ratio_to_n_times_one", ratio}});
    std::cout << absl::StrFormat(
        "throughput %3d simulated agents (%.0f ms each): %7.1f trials/s = %.3f x %d x one agent's "
        "(target >= 0.9)\n",
        n, absl::GetFlag(FLAGS_sim_measure_ms), rate, ratio, n);
  }
  return out;
}

// One dispatch run: `agents` simulated agents, the tracker on `store`
// (empty: its SQLite file, each commit synced when `sqlite_full`, as the
// tracker's default --store_sync_full has it, else synchronous=NORMAL).
[[nodiscard]] absl::StatusOr<nlohmann::json> DispatchRun(int agents, const std::string& store,
                                                         bool sqlite_full) {
  FleetLauncher::Options o;
  o.store_sync_full = sqlite_full;
  o.device_key = "sim";
  o.agents = 1;
  o.agents_per_process = agents;
  o.agents_swarm_connections = absl::GetFlag(FLAGS_dispatch_swarm_connections);
  o.simulate_measure_ms = absl::GetFlag(FLAGS_dispatch_measure_ms);
  o.simulate_build_ms = 1;
  o.builder_parallelism = 32;
  o.worker_timeout_s = 60;
  o.heartbeat_s = 2;
  o.store = store;
  o.start_timeout_s = 60 + 0.05 * agents;
  FleetLauncher fleet(o);
  if (absl::Status s = fleet.Start(); !s.ok()) return s;
  const int jobs = absl::GetFlag(FLAGS_dispatch_jobs);
  const int64_t trials = absl::GetFlag(FLAGS_dispatch_trials);
  std::vector<std::string> ids;
  const double t0 = Now();
  for (int j = 0; j < jobs; ++j) {
    proto::JobSpec spec = BenchJob(fleet, trials, absl::StrCat(256 + 16 * j, ",512,512"));
    absl::StatusOr<proto::JobStatus> job = fleet.client().Submit(spec);
    if (!job.ok()) return job.status();
    ids.push_back(job->job_id());
  }
  for (const std::string& id : ids) {
    absl::StatusOr<proto::JobStatus> done = fleet.WaitForJob(id, 3600);
    if (!done.ok()) return done.status();
  }
  const double wall = Now() - t0;
  proto::QueueSummaryResponse q = fleet.client().Queue().value();
  const std::string store_name = !store.empty() ? "postgres"
                                 : sqlite_full  ? "sqlite-full"
                                                : "sqlite";
  nlohmann::json out = {{"store", store_name},
                        {"agents", agents},
                        {"jobs", jobs},
                        {"trials", jobs * trials},
                        {"wall_s", wall},
                        {"trials_per_s", jobs * trials / wall},
                        {"dispatch_p50_ms", q.dispatch_p50_s() * 1e3},
                        {"dispatch_p99_ms", q.dispatch_p99_s() * 1e3},
                        {"samples", q.dispatch_samples()}};
  std::cout << absl::StrFormat(
      "dispatch  %-8s %5d simulated agents, %d jobs, %d trials in %.1f s (%.1f trials/s): "
      "p50 %.3f ms, p99 %.3f ms over %d dispatches\n",
      store_name, agents, jobs, jobs * trials, wall, jobs * trials / wall, q.dispatch_p50_s() * 1e3,
      q.dispatch_p99_s() * 1e3, q.dispatch_samples());
  return out;
}

[[nodiscard]] absl::StatusOr<nlohmann::json> Dispatch() {
  const std::vector<std::string> stores =
      absl::StrSplit(absl::GetFlag(FLAGS_stores), ',', absl::SkipEmpty());
  std::unique_ptr<PostgresTestServer> pg;
  for (const std::string& store : stores) {
    if (store == "postgres" && pg == nullptr) {
      PostgresTestServer::Options options;
      // fsync and synchronous_commit on, as deployed (off: what the
      // commits' syncs cost, by difference).
      options.durable = absl::GetFlag(FLAGS_postgres_durable);
      TF_ASSIGN_OR_RETURN(pg, PostgresTestServer::Start(options));
    } else if (store != "postgres" && store != "sqlite" && store != "sqlite-full") {
      return absl::InvalidArgumentError("--stores: sqlite, sqlite-full or postgres, not " + store);
    }
  }
  nlohmann::json out = nlohmann::json::array();
  int databases = 0;
  for (absl::string_view n_text : absl::StrSplit(absl::GetFlag(FLAGS_dispatch_agents), ',')) {
    const int agents = std::stoi(std::string(n_text));
    std::map<std::string, std::vector<double>> rates, p99s;
    for (int round = 0; round < absl::GetFlag(FLAGS_dispatch_rounds); ++round) {
      for (const std::string& store : stores) {
        std::string address;
        if (store == "postgres") {
          TF_ASSIGN_OR_RETURN(address, pg->NewDatabase(absl::StrCat("dispatch_", ++databases)));
        }
        TF_ASSIGN_OR_RETURN(nlohmann::json run,
                            DispatchRun(agents, address, store == "sqlite-full"));
        rates[store].push_back(run["trials_per_s"].get<double>());
        p99s[store].push_back(run["dispatch_p99_ms"].get<double>());
        out.push_back(run);
      }
    }
    for (const char* sqlite : {"sqlite", "sqlite-full"}) {
      if (!rates.count(sqlite) || !rates.count("postgres")) continue;
      std::cout << absl::StrFormat(
          "dispatch  %5d agents: postgres/%s throughput %.3f (target >= 0.8), p99 %.3f vs "
          "%.3f ms (medians of %d)\n",
          agents, sqlite, Median(rates["postgres"]) / Median(rates[sqlite]),
          Median(p99s["postgres"]), Median(p99s[sqlite]), absl::GetFlag(FLAGS_dispatch_rounds));
    }
  }
  return out;
}

// One curve run's estimated model latency over time: (seconds since
// submission, sum over tasks of weight x best cost so far), from the moment
// every task has a success.
using LatencyCurve = std::vector<std::pair<double, double>>;

[[nodiscard]] absl::StatusOr<LatencyCurve> CurveOf(const proto::JobSpec& spec,
                                                   const std::vector<std::string>& lines,
                                                   double submitted_unix_s) {
  std::map<std::string, int> task_of;  // workload and args -> task index
  std::vector<double> weight;
  for (const proto::JobTask& t : spec.tasks()) {
    const nlohmann::json args = nlohmann::json::parse(t.task().workload_args_json());
    task_of[absl::StrCat(t.task().workload_name(), " ", args.dump())] =
        static_cast<int>(weight.size());
    weight.push_back(t.has_weight() ? t.weight() : 1);
  }
  std::vector<std::pair<double, std::pair<int, double>>> results;  // (time, (task, cost))
  for (const std::string& line : lines) {
    TF_ASSIGN_OR_RETURN(Record r, Record::FromLine(line));
    if (!r.result.ok()) continue;
    auto it = task_of.find(absl::StrCat(r.workload_name, " ", r.workload_args.dump()));
    if (it == task_of.end()) {
      return absl::InternalError(absl::StrCat("a record of no task of the job: ", line));
    }
    results.push_back({r.result.timestamp - submitted_unix_s, {it->second, r.result.MeanCost()}});
  }
  std::sort(results.begin(), results.end());
  std::vector<double> best(weight.size(), 0);
  size_t tuned = 0;
  LatencyCurve curve;
  for (const auto& [t, result] : results) {
    const auto [task, cost] = result;
    if (best[task] == 0) ++tuned;
    if (best[task] != 0 && cost >= best[task]) continue;
    best[task] = cost;
    if (tuned < best.size()) continue;
    double latency = 0;
    for (size_t i = 0; i < best.size(); ++i) latency += weight[i] * best[i];
    curve.push_back({t, latency});
  }
  return curve;
}

// The latency the curve had reached by `t` (0 before it starts).
double LatencyAt(const LatencyCurve& curve, double t) {
  double latency = 0;
  for (const auto& [at, l] : curve) {
    if (at > t) break;
    latency = l;
  }
  return latency;
}

// When the curve first reached `latency` or less (infinity: never).
double TimeTo(const LatencyCurve& curve, double latency) {
  for (const auto& [at, l] : curve) {
    if (l <= latency) return at;
  }
  return std::numeric_limits<double>::infinity();
}

[[nodiscard]] absl::StatusOr<nlohmann::json> Curve() {
  char real[PATH_MAX];
  const std::string costs = absl::GetFlag(FLAGS_curve_costs);
  if (realpath(costs.c_str(), real) == nullptr) {
    return absl::NotFoundError(absl::StrCat("--curve_costs: no file ", costs));
  }
  TF_ASSIGN_OR_RETURN(LoadedModel model, LoadModel(absl::GetFlag(FLAGS_curve_model), {}));
  std::vector<int> counts;
  for (absl::string_view n : absl::StrSplit(absl::GetFlag(FLAGS_curve_agents), ',')) {
    counts.push_back(std::stoi(std::string(n)));
  }
  const double one_budget = absl::GetFlag(FLAGS_curve_budget_s);
  std::map<int, std::vector<LatencyCurve>> curves;
  nlohmann::json out;
  for (int round = 0; round < absl::GetFlag(FLAGS_curve_rounds); ++round) {
    for (int n : counts) {
      FleetLauncher::Options o;
      o.device_key = "sim";
      o.agents = 1;
      o.agents_per_process = n;
      o.simulate_measure_ms = 1;  // fake agents; the costs say how long each trial takes
      o.agent_flags[0] = {absl::StrCat("--cost_table=", real),
                          absl::StrCat("--time_scale=", absl::GetFlag(FLAGS_curve_time_scale))};
      o.simulate_build_ms = 1;
      o.builder_parallelism = 16;
      o.worker_timeout_s = 30;
      o.target = absl::GetFlag(FLAGS_curve_target);
      FleetLauncher fleet(o);
      TF_RETURN_IF_ERROR(fleet.Start());
      const double budget = std::max(absl::GetFlag(FLAGS_curve_min_budget_s), one_budget / n);
      ModelJobOptions job;
      job.trials_per_task = 0;
      job.time_budget_s = budget;
      proto::JobSpec spec = MakeModelJobSpec(absl::GetFlag(FLAGS_curve_model), model.tasks,
                                             absl::GetFlag(FLAGS_curve_target), job);
      spec.set_device_key("sim");
      spec.set_tuner(absl::GetFlag(FLAGS_curve_tuner));
      spec.set_seed(static_cast<uint64_t>(round + 1));
      *spec.mutable_measure() = BenchMeasure();
      spec.set_validate_top_k(0);  // the curve is the search's; validation is not simulated
      if (const std::string transfer = absl::GetFlag(FLAGS_curve_transfer); !transfer.empty()) {
        if (transfer != "true" && transfer != "false") {
          return absl::InvalidArgumentError("--curve_transfer: true or false, not " + transfer);
        }
        spec.set_transfer_between_tasks(transfer == "true");
      }
      const double submitted = absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch());
      TF_ASSIGN_OR_RETURN(proto::JobStatus status, fleet.client().Submit(spec));
      TF_ASSIGN_OR_RETURN(proto::JobStatus done, fleet.WaitForJob(status.job_id(), budget + 600));
      TF_ASSIGN_OR_RETURN(std::vector<std::string> lines, fleet.client().Export(status.job_id()));
      TF_ASSIGN_OR_RETURN(LatencyCurve curve, CurveOf(spec, lines, submitted));
      if (curve.empty()) {
        return absl::InternalError(
            absl::StrCat(n, " agents: not every task of the job had a successful trial"));
      }
      std::cout << absl::StrFormat(
          "curve     %2d simulated agents, round %d: %zu trials in a %.0f s budget, estimated "
          "latency %.3f ms once every task ran (%.1f s), %.3f ms at the end\n",
          n, round + 1, lines.size(), budget, curve.front().second * 1e3, curve.front().first,
          curve.back().second * 1e3);
      nlohmann::json points = nlohmann::json::array();
      for (const auto& [t, l] : curve) points.push_back({t, l});
      out["runs"].push_back({{"agents", n},
                             {"round", round + 1},
                             {"budget_s", budget},
                             {"trials", lines.size()},
                             {"job_state", proto::JobState_Name(done.state())},
                             {"curve_s_latency_s", points}});
      curves[n].push_back(std::move(curve));
    }
  }
  // Speed-up: for the latencies one agent had reached at each eighth of its
  // budget, how much sooner N agents reached them (the median over rounds).
  if (!curves.count(1)) return out;
  for (int n : counts) {
    if (n == 1) continue;
    std::vector<double> speedups;
    nlohmann::json points = nlohmann::json::array();
    for (int eighth = 1; eighth <= 8; ++eighth) {
      std::vector<double> ratios;
      for (size_t r = 0; r < curves[1].size() && r < curves[n].size(); ++r) {
        const double target = LatencyAt(curves[1][r], one_budget * eighth / 8);
        if (target <= 0) continue;
        const double t1 = TimeTo(curves[1][r], target), tn = TimeTo(curves[n][r], target);
        ratios.push_back(std::isfinite(tn) && tn > 0 ? t1 / tn : 0);
      }
      if (ratios.empty()) continue;
      const double ratio = Median(ratios);
      speedups.push_back(ratio);
      points.push_back({{"one_agent_s", one_budget * eighth / 8}, {"speedup", ratio}});
    }
    out["speedup"][std::to_string(n)] = points;
    std::cout << absl::StrFormat("curve     %2d agents reach one agent's latencies", n);
    for (const nlohmann::json& p : points) {
      std::cout << absl::StrFormat(" | of %.0f s: %.1fx", p["one_agent_s"].get<double>(),
                                   p["speedup"].get<double>());
    }
    std::cout << absl::StrFormat(" faster (ideal %dx; 0: not reached in its budget)\n", n);
  }
  return out;
}

}  // namespace
}  // namespace tunefleet

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  nlohmann::json results;
  const std::string parts = absl::GetFlag(FLAGS_parts);
  auto run = [&](const char* name, auto fn) {
    if (!absl::StrContains(parts, name)) return true;
    absl::StatusOr<nlohmann::json> r = fn();
    if (!r.ok()) {
      std::cerr << "fleet_bench " << name << ": " << r.status() << "\n";
      return false;
    }
    results[name] = *r;
    if (const std::string path = absl::GetFlag(FLAGS_json); !path.empty()) {
      std::ofstream(path) << results.dump(2) << "\n";
    }
    return true;
  };
  bool ok = run("overhead", tunefleet::Overhead);
  ok = run("throughput", tunefleet::Throughput) && ok;
  ok = run("dispatch", tunefleet::Dispatch) && ok;
  ok = run("curve", tunefleet::Curve) && ok;
  return ok ? 0 : 1;
}
