// The PostgreSQL store beyond the Store contract (store_test.cc runs that on
// every implementation): schema versions, damage, unreachable databases,
// the leader lease and fencing, on a real server started by the test.
#include "tracker/store/postgres_store.h"

#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rpc/test_certs.h"
#include "tracker/store/open_store.h"
#include "tracker/store/postgres_connection.h"
#include "tracker/store/postgres_lease.h"
#include "tracker/store/postgres_test_server.h"
#include "tracker/store/sqlite_store.h"

namespace tunefleet {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class PostgresStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<PostgresTestServer*> server = SharedPostgresTestServer();
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *server;
    absl::StatusOr<std::string> address = NewSharedTestDatabase();
    ASSERT_TRUE(address.ok()) << address.status();
    address_ = *address;
  }

  std::unique_ptr<Store> Open(int64_t fence_epoch = 0) {
    PostgresStoreOptions options;
    options.fence_epoch = fence_epoch;
    absl::StatusOr<std::unique_ptr<Store>> store = OpenPostgresStore(address_, options);
    EXPECT_TRUE(store.ok()) << store.status();
    return store.ok() ? std::move(store).value() : nullptr;
  }

  std::unique_ptr<PostgresLeaderLease> Lease(const std::string& holder,
                                             absl::Duration ttl = absl::Seconds(5)) {
    LeaderLeaseOptions options;
    options.holder = holder;
    options.ttl = ttl;
    options.call_timeout = std::min(options.call_timeout, ttl / 2);
    absl::StatusOr<std::unique_ptr<PostgresLeaderLease>> lease =
        PostgresLeaderLease::Connect(address_, options);
    EXPECT_TRUE(lease.ok()) << lease.status();
    return lease.ok() ? std::move(lease).value() : nullptr;
  }

  // SQL behind the store's back, as an operator, damage or another release.
  void Sql(const std::string& sql) {
    absl::StatusOr<std::unique_ptr<PgConnection>> db = PgConnection::Open(address_, {});
    ASSERT_TRUE(db.ok()) << db.status();
    absl::Status ran = (*db)->Run(sql.c_str(), "test sql");
    ASSERT_TRUE(ran.ok()) << ran;
  }

  static StoredJob Job(const std::string& id, int64_t sequence) {
    StoredJob job;
    job.job_id = id;
    job.sequence = sequence;
    job.spec.set_name("job " + id);
    job.spec.set_n_trial(8);
    job.state = proto::RUNNING;
    job.created_at = 1700000000.125;
    return job;
  }
  static StoredTrial Trial(const std::string& job_id, int64_t trial_id) {
    StoredTrial trial;
    trial.job_id = job_id;
    trial.trial_id = trial_id;
    trial.config_json = R"({"index":1})";
    trial.done = true;
    trial.result.add_costs(1e-3);
    trial.record_line = absl::StrCat("line ", trial_id);
    return trial;
  }

  PostgresTestServer* server_ = nullptr;
  std::string address_;
};

TEST_F(PostgresStoreTest, DataSurvivesCloseAndReopen) {
  std::string lease_key;
  {
    std::unique_ptr<Store> store = Open();
    lease_key = store->LeaseKey().value_or("");
    // Another replica on the same database signs with the same key.
    EXPECT_EQ(Open()->LeaseKey().value_or("none"), lease_key);
    ASSERT_TRUE(store->PutJob(Job("a", 1)).ok());
    ASSERT_TRUE(store->PutTrials({Trial("a", 0), Trial("a", 1)}).ok());
  }
  std::unique_ptr<Store> store = Open();
  EXPECT_EQ(store->LeaseKey().value_or("none"), lease_key);
  absl::StatusOr<std::vector<StoredJob>> jobs = store->LoadJobs();
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  ASSERT_EQ(jobs->size(), 1u);
  EXPECT_EQ((*jobs)[0].spec.name(), "job a");
  EXPECT_EQ((*jobs)[0].created_at, 1700000000.125);
  absl::StatusOr<std::vector<std::string>> lines = store->LoadRecordLines("a");
  ASSERT_TRUE(lines.ok()) << lines.status();
  EXPECT_THAT(*lines, ::testing::ElementsAre("line 0", "line 1"));
}

TEST_F(PostgresStoreTest, KeepsAnyBytesInMessagesConfigsAndRecordLines) {
  std::unique_ptr<Store> store = Open();
  StoredJob job = Job("bytes", 1);
  constexpr char kMessage[] = "nul \0 and \xff\xfe not UTF-8";
  job.message = std::string(kMessage, sizeof(kMessage) - 1);
  ASSERT_TRUE(store->PutJob(job).ok());
  StoredTrial trial = Trial("bytes", 0);
  trial.record_line = std::string("\x00\x01\xc3", 3);
  ASSERT_TRUE(store->PutTrials({trial}).ok());
  EXPECT_EQ(store->LoadJobs().value()[0].message, job.message);
  EXPECT_EQ(store->LoadTrials("bytes").value()[0].record_line, trial.record_line);
}

TEST_F(PostgresStoreTest, ReplicasStartingTogetherCreateTheSchemaOnce) {
  std::vector<absl::Status> opened(4);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] { opened[i] = OpenPostgresStore(address_).status(); });
  }
  for (std::thread& t : threads) t.join();
  for (const absl::Status& s : opened) EXPECT_TRUE(s.ok()) << s;
}

TEST_F(PostgresStoreTest, RefusesANewerSchemaVersion) {
  Open();
  Sql("UPDATE tunefleet_meta SET value = '99' WHERE key = 'schema_version'");
  absl::StatusOr<std::unique_ptr<Store>> store = OpenPostgresStore(address_);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(store.status().message(), HasSubstr("schema version 99 is newer"));
}

TEST_F(PostgresStoreTest, RefusesAnotherProgramsTables) {
  Sql("CREATE TABLE tunefleet_jobs (x INTEGER)");
  absl::StatusOr<std::unique_ptr<Store>> store = OpenPostgresStore(address_);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(store.status().message(), HasSubstr("not a TuneFleet store"));
}

TEST_F(PostgresStoreTest, AnUnreachableDatabaseIsUnavailableAndTheMessageHidesThePassword) {
  // A port nothing listens on: the server's own port plus one is free here
  // only by chance, so use a port no server can bind (1, privileged, unused).
  absl::StatusOr<std::unique_ptr<Store>> store =
      OpenPostgresStore("postgresql://tracker:s3cret-pw@127.0.0.1:1/tunefleet");
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(store.status().message(), HasSubstr("tracker@127.0.0.1:1/tunefleet"));
  EXPECT_THAT(store.status().message(), Not(HasSubstr("s3cret")));
}

TEST_F(PostgresStoreTest, ADamagedJobRowLoadsAsFailedAndTheOthersLoad) {
  std::unique_ptr<Store> store = Open();
  ASSERT_TRUE(store->PutJob(Job("good", 1)).ok());
  ASSERT_TRUE(store->PutJob(Job("bad_spec", 2)).ok());
  ASSERT_TRUE(store->PutJob(Job("bad_state", 3)).ok());
  Sql("UPDATE tunefleet_jobs SET spec = '\\xffffffff'::bytea WHERE job_id = 'bad_spec'");
  Sql("UPDATE tunefleet_jobs SET state = 4242 WHERE job_id = 'bad_state'");
  absl::StatusOr<std::vector<StoredJob>> jobs = store->LoadJobs();
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  ASSERT_EQ(jobs->size(), 3u);
  EXPECT_EQ((*jobs)[0].state, proto::RUNNING);
  EXPECT_EQ((*jobs)[1].state, proto::FAILED);
  EXPECT_THAT((*jobs)[1].message, HasSubstr(kDamagedRowMessage));
  EXPECT_THAT((*jobs)[1].message, HasSubstr("job 'bad_spec': column 'spec'"));
  EXPECT_EQ((*jobs)[2].state, proto::FAILED);
  EXPECT_THAT((*jobs)[2].message, HasSubstr("state 4242 is not a JobState"));
}

TEST_F(PostgresStoreTest, ADamagedTrialRowIsDataLossNamingTheTrial) {
  std::unique_ptr<Store> store = Open();
  ASSERT_TRUE(store->PutJob(Job("j", 1)).ok());
  ASSERT_TRUE(store->PutTrials({Trial("j", 0), Trial("j", 7)}).ok());
  Sql("UPDATE tunefleet_trials SET result = '\\xffffffff'::bytea WHERE trial_id = 7");
  absl::StatusOr<std::vector<StoredTrial>> trials = store->LoadTrials("j");
  ASSERT_FALSE(trials.ok());
  EXPECT_EQ(trials.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(trials.status().message(), HasSubstr("trial 7 of job 'j'"));
}

TEST_F(PostgresStoreTest, AStoreReconnectsAfterTheServerRestarts) {
  std::unique_ptr<Store> store = Open();
  ASSERT_TRUE(store->PutJob(Job("before", 1)).ok());
  absl::Status restarted = server_->KillAndRestart();
  ASSERT_TRUE(restarted.ok()) << restarted;
  // The first call finds the connection lost and reconnects; a write that
  // fails on the way is not acknowledged, and a retry lands.
  absl::Status put = store->PutJob(Job("after", 2));
  if (!put.ok()) {
    EXPECT_EQ(put.code(), absl::StatusCode::kUnavailable) << put;
    put = store->PutJob(Job("after", 2));
  }
  ASSERT_TRUE(put.ok()) << put;
  absl::StatusOr<std::vector<StoredJob>> jobs = store->LoadJobs();
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  EXPECT_EQ(jobs->size(), 2u);
}

TEST_F(PostgresStoreTest, ASqliteStoreMovesIntoPostgresOnce) {
  const char* tmp = getenv("TEST_TMPDIR");
  std::string dir = absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/migrate.XXXXXX");
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  const std::string sqlite_path = dir + "/tracker.db";
  {
    std::unique_ptr<Store> sqlite = OpenSqliteStore(sqlite_path).value();
    ASSERT_TRUE(sqlite->PutJob(Job("first", 1)).ok());
    ASSERT_TRUE(sqlite->PutJob(Job("second", 2)).ok());
    ASSERT_TRUE(sqlite->PutTrials({Trial("first", 0), Trial("first", 1), Trial("second", 0)}).ok());
  }
  std::ostringstream out;
  EXPECT_EQ(RunStoreMigrate(sqlite_path, address_, out), 0) << out.str();
  EXPECT_THAT(out.str(), HasSubstr("copied 2 job(s) and 3 trial(s)"));
  EXPECT_THAT(out.str(), HasSubstr("tunefleet@127.0.0.1:"));
  std::unique_ptr<Store> postgres = Open();
  EXPECT_EQ(postgres->LoadRecordLines("").value(),
            (std::vector<std::string>{"line 0", "line 1", "line 0"}));
  EXPECT_EQ(postgres->LoadJobs().value()[1].spec.name(), "job second");

  // Never into a store in use, and never from a store that is not there.
  std::ostringstream again, missing;
  EXPECT_EQ(RunStoreMigrate(sqlite_path, address_, again), 1);
  EXPECT_THAT(again.str(), HasSubstr("already holds 2 job(s)"));
  EXPECT_EQ(RunStoreMigrate(dir + "/no.db", address_, missing), 1);
  EXPECT_THAT(missing.str(), HasSubstr("no store at --store="));
}

TEST_F(PostgresStoreTest, AConnectionLostInsideATransactionIsNotReopenedForTheRestOfIt) {
  Sql("CREATE TABLE t (x INTEGER)");
  absl::StatusOr<std::unique_ptr<PgConnection>> db = PgConnection::Open(address_, {});
  ASSERT_TRUE(db.ok()) << db.status();
  absl::Status done = (*db)->InTransaction("test", [&]() -> absl::Status {
    // The session dies inside the transaction; a body that carries on past
    // the failed statement must not run the next one on a new session,
    // outside the transaction (and see it "committed").
    EXPECT_TRUE(server_->TerminateSessions("tunefleet").ok());
    EXPECT_EQ((*db)->Run("SELECT 1", "probe").code(), absl::StatusCode::kUnavailable);
    return (*db)->Run("INSERT INTO t VALUES (1)", "insert");
  });
  EXPECT_EQ(done.code(), absl::StatusCode::kUnavailable) << done;
  EXPECT_THAT(done.message(), HasSubstr("inside a transaction"));
  // Nothing ran outside it; the next call reconnects.
  ASSERT_TRUE((*db)->Run("INSERT INTO t VALUES (2)", "insert after").ok());
  absl::StatusOr<PgResult> rows = (*db)->Exec("SELECT x FROM t", PgParams(), "read");
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->rows(), 1);
  PgRow row = rows->Row(0, "t");
  EXPECT_EQ(row.Int4(0), 2);
}

// Atomically prepares each statement once per connection: a statement
// repeated in one batch, a batch that rolls back after its Parse (the
// statement stays prepared), a Parse skipped because an earlier statement
// failed (it is parsed again next time), and a new connection (parsed
// again there).
TEST_F(PostgresStoreTest, AtomicallyPreparesEachStatementOncePerConnection) {
  Sql("CREATE TABLE p (x INTEGER PRIMARY KEY)");
  absl::StatusOr<std::unique_ptr<PgConnection>> db = PgConnection::Open(address_, {});
  ASSERT_TRUE(db.ok()) << db.status();
  const char* insert = "INSERT INTO p VALUES ($1)";
  const char* count = "SELECT count(*)::int4 FROM p";
  auto put = [&](std::vector<int> xs) {
    std::vector<PgStatement> statements;
    for (int x : xs) {
      PgParams params;
      params.Int4(x);
      statements.push_back({insert, std::move(params), absl::StrCat("x ", x)});
    }
    return (*db)->Atomically("put", statements).status();
  };
  auto rows = [&]() -> int {
    absl::StatusOr<std::vector<PgResult>> r = (*db)->Atomically("count", {{count, PgParams(), ""}});
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? (*r)[0].Row(0, "p").Int4(0) : -1;
  };
  ASSERT_TRUE(put({1, 2}).ok());   // parsed once, run twice
  EXPECT_FALSE(put({3, 1}).ok());  // the duplicate rolls 3 back with it
  EXPECT_EQ(rows(), 2);
  // The count's Parse comes after the failing insert: skipped, then parsed
  // again by the next batch.
  absl::StatusOr<std::vector<PgResult>> aborted = [&] {
    PgParams params;
    params.Int4(1);
    return (*db)->Atomically("put and count",
                             {{insert, std::move(params), "x 1"}, {count, PgParams(), ""}});
  }();
  EXPECT_THAT(aborted.status().message(), HasSubstr("duplicate key")) << aborted.status();
  EXPECT_EQ(rows(), 2);
  // A new session knows none of them.
  ASSERT_TRUE(server_->TerminateSessions("tunefleet").ok());
  absl::Status again = put({4});
  if (!again.ok()) again = put({4});  // the first call may find the session gone
  ASSERT_TRUE(again.ok()) << again;
  EXPECT_EQ(rows(), 3);
}

// ---------------------------------------------------------------- the lease

TEST_F(PostgresStoreTest, OneReplicaLeadsAndTheNextTakesOverWithANewEpoch) {
  std::unique_ptr<PostgresLeaderLease> a = Lease("a:7070");
  std::unique_ptr<PostgresLeaderLease> b = Lease("b:7070");
  EXPECT_EQ(a->Leader().value().epoch, 0);
  ASSERT_TRUE(a->TryAcquire().value());
  EXPECT_EQ(a->epoch(), 1);
  EXPECT_FALSE(b->TryAcquire().value());
  EXPECT_FALSE(b->held());
  LeaderInfo leader = b->Leader().value();
  EXPECT_EQ(leader.epoch, 1);
  EXPECT_EQ(leader.holder, "a:7070");
  EXPECT_TRUE(a->Check().ok());
  a.reset();  // the leader's session ends (its process died)
  // Its server backend exits a moment after the client hangs up (under a
  // loaded machine, after b's first try): b takes over on a later try, as a
  // standby's polling does.
  bool acquired = false;
  for (int tries = 0; tries < 250 && !acquired; ++tries) {
    acquired = b->TryAcquire().value();
    if (!acquired) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_TRUE(acquired);
  EXPECT_EQ(b->epoch(), 2);
  EXPECT_EQ(b->Leader().value().holder, "b:7070");
}

TEST_F(PostgresStoreTest, ALeaderWhoseSessionIsCutLosesTheLease) {
  std::unique_ptr<PostgresLeaderLease> a = Lease("a:7070");
  ASSERT_TRUE(a->TryAcquire().value());
  ASSERT_TRUE(server_->TerminateSessions(kLeaseApplicationName).ok());
  absl::Status check = a->Check();
  EXPECT_FALSE(check.ok());
  std::unique_ptr<PostgresLeaderLease> b = Lease("b:7070");
  ASSERT_TRUE(b->TryAcquire().value());
  EXPECT_EQ(b->epoch(), 2);
  // Never quietly reopened: the old leader stays lost.
  EXPECT_FALSE(a->Check().ok());
}

TEST_F(PostgresStoreTest, ARenewingLeaderKeepsItsLeaseAndAPausedOneIsReplacedAndKnowsIt) {
  std::unique_ptr<PostgresLeaderLease> a = Lease("a:7070", absl::Seconds(1));
  std::unique_ptr<PostgresLeaderLease> b = Lease("b:7070", absl::Seconds(1));
  ASSERT_TRUE(a->TryAcquire().value());
  // Renewing every 0.25 s, the leader keeps a 1 s lease for 2 s.
  for (int i = 0; i < 8; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    ASSERT_TRUE(a->Check().ok());
    EXPECT_FALSE(b->TryAcquire().value());
  }
  // Paused (its session alive, nothing renewed) past the lease: replaced.
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  ASSERT_TRUE(b->TryAcquire().value());
  EXPECT_EQ(b->epoch(), 2);
  // On waking it knows, before any renewal.
  absl::Status woke = a->Check();
  EXPECT_EQ(woke.code(), absl::StatusCode::kDeadlineExceeded) << woke;
  EXPECT_THAT(woke.message(), HasSubstr("past its ttl"));
  EXPECT_TRUE(b->Check().ok());
}

TEST_F(PostgresStoreTest, ARenewalAfterATakeoverFailsNamingTheNewLeader) {
  std::unique_ptr<PostgresLeaderLease> a = Lease("a:7070", absl::Seconds(1));
  ASSERT_TRUE(a->TryAcquire().value());
  // The lease runs out while a is between renewals (its clock says it is
  // still within ttl only if it checks in time; here another takes it).
  Sql("UPDATE tunefleet_leader SET lease_until = now() - interval '1 second'");
  std::unique_ptr<PostgresLeaderLease> b = Lease("b:7070", absl::Seconds(1));
  ASSERT_TRUE(b->TryAcquire().value());
  absl::Status renewed = a->Check();
  EXPECT_EQ(renewed.code(), absl::StatusCode::kFailedPrecondition) << renewed;
  EXPECT_THAT(renewed.message(), HasSubstr("the store is at epoch 2 (b:7070)"));
}

TEST_F(PostgresStoreTest, ALeaseShorterThanASecondIsRefused) {
  LeaderLeaseOptions options;
  options.ttl = absl::Milliseconds(500);
  EXPECT_EQ(PostgresLeaderLease::Connect(address_, options).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(PostgresStoreTest, AnOldLeadersWritesAreRefusedAfterATakeover) {
  std::unique_ptr<PostgresLeaderLease> a = Lease("a:7070");
  ASSERT_TRUE(a->TryAcquire().value());
  std::unique_ptr<Store> old_store = Open(a->epoch());
  ASSERT_TRUE(old_store->PutJob(Job("j", 1)).ok());
  ASSERT_TRUE(old_store->PutTrials({Trial("j", 0)}).ok());
  // The old leader pauses (its session is cut); another takes over.
  ASSERT_TRUE(server_->TerminateSessions(kLeaseApplicationName).ok());
  std::unique_ptr<PostgresLeaderLease> b = Lease("b:7070");
  ASSERT_TRUE(b->TryAcquire().value());
  std::unique_ptr<Store> new_store = Open(b->epoch());

  // The old leader wakes up and writes: refused, nothing written.
  StoredJob changed = Job("j", 1);
  changed.state = proto::CANCELLED;
  absl::Status put = old_store->PutJob(changed);
  EXPECT_EQ(put.code(), absl::StatusCode::kFailedPrecondition) << put;
  EXPECT_THAT(put.message(), HasSubstr("another tracker took over"));
  absl::Status trials = old_store->PutTrials({Trial("j", 1)});
  EXPECT_EQ(trials.code(), absl::StatusCode::kFailedPrecondition) << trials;
  EXPECT_EQ(new_store->LoadJobs().value()[0].state, proto::RUNNING);
  EXPECT_EQ(new_store->LoadTrials("j").value().size(), 1u);

  // The new leader writes.
  ASSERT_TRUE(new_store->PutTrials({Trial("j", 1)}).ok());
  EXPECT_EQ(new_store->LoadTrials("j").value().size(), 2u);
}

// TLS to the database when the address asks (libpq's sslmode): against a
// server that takes TLS only, a store verifying the server's certificate
// works; one asking for no encryption is refused by the server, and one
// trusting another CA refuses the server.
TEST(PostgresTlsTest, AStoreSpeaksTlsToTheDatabaseWhenAskedAndVerifiesTheServer) {
  absl::StatusOr<TestPki> pki = GenerateTestPki();
  ASSERT_TRUE(pki.ok()) << pki.status();
  PostgresTestServer::Options options;
  options.tls_cert_pem = pki->server.cert_pem;
  options.tls_key_pem = pki->server.key_pem;
  absl::StatusOr<std::unique_ptr<PostgresTestServer>> server = PostgresTestServer::Start(options);
  ASSERT_TRUE(server.ok()) << server.status();
  absl::StatusOr<std::string> database = (*server)->NewDatabase("tls");
  ASSERT_TRUE(database.ok()) << database.status();
  const std::string ca = ::testing::TempDir() + "/pg_ca.pem";
  const std::string other_ca = ::testing::TempDir() + "/pg_other_ca.pem";
  ASSERT_TRUE(ReplaceFileAtomically(ca, pki->ca_pem, 0644).ok());
  ASSERT_TRUE(ReplaceFileAtomically(other_ca, pki->other_ca_pem, 0644).ok());

  absl::StatusOr<std::unique_ptr<Store>> store =
      OpenPostgresStore(*database + "?sslmode=verify-full&sslrootcert=" + ca);
  ASSERT_TRUE(store.ok()) << store.status();
  StoredJob job;
  job.job_id = "over-tls";
  job.sequence = 1;
  ASSERT_TRUE((*store)->PutJob(job).ok());
  EXPECT_EQ((*store)->LoadJobs().value().at(0).job_id, "over-tls");

  absl::StatusOr<std::unique_ptr<Store>> plain = OpenPostgresStore(*database + "?sslmode=disable");
  ASSERT_FALSE(plain.ok());
  EXPECT_THAT(plain.status().message(), HasSubstr("no encryption"));
  absl::StatusOr<std::unique_ptr<Store>> foreign =
      OpenPostgresStore(*database + "?sslmode=verify-full&sslrootcert=" + other_ca);
  ASSERT_FALSE(foreign.ok());
  EXPECT_THAT(foreign.status().message(), HasSubstr("certificate verify failed"));
}

}  // namespace
}  // namespace tunefleet
