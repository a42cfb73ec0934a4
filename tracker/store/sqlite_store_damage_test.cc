// A damaged SQLite store: a 0-byte file, a file damaged inside (quick_check),
// damaged rows, and --store_check's report of them. Each refusal names the
// file and the way out.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tracker/store/sqlite_store.h"
#include "tracker/store/sqlite_test_util.h"

namespace tunefleet {
namespace {

using ::testing::HasSubstr;

class SqliteStoreDamageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* base = std::getenv("TEST_TMPDIR");
    std::string dir = absl::StrCat(base != nullptr ? base : "/tmp", "/damage_test.XXXXXX");
    ASSERT_NE(mkdtemp(dir.data()), nullptr);
    path_ = dir + "/tracker.db";
  }

  // A store with `jobs` jobs of two trials each (job-0, job-1, ...), closed.
  void MakeStore(int jobs) {
    auto store = OpenSqliteStore(path_);
    ASSERT_TRUE(store.ok()) << store.status();
    for (int i = 0; i < jobs; ++i) {
      StoredJob job;
      job.job_id = absl::StrCat("job-", i);
      job.sequence = i;
      job.spec.set_name(std::string(300, 'x'));  // rows spread over several pages
      job.spec.set_n_trial(2);
      job.state = proto::SUCCEEDED;
      ASSERT_TRUE((*store)->PutJob(job).ok());
      std::vector<StoredTrial> trials(2);
      for (int t = 0; t < 2; ++t) {
        trials[t].job_id = job.job_id;
        trials[t].trial_id = t;
        trials[t].config_json = "{}";
        trials[t].done = true;
        trials[t].result.add_costs(1e-3);
        trials[t].record_line = absl::StrCat(R"({"job":")", job.job_id, R"(","trial":)", t, "}");
      }
      ASSERT_TRUE((*store)->PutTrials(trials).ok());
    }
  }

  void RawExec(const std::string& sql) { ExecSqlBehindTheStore(path_, sql); }

  std::string path_;
};

TEST_F(SqliteStoreDamageTest, AnEmptyFileIsRefusedNotMadeANewStore) {
  ASSERT_TRUE(ReplaceFileAtomically(path_, "").ok());
  auto store = OpenSqliteStore(path_);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(store.status().message(),
            absl::StrCat("store ", path_,
                         " is empty (0 bytes) — not a TuneFleet store; remove it to start fresh or "
                         "restore it from backup"));
  struct stat st;
  ASSERT_EQ(stat(path_.c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 0) << "the file was written";
}

TEST_F(SqliteStoreDamageTest, AMissingFileStillBecomesANewStore) {
  auto store = OpenSqliteStore(path_);
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_TRUE((*store)->LoadJobs().value().empty());
}

TEST_F(SqliteStoreDamageTest, AFileDamagedInsideIsRefusedWithTheRepairPath) {
  MakeStore(100);
  // Overwrite part of a table page (not the header page) behind SQLite's back.
  FILE* file = std::fopen(path_.c_str(), "r+b");
  ASSERT_NE(file, nullptr);
  ASSERT_EQ(std::fseek(file, 2 * 4096 + 8, SEEK_SET), 0);
  const std::string garbage(200, '\xab');
  ASSERT_EQ(std::fwrite(garbage.data(), 1, garbage.size(), file), garbage.size());
  std::fclose(file);

  auto store = OpenSqliteStore(path_);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kDataLoss) << store.status();
  EXPECT_THAT(store.status().message(), HasSubstr(path_ + " is damaged (PRAGMA quick_check"));
  EXPECT_THAT(store.status().message(), HasSubstr("sqlite3 " + path_ + " .recover"));
  EXPECT_THAT(store.status().message(), HasSubstr("--store_check"));

  std::ostringstream report;
  EXPECT_EQ(RunSqliteStoreCheck(path_, report), 1);
  EXPECT_THAT(report.str(), HasSubstr("is damaged"));
}

TEST_F(SqliteStoreDamageTest, AFileThatIsNotADatabaseNamesTheWayOut) {
  ASSERT_TRUE(ReplaceFileAtomically(path_, std::string(8192, 'z')).ok());
  auto store = OpenSqliteStore(path_);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition) << store.status();
  EXPECT_THAT(store.status().message(), HasSubstr("not a SQLite database"));
  EXPECT_THAT(store.status().message(), HasSubstr("restore the file from backup"));
}

TEST_F(SqliteStoreDamageTest, StoreCheckListsEachDamagedRowAndPassesASoundStore) {
  MakeStore(3);
  std::ostringstream sound;
  EXPECT_EQ(RunSqliteStoreCheck(path_, sound), 0) << sound.str();
  EXPECT_THAT(sound.str(), HasSubstr("3 jobs, 6 trials, 0 damaged rows"));

  RawExec("UPDATE jobs SET spec = X'FFFFFFFF' WHERE job_id = 'job-1'");
  RawExec("UPDATE trials SET result = X'0A' WHERE job_id = 'job-2' AND trial_id = 1");
  auto check = CheckSqliteStore(path_);
  ASSERT_TRUE(check.ok()) << check.status();
  EXPECT_EQ(check->jobs, 3);
  ASSERT_EQ(check->problems.size(), 2u);
  EXPECT_THAT(check->problems[0], HasSubstr("job 'job-1'"));
  EXPECT_THAT(check->problems[1], HasSubstr("trial 1 of job 'job-2'"));
  std::ostringstream damaged;
  EXPECT_EQ(RunSqliteStoreCheck(path_, damaged), 1);
  EXPECT_THAT(damaged.str(), HasSubstr("2 damaged rows"));

  // The rows are left as they were: nothing was rewritten by loading them.
  auto store = OpenSqliteStore(path_);
  ASSERT_TRUE(store.ok());
  EXPECT_EQ((*store)->LoadTrials("job-2").status().code(), absl::StatusCode::kDataLoss);
}

TEST_F(SqliteStoreDamageTest, StoreCheckNeverCreatesAStore) {
  auto check = CheckSqliteStore(path_);
  EXPECT_EQ(check.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(access(path_.c_str(), F_OK), 0);
}

}  // namespace
}  // namespace tunefleet
