// What an operator of a fleet relies on, on real processes: `watch` follows
// a job across a kill -9 and restart of the tracker, `export` to the same
// file twice writes each record once, a store with one damaged job row still
// serves every other job, and `tunefleet up` restarts a child killed with
// kill -9, says which and why, and stops everything on SIGTERM.
#include <signal.h>
#include <sqlite3.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <chrono>
#include <future>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cli/fleet_commands.h"
#include "common/clock.h"
#include "common/file_util.h"
#include "common/process.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "launcher/fleet_launcher.h"
#include "tests/status_assertions.h"
#include "tracker/store/sqlite_store.h"

namespace tunefleet {
namespace {

using ::testing::HasSubstr;

// Fake agents and test builders: the jobs' trials take milliseconds each.
FleetLauncher::Options FastFleet() {
  FleetLauncher::Options o;
  o.agents = 1;
  o.simulate_measure_ms = 40;
  o.simulate_build_ms = 2;
  return o;
}

// Polls `done` every 20 ms for up to timeout_s.
bool WaitUntil(const std::function<bool()>& done, double timeout_s) {
  const Stopwatch waited;
  while (waited.ElapsedSeconds() < timeout_s) {
    if (done()) return true;
    SystemClock().SleepSeconds(0.02);
  }
  return done();
}

std::vector<std::string> Lines(const std::string& path) {
  std::vector<std::string> lines;
  for (absl::string_view l : absl::StrSplit(ReadFileToString(path, kMaxRecordLogBytes).value(),
                                            '\n', absl::SkipEmpty())) {
    lines.emplace_back(l);
  }
  return lines;
}

TEST(FleetOpsTest, WatchFollowsAJobAcrossATrackerRestartAndExportNeverDuplicates) {
  FleetLauncher fleet(FastFleet());
  ASSERT_OK(fleet.Start());
  constexpr int64_t kTrials = 40;
  proto::JobStatus job = fleet.client().Submit(fleet.DenseJob(kTrials)).value();

  // `tunefleet watch` on its own client, as a user's terminal would.
  std::ostringstream watch_out;
  FleetAddress address;
  address.address = fleet.address();
  address.token = ReadFileToString(fleet.dir() + "/user.token", kMaxTokenFileBytes).value();
  while (!address.token.empty() && address.token.back() == '\n') address.token.pop_back();
  FleetClient watcher(address);
  std::future<absl::Status> watched = std::async(std::launch::async, [&] {
    return RunWatch(watcher, job.job_id(), /*live=*/false, watch_out);
  });

  ASSERT_TRUE(WaitUntil(
      [&] {
        absl::StatusOr<proto::JobStatus> s = fleet.client().Get(job.job_id());
        return s.ok() && s->trials_done() >= 4;
      },
      120));
  const proto::JobStatus before = fleet.client().Get(job.job_id()).value();
  ASSERT_LT(before.trials_done(), kTrials) << "the job finished before the tracker was killed";
  fleet.tracker().Kill(SIGKILL);
  ASSERT_TRUE(fleet.tracker().Wait(10).has_value());
  ASSERT_OK(fleet.StartTracker());  // same port, same store

  ASSERT_EQ(watched.wait_for(std::chrono::seconds(240)), std::future_status::ready)
      << "watch did not end within 240 s";
  const absl::Status watch_status = watched.get();
  const std::string printed = watch_out.str();
  EXPECT_TRUE(watch_status.ok()) << watch_status << "\n" << printed;
  EXPECT_THAT(printed, HasSubstr("reconnecting"));
  EXPECT_THAT(printed, HasSubstr(absl::StrCat(job.job_id(), " SUCCEEDED")));
  EXPECT_THAT(printed, HasSubstr(absl::StrCat(kTrials, " trials")));
  // Progress lines from after the restart, up to the last trial.
  EXPECT_THAT(printed, HasSubstr(absl::StrCat(kTrials, "/", kTrials)));

  // Export twice to the same file: each record once.
  const std::string log = fleet.dir() + "/records.jsonl";
  std::ostringstream first, second;
  ASSERT_OK(RunExport(fleet.client(), job.job_id(), -1, log, first));
  EXPECT_THAT(first.str(), HasSubstr(absl::StrCat("wrote ", kTrials, " records")));
  ASSERT_OK(RunExport(fleet.client(), job.job_id(), -1, log, second));
  EXPECT_THAT(second.str(), HasSubstr(absl::StrCat("wrote 0 records to ", log, " (", kTrials,
                                                   " already there)")));
  std::vector<std::string> lines = Lines(log);
  EXPECT_EQ(static_cast<int64_t>(lines.size()), kTrials);
  // A file holding some of them, the last line torn by a crash: the rest are
  // added after it, none twice.
  std::string partial;
  for (int i = 0; i < 10; ++i) absl::StrAppend(&partial, lines[i], "\n");
  ASSERT_OK(ReplaceFileAtomically(log, partial + "{\"torn"));
  std::ostringstream third;
  ASSERT_OK(RunExport(fleet.client(), job.job_id(), -1, log, third));
  EXPECT_THAT(third.str(), HasSubstr(absl::StrCat("wrote ", kTrials - 10, " records")));
  const std::vector<std::string> after = Lines(log);
  EXPECT_EQ(static_cast<int64_t>(after.size()), kTrials + 1);  // + the torn line, kept
  EXPECT_EQ(after[10], "{\"torn");
}

TEST(FleetOpsTest, ADamagedJobRowFailsThatJobAndTheTrackerServesEveryOther) {
  FleetLauncher fleet(FastFleet());
  {
    // A store from an earlier run: job-1 finished, job-2's spec damaged.
    auto store = OpenSqliteStore(fleet.dir() + "/tracker.db");
    ASSERT_OK(store.status());
    for (int i = 1; i <= 2; ++i) {
      StoredJob job;
      job.job_id = absl::StrCat("job-", i);
      job.sequence = i;
      job.spec = fleet.DenseJob(4);
      job.state = proto::SUCCEEDED;
      ASSERT_OK((*store)->PutJob(job));
    }
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((fleet.dir() + "/tracker.db").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "UPDATE jobs SET spec = X'FFFFFFFF' WHERE job_id = 'job-2'", nullptr,
                         nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);

  ASSERT_OK(fleet.Start());
  const proto::JobStatus damaged = fleet.client().Get("job-2").value();
  EXPECT_EQ(damaged.state(), proto::FAILED);
  EXPECT_THAT(damaged.message(), HasSubstr("store row damaged"));
  EXPECT_THAT(damaged.message(), HasSubstr("job 'job-2'"));
  EXPECT_EQ(fleet.client().Get("job-1").value().state(), proto::SUCCEEDED);
  EXPECT_THAT(fleet.Log("tracker"), HasSubstr("job 'job-2'"));
  // New jobs run as usual.
  proto::JobStatus job = fleet.client().Submit(fleet.DenseJob(4)).value();
  EXPECT_EQ(job.job_id(), "job-3");
  EXPECT_EQ(fleet.WaitForJob(job.job_id(), 120).value().state(), proto::SUCCEEDED);
}

TEST(FleetOpsTest, AZeroByteStoreKeepsTheTrackerFromStartingWithTheReason) {
  FleetLauncher fleet(FastFleet());
  ASSERT_OK(ReplaceFileAtomically(fleet.dir() + "/tracker.db", ""));
  const absl::Status started = fleet.Start();
  EXPECT_FALSE(started.ok());
  EXPECT_THAT(fleet.Log("tracker"), HasSubstr("is empty (0 bytes) — not a TuneFleet store"));
}

// Every client of the fleet refuses to speak plaintext (its token in the
// clear, a man in the middle free to answer) to an address off loopback,
// unless told --insecure.
TEST(FleetOpsTest, WorkersAndTheCliRefusePlaintextOffLoopback) {
  const std::string log_dir = testing::TempDir();
  const std::string far = "--tracker=tracker.example:7070";
  const std::vector<std::vector<std::string>> commands = {
      {FindFleetBinary("device_agent", "tunefleet_agent").value(), far, "--key=x86-test"},
      {FindFleetBinary("builder_worker", "tunefleet_builder").value(), far},
      {FindFleetBinary("tuner_process", "tunefleet_tuner").value(), far},
      {FindFleetBinary("cli", "tunefleet").value(), "jobs", far},
  };
  for (size_t i = 0; i < commands.size(); ++i) {
    const std::string log = absl::StrCat(log_dir, "/plaintext_", i, ".log");
    absl::StatusOr<Process> process = Process::Spawn(commands[i], log);
    ASSERT_OK(process.status());
    const std::optional<int> status = process->Wait(30);
    ASSERT_TRUE(status.has_value()) << commands[i][0] << " kept running";
    EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) != 0) << commands[i][0];
    EXPECT_THAT(ReadFileToString(log, 1 << 20).value_or(""),
                HasSubstr("refusing plaintext to tracker.example:7070"))
        << commands[i][0];
  }
}

// The pids `up` printed: "tracker pid 1, builder-0 2, ..., tuner-0 3".
std::map<std::string, pid_t> PrintedPids(const std::string& output) {
  std::map<std::string, pid_t> pids;
  for (absl::string_view line : absl::StrSplit(output, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (!absl::ConsumePrefix(&line, "tracker pid ")) continue;
    for (absl::string_view entry : absl::StrSplit(absl::StrCat("tracker ", line), ", ")) {
      std::vector<std::string> parts = absl::StrSplit(entry, ' ');
      int pid = 0;
      if (parts.size() == 2 && absl::SimpleAtoi(parts[1], &pid)) pids[parts[0]] = pid;
    }
  }
  return pids;
}

TEST(FleetOpsTest, UpRestartsAKilledChildSaysWhyAndStopsEverythingOnSigterm) {
  const std::string dir = FleetLauncher(FleetLauncher::Options{}).dir();
  const std::string output = dir + "/up.out";
  absl::StatusOr<std::string> cli = FindFleetBinary("cli", "tunefleet");
  ASSERT_OK(cli.status());
  absl::StatusOr<Process> up = Process::Spawn(
      {*cli, "up", "--fleet_dir=" + dir + "/fleet", "--builders=0", "--agents=0", "--tuners=1"},
      output);
  ASSERT_OK(up.status());
  auto printed = [&] { return ReadFileToString(output, kMaxLogFileBytes).value_or(""); };
  ASSERT_TRUE(WaitUntil([&] { return PrintedPids(printed()).count("tuner-0") > 0; }, 120))
      << printed();
  const std::map<std::string, pid_t> pids = PrintedPids(printed());
  ASSERT_EQ(::kill(pids.at("tuner-0"), SIGKILL), 0);
  ASSERT_TRUE(WaitUntil([&] { return absl::StrContains(printed(), "tuner-0 restarted"); }, 60))
      << printed();
  EXPECT_THAT(printed(), HasSubstr("tuner-0 killed by SIGKILL"));

  up->Kill(SIGTERM);
  const std::optional<int> status = up->Wait(60);
  ASSERT_TRUE(status.has_value()) << printed();
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << printed();
  EXPECT_THAT(printed(), HasSubstr("tunefleet up: stopping (SIGTERM)"));
  // Its children are gone (reaped by `up`, so kill(pid, 0) finds nothing).
  EXPECT_NE(::kill(pids.at("tracker"), 0), 0);
}

}  // namespace
}  // namespace tunefleet
