// One suite for every Store implementation (the contract), then the SQLite
// store's own: durability, concurrent connections, schema versions, damage.
#include "tracker/store/store.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tracker/store/memory_store.h"
#include "tracker/store/postgres_store.h"
#include "tracker/store/postgres_test_server.h"
#include "tracker/store/sqlite_store.h"
#include "tracker/store/sqlite_test_util.h"

namespace tunefleet {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

// A fresh directory under $TEST_TMPDIR for one test.
std::string MakeTempDir() {
  const char* base = getenv("TEST_TMPDIR");
  std::string pattern = absl::StrCat(base != nullptr ? base : "/tmp", "/store_test.XXXXXX");
  if (mkdtemp(pattern.data()) == nullptr) {
    ADD_FAILURE() << "mkdtemp " << pattern << " failed";
  }
  return pattern;
}

StoredJob MakeJob(const std::string& job_id, int64_t sequence) {
  StoredJob job;
  job.job_id = job_id;
  job.sequence = sequence;
  job.spec.set_name(absl::StrCat("name of ", job_id));
  job.spec.set_device_key("x86-avx2");
  job.spec.set_n_trial(100);
  job.spec.set_seed(42);
  job.state = proto::RUNNING;
  job.message = "";
  job.created_at = 1700000000.5;
  job.started_at = 1700000001.25;
  return job;
}

StoredTrial MakeTrial(const std::string& job_id, int64_t trial_id, bool done) {
  StoredTrial trial;
  trial.job_id = job_id;
  trial.trial_id = trial_id;
  trial.config_json = absl::StrCat(R"({"index":)", trial_id, "}");
  trial.config_index = 1000 + trial_id;
  trial.attempts = static_cast<int32_t>(trial_id % 3);
  trial.done = done;
  if (done) {
    trial.result.add_costs(1e-3 * (trial_id + 1));
    trial.result.add_costs(2e-3 * (trial_id + 1));
    trial.result.set_error_no(0);
    trial.result.set_agent("agent-a");
    trial.record_line = absl::StrCat(R"({"job":")", job_id, R"(","trial":)", trial_id, "}");
  }
  return trial;
}

std::vector<std::string> JobIds(const std::vector<StoredJob>& jobs) {
  std::vector<std::string> ids;
  for (const StoredJob& job : jobs) ids.push_back(job.job_id);
  return ids;
}

std::vector<int64_t> TrialIds(const std::vector<StoredTrial>& trials) {
  std::vector<int64_t> ids;
  for (const StoredTrial& trial : trials) ids.push_back(trial.trial_id);
  return ids;
}

// ---------------------------------------------------------------- contract

[[nodiscard]] absl::StatusOr<std::unique_ptr<Store>> OpenFreshPostgresStore() {
  absl::StatusOr<std::string> address = NewSharedTestDatabase();
  if (!address.ok()) return address.status();
  return OpenPostgresStore(*address);
}

struct StoreKind {
  std::string name;
  std::function<absl::StatusOr<std::unique_ptr<Store>>(const std::string& dir)> open;
};

class StoreContractTest : public ::testing::TestWithParam<StoreKind> {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir();
    auto store = GetParam().open(dir_);
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(store).value();
  }

  std::string dir_;
  std::unique_ptr<Store> store_;
};

TEST_P(StoreContractTest, LoadsJobsInSequenceOrderWithEveryField) {
  ASSERT_TRUE(store_->PutJob(MakeJob("c", 3)).ok());
  ASSERT_TRUE(store_->PutJob(MakeJob("a", 1)).ok());
  StoredJob b = MakeJob("b", 2);
  b.state = proto::FAILED;
  b.message = "tuner crashed";
  b.finished_at = 1700000100.0;
  ASSERT_TRUE(store_->PutJob(b).ok());

  auto jobs = store_->LoadJobs();
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  EXPECT_THAT(JobIds(*jobs), ElementsAre("a", "b", "c"));
  const StoredJob& loaded = (*jobs)[1];
  EXPECT_EQ(loaded.sequence, 2);
  EXPECT_EQ(loaded.spec.name(), "name of b");
  EXPECT_EQ(loaded.spec.device_key(), "x86-avx2");
  EXPECT_EQ(loaded.spec.n_trial(), 100);
  EXPECT_EQ(loaded.spec.seed(), 42u);
  EXPECT_EQ(loaded.state, proto::FAILED);
  EXPECT_EQ(loaded.message, "tuner crashed");
  EXPECT_DOUBLE_EQ(loaded.created_at, 1700000000.5);
  EXPECT_DOUBLE_EQ(loaded.started_at, 1700000001.25);
  EXPECT_DOUBLE_EQ(loaded.finished_at, 1700000100.0);
}

TEST_P(StoreContractTest, EmptyStoreLoadsNothing) {
  auto jobs = store_->LoadJobs();
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  EXPECT_THAT(*jobs, IsEmpty());
  auto lines = store_->LoadRecordLines("");
  ASSERT_TRUE(lines.ok()) << lines.status();
  EXPECT_THAT(*lines, IsEmpty());
}

TEST_P(StoreContractTest, PutJobReplacesAndKeepsTrials) {
  ASSERT_TRUE(store_->PutJob(MakeJob("j", 1)).ok());
  ASSERT_TRUE(store_->PutTrials({MakeTrial("j", 0, true)}).ok());
  StoredJob finished = MakeJob("j", 1);
  finished.state = proto::SUCCEEDED;
  finished.spec.set_n_trial(7);
  ASSERT_TRUE(store_->PutJob(finished).ok());

  auto jobs = store_->LoadJobs();
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  ASSERT_THAT(*jobs, SizeIs(1));
  EXPECT_EQ((*jobs)[0].state, proto::SUCCEEDED);
  EXPECT_EQ((*jobs)[0].spec.n_trial(), 7);
  auto trials = store_->LoadTrials("j");
  ASSERT_TRUE(trials.ok()) << trials.status();
  EXPECT_THAT(*trials, SizeIs(1));
}

TEST_P(StoreContractTest, PutJobRejectsEmptyId) {
  absl::Status status = store_->PutJob(MakeJob("", 1));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
}

TEST_P(StoreContractTest, LoadsTrialsInTrialIdOrderWithEveryField) {
  ASSERT_TRUE(store_->PutJob(MakeJob("j", 1)).ok());
  StoredTrial validation = MakeTrial("j", 2, false);
  validation.validates = 0;
  validation.validation_pass = 2;
  ASSERT_TRUE(store_->PutTrials({validation}).ok());
  ASSERT_TRUE(store_->PutTrials({MakeTrial("j", 0, true), MakeTrial("j", 1, false)}).ok());

  auto trials = store_->LoadTrials("j");
  ASSERT_TRUE(trials.ok()) << trials.status();
  EXPECT_THAT(TrialIds(*trials), ElementsAre(0, 1, 2));
  const StoredTrial& done = (*trials)[0];
  EXPECT_EQ(done.job_id, "j");
  EXPECT_EQ(done.config_json, R"({"index":0})");
  EXPECT_EQ(done.config_index, 1000);
  EXPECT_TRUE(done.done);
  EXPECT_THAT(done.result.costs(), ElementsAre(1e-3, 2e-3));
  EXPECT_EQ(done.result.agent(), "agent-a");
  EXPECT_EQ(done.record_line, R"({"job":"j","trial":0})");
  EXPECT_EQ(done.validates, -1);  // a search trial
  EXPECT_EQ((*trials)[1].attempts, 1);
  EXPECT_FALSE((*trials)[1].done);
  EXPECT_EQ((*trials)[2].validates, 0);
  EXPECT_EQ((*trials)[2].validation_pass, 2);
}

TEST_P(StoreContractTest, PutTrialsReplacesATrial) {
  ASSERT_TRUE(store_->PutJob(MakeJob("j", 1)).ok());
  StoredTrial trial = MakeTrial("j", 5, false);
  ASSERT_TRUE(store_->PutTrials({trial}).ok());
  trial.attempts = 2;
  ASSERT_TRUE(store_->PutTrials({trial}).ok());
  ASSERT_TRUE(store_->PutTrials({MakeTrial("j", 5, true)}).ok());

  auto trials = store_->LoadTrials("j");
  ASSERT_TRUE(trials.ok()) << trials.status();
  ASSERT_THAT(*trials, SizeIs(1));
  EXPECT_TRUE((*trials)[0].done);
}

TEST_P(StoreContractTest, PutTrialsWithAnUnknownJobWritesNothing) {
  ASSERT_TRUE(store_->PutJob(MakeJob("known", 1)).ok());
  absl::Status status = store_->PutTrials(
      {MakeTrial("known", 0, true), MakeTrial("ghost", 4, false), MakeTrial("known", 1, true)});
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound) << status;
  EXPECT_THAT(status.message(), HasSubstr("ghost"));

  auto trials = store_->LoadTrials("known");
  ASSERT_TRUE(trials.ok()) << trials.status();
  EXPECT_THAT(*trials, IsEmpty());
  // The store still takes writes after the failed batch.
  EXPECT_TRUE(store_->PutTrials({MakeTrial("known", 0, true)}).ok());
}

TEST_P(StoreContractTest, LoadTrialsOfAnUnknownJobIsEmpty) {
  auto trials = store_->LoadTrials("nobody");
  ASSERT_TRUE(trials.ok()) << trials.status();
  EXPECT_THAT(*trials, IsEmpty());
}

TEST_P(StoreContractTest, LoadsRecordLinesPerJobAndAcrossJobs) {
  ASSERT_TRUE(store_->PutJob(MakeJob("later", 2)).ok());
  ASSERT_TRUE(store_->PutJob(MakeJob("earlier", 1)).ok());
  StoredTrial done_without_line = MakeTrial("later", 3, true);
  done_without_line.record_line.clear();
  ASSERT_TRUE(store_
                  ->PutTrials({MakeTrial("later", 1, true), MakeTrial("later", 0, true),
                               MakeTrial("later", 2, false), done_without_line})
                  .ok());
  ASSERT_TRUE(
      store_->PutTrials({MakeTrial("earlier", 1, true), MakeTrial("earlier", 0, true)}).ok());

  auto later = store_->LoadRecordLines("later");
  ASSERT_TRUE(later.ok()) << later.status();
  EXPECT_THAT(*later, ElementsAre(R"({"job":"later","trial":0})", R"({"job":"later","trial":1})"));

  auto all = store_->LoadRecordLines("");
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_THAT(*all, ElementsAre(R"({"job":"earlier","trial":0})", R"({"job":"earlier","trial":1})",
                                R"({"job":"later","trial":0})", R"({"job":"later","trial":1})"));

  auto unknown = store_->LoadRecordLines("nobody");
  ASSERT_TRUE(unknown.ok()) << unknown.status();
  EXPECT_THAT(*unknown, IsEmpty());
}

TEST_P(StoreContractTest, TakesWritesFromManyThreads) {
  constexpr int kThreads = 4;
  constexpr int kTrialsPerThread = 25;
  for (int t = 0; t < kThreads; ++t)
    ASSERT_TRUE(store_->PutJob(MakeJob(absl::StrCat("job", t), t)).ok());
  std::vector<std::thread> threads;
  std::vector<absl::Status> failures(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([this, t, &failures] {
      for (int i = 0; i < kTrialsPerThread; ++i) {
        absl::Status status = store_->PutTrials({MakeTrial(absl::StrCat("job", t), i, true)});
        if (!status.ok()) failures[t] = status;
        if (auto loaded = store_->LoadTrials(absl::StrCat("job", t)); !loaded.ok())
          failures[t] = loaded.status();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const absl::Status& failure : failures) EXPECT_TRUE(failure.ok()) << failure;
  auto all = store_->LoadRecordLines("");
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_THAT(*all, SizeIs(kThreads * kTrialsPerThread));
}

TEST_P(StoreContractTest, TheLeaseKeyIsMadeOnceAndKept) {
  absl::StatusOr<std::string> first = store_->LeaseKey();
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->size(), static_cast<size_t>(kLeaseKeyHexDigits));
  EXPECT_EQ(first->find_first_not_of("0123456789abcdef"), std::string::npos) << *first;
  absl::StatusOr<std::string> again = store_->LeaseKey();
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, *first);
  EXPECT_NE(NewLeaseKey(), NewLeaseKey());
}

INSTANTIATE_TEST_SUITE_P(
    AllStores, StoreContractTest,
    ::testing::Values(
        StoreKind{"Memory",
                  [](const std::string&) -> absl::StatusOr<std::unique_ptr<Store>> {
                    return std::unique_ptr<Store>(std::make_unique<MemoryStore>());
                  }},
        StoreKind{"Sqlite",
                  [](const std::string& dir) { return OpenSqliteStore(dir + "/tracker.db"); }},
        StoreKind{"SqliteFullSync",
                  [](const std::string& dir) {
                    SqliteStoreOptions options;
                    options.synchronous_full = true;
                    return OpenSqliteStore(dir + "/tracker.db", options);
                  }},
        StoreKind{"Postgres", [](const std::string&) { return OpenFreshPostgresStore(); }}),
    [](const ::testing::TestParamInfo<StoreKind>& info) { return info.param.name; });

// ---------------------------------------------------------------- SQLite only

class SqliteStoreTest : public ::testing::Test {
 protected:
  void SetUp() override { path_ = MakeTempDir() + "/tracker.db"; }

  std::unique_ptr<Store> Open() {
    auto store = OpenSqliteStore(path_);
    EXPECT_TRUE(store.ok()) << store.status();
    return store.ok() ? std::move(store).value() : nullptr;
  }

  void RawExec(const std::string& sql) { ExecSqlBehindTheStore(path_, sql); }

  std::string path_;
};

TEST_F(SqliteStoreTest, DataSurvivesCloseAndReopen) {
  std::string lease_key;
  {
    std::unique_ptr<Store> store = Open();
    ASSERT_NE(store, nullptr);
    lease_key = store->LeaseKey().value_or("");
    ASSERT_TRUE(store->PutJob(MakeJob("j", 1)).ok());
    ASSERT_TRUE(store->PutTrials({MakeTrial("j", 0, true), MakeTrial("j", 1, false)}).ok());
  }
  std::unique_ptr<Store> store = Open();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->LeaseKey().value_or("none"), lease_key);
  auto jobs = store->LoadJobs();
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  EXPECT_THAT(JobIds(*jobs), ElementsAre("j"));
  auto trials = store->LoadTrials("j");
  ASSERT_TRUE(trials.ok()) << trials.status();
  EXPECT_THAT(TrialIds(*trials), ElementsAre(0, 1));
  auto lines = store->LoadRecordLines("j");
  ASSERT_TRUE(lines.ok()) << lines.status();
  EXPECT_THAT(*lines, ElementsAre(R"({"job":"j","trial":0})"));
}

TEST_F(SqliteStoreTest, SecondConnectionWorksWhileFirstIsOpen) {
  std::unique_ptr<Store> first = Open();
  ASSERT_NE(first, nullptr);
  ASSERT_TRUE(first->PutJob(MakeJob("j", 1)).ok());
  std::unique_ptr<Store> second = Open();
  ASSERT_NE(second, nullptr);

  auto seen_by_second = second->LoadJobs();
  ASSERT_TRUE(seen_by_second.ok()) << seen_by_second.status();
  EXPECT_THAT(JobIds(*seen_by_second), ElementsAre("j"));
  ASSERT_TRUE(second->PutTrials({MakeTrial("j", 0, true)}).ok());
  auto seen_by_first = first->LoadTrials("j");
  ASSERT_TRUE(seen_by_first.ok()) << seen_by_first.status();
  EXPECT_THAT(TrialIds(*seen_by_first), ElementsAre(0));
}

TEST_F(SqliteStoreTest, AcknowledgedWritesSurviveKillOfTheWritingProcess) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The child writes, then dies without closing anything.
    auto store = OpenSqliteStore(path_);
    if (!store.ok()) _exit(10);
    if (!(*store)->PutJob(MakeJob("j", 1)).ok()) _exit(11);
    if (!(*store)->PutTrials({MakeTrial("j", 0, true)}).ok()) _exit(12);
    raise(SIGKILL);
    _exit(13);
  }
  int wait_status = 0;
  ASSERT_EQ(waitpid(child, &wait_status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(wait_status)) << "child exited with " << WEXITSTATUS(wait_status);
  EXPECT_EQ(WTERMSIG(wait_status), SIGKILL);

  std::unique_ptr<Store> store = Open();
  ASSERT_NE(store, nullptr);
  auto trials = store->LoadTrials("j");
  ASSERT_TRUE(trials.ok()) << trials.status();
  EXPECT_THAT(TrialIds(*trials), ElementsAre(0));
}

TEST_F(SqliteStoreTest, MigratesAVersion1StoreAndKeepsItsTrials) {
  // A store as version 1 wrote it: trials without a task_index column.
  RawExec("CREATE TABLE meta (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL)");
  RawExec("INSERT INTO meta (key, value) VALUES ('schema_version', '1')");
  RawExec(
      "CREATE TABLE jobs (job_id TEXT PRIMARY KEY NOT NULL, sequence INTEGER NOT NULL, spec BLOB "
      "NOT NULL, state INTEGER NOT NULL, message TEXT NOT NULL, created_at REAL NOT NULL, "
      "started_at REAL NOT NULL, finished_at REAL NOT NULL)");
  RawExec(
      "CREATE TABLE trials (job_id TEXT NOT NULL, trial_id INTEGER NOT NULL, config_json TEXT NOT "
      "NULL, config_index INTEGER NOT NULL, attempts INTEGER NOT NULL, done INTEGER NOT NULL, "
      "result BLOB NOT NULL, record_line TEXT NOT NULL, PRIMARY KEY (job_id, trial_id)) WITHOUT "
      "ROWID");
  RawExec("INSERT INTO jobs VALUES ('j', 1, x'', 1, '', 0, 0, 0)");
  RawExec("INSERT INTO trials VALUES ('j', 0, '{}', 5, 0, 0, x'', '')");
  std::unique_ptr<Store> store = Open();
  ASSERT_NE(store, nullptr);
  auto trials = store->LoadTrials("j");
  ASSERT_TRUE(trials.ok()) << trials.status();
  ASSERT_EQ(trials->size(), 1u);
  EXPECT_EQ((*trials)[0].config_index, 5);
  EXPECT_EQ((*trials)[0].task_index, 0);
  EXPECT_EQ((*trials)[0].validates, -1);  // version 3's column, its default
  StoredTrial second = MakeTrial("j", 1, false);
  second.task_index = 3;
  second.validates = 0;
  ASSERT_TRUE(store->PutTrials({second}).ok());
  store.reset();
  store = Open();  // now the current version: opens without migrating again
  ASSERT_NE(store, nullptr);
  trials = store->LoadTrials("j");
  ASSERT_TRUE(trials.ok()) << trials.status();
  ASSERT_EQ(trials->size(), 2u);
  EXPECT_EQ((*trials)[1].task_index, 3);
  EXPECT_EQ((*trials)[1].validates, 0);
}

TEST_F(SqliteStoreTest, RefusesANewerSchemaVersion) {
  ASSERT_NE(Open(), nullptr);
  RawExec("UPDATE meta SET value = '7' WHERE key = 'schema_version'");
  auto store = OpenSqliteStore(path_);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition) << store.status();
  EXPECT_THAT(store.status().message(), HasSubstr("schema_version 7"));
  EXPECT_THAT(store.status().message(), HasSubstr(path_));
}

TEST_F(SqliteStoreTest, RefusesAFileThatIsNotADatabase) {
  {
    std::ofstream out(path_);
    for (int i = 0; i < 200; ++i) out << "this is a plain text file, not a database\n";
  }
  auto store = OpenSqliteStore(path_);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition) << store.status();
  EXPECT_THAT(store.status().message(), HasSubstr("not a SQLite database"));
  EXPECT_THAT(store.status().message(), HasSubstr(path_));
}

TEST_F(SqliteStoreTest, RefusesAnotherProgramsDatabase) {
  RawExec("CREATE TABLE photos (id INTEGER PRIMARY KEY, path TEXT)");
  auto store = OpenSqliteStore(path_);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition) << store.status();
  EXPECT_THAT(store.status().message(), HasSubstr("not a TuneFleet store"));
}

TEST_F(SqliteStoreTest, MissingDirectoryNamesThePath) {
  const std::string missing = path_ + ".d/no/such/dir/tracker.db";
  auto store = OpenSqliteStore(missing);
  ASSERT_FALSE(store.ok());
  EXPECT_THAT(store.status().message(), HasSubstr(missing));
}

TEST_F(SqliteStoreTest, UnparseableSpecLoadsTheJobAsFailedNamingTheRow) {
  {
    std::unique_ptr<Store> store = Open();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->PutJob(MakeJob("good", 1)).ok());
    ASSERT_TRUE(store->PutJob(MakeJob("damaged", 2)).ok());
  }
  RawExec("UPDATE jobs SET spec = X'FFFFFFFF' WHERE job_id = 'damaged'");
  std::unique_ptr<Store> store = Open();
  ASSERT_NE(store, nullptr);
  auto jobs = store->LoadJobs();
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  ASSERT_EQ(jobs->size(), 2u);
  EXPECT_EQ((*jobs)[0].job_id, "good");
  EXPECT_EQ((*jobs)[0].state, MakeJob("good", 1).state);
  EXPECT_EQ((*jobs)[1].job_id, "damaged");
  EXPECT_EQ((*jobs)[1].state, proto::FAILED);
  EXPECT_THAT((*jobs)[1].message, HasSubstr("store row damaged"));
  EXPECT_THAT((*jobs)[1].message, HasSubstr("job 'damaged'"));
  EXPECT_THAT((*jobs)[1].message, HasSubstr("'spec'"));
}

TEST_F(SqliteStoreTest, UnparseableResultIsDataLossNamingTheTrial) {
  {
    std::unique_ptr<Store> store = Open();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->PutJob(MakeJob("j", 1)).ok());
    ASSERT_TRUE(store->PutTrials({MakeTrial("j", 0, true), MakeTrial("j", 1, true)}).ok());
  }
  RawExec("UPDATE trials SET result = X'0A' WHERE trial_id = 1");
  std::unique_ptr<Store> store = Open();
  ASSERT_NE(store, nullptr);
  auto trials = store->LoadTrials("j");
  ASSERT_FALSE(trials.ok());
  EXPECT_EQ(trials.status().code(), absl::StatusCode::kDataLoss) << trials.status();
  EXPECT_THAT(trials.status().message(), HasSubstr("trial 1 of job 'j'"));
}

TEST_F(SqliteStoreTest, WrongColumnTypeLoadsTheJobAsFailedNamingTheColumn) {
  {
    std::unique_ptr<Store> store = Open();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->PutJob(MakeJob("j", 1)).ok());
  }
  RawExec("UPDATE jobs SET state = 'running' WHERE job_id = 'j'");
  std::unique_ptr<Store> store = Open();
  ASSERT_NE(store, nullptr);
  auto jobs = store->LoadJobs();
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  ASSERT_EQ(jobs->size(), 1u);
  EXPECT_EQ((*jobs)[0].state, proto::FAILED);
  EXPECT_THAT((*jobs)[0].message, HasSubstr("'state'"));
}

// Not a benchmark and asserts no time: writes many one-trial batches, the
// tracker's hot path, and logs what one cost on this machine.
TEST_F(SqliteStoreTest, ManySingleTrialWritesAllLand) {
  std::unique_ptr<Store> store = Open();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->PutJob(MakeJob("j", 1)).ok());
  constexpr int kTrials = 500;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kTrials; ++i)
    ASSERT_TRUE(store->PutTrials({MakeTrial("j", i, i % 2 == 0)}).ok());
  const std::chrono::duration<double, std::micro> elapsed =
      std::chrono::steady_clock::now() - start;
  RecordProperty("single_trial_put_us", static_cast<int>(elapsed.count() / kTrials));
  std::printf("PutTrials of one trial: %.1f us on average\n", elapsed.count() / kTrials);
  auto trials = store->LoadTrials("j");
  ASSERT_TRUE(trials.ok()) << trials.status();
  EXPECT_THAT(*trials, SizeIs(kTrials));
}

}  // namespace
}  // namespace tunefleet
