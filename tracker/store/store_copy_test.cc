#include "tracker/store/store_copy.h"

#include <stdlib.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tracker/store/memory_store.h"
#include "tracker/store/sqlite_store.h"
#include "tracker/store/sqlite_test_util.h"

namespace tunefleet {
namespace {

using ::testing::HasSubstr;

StoredJob Job(const std::string& id, int64_t sequence) {
  StoredJob job;
  job.job_id = id;
  job.sequence = sequence;
  job.spec.set_name("job " + id);
  job.state = proto::SUCCEEDED;
  job.created_at = 1700000000.5;
  return job;
}

StoredTrial Trial(const std::string& job_id, int64_t trial_id) {
  StoredTrial trial;
  trial.job_id = job_id;
  trial.trial_id = trial_id;
  trial.config_json = absl::StrCat(R"({"index":)", trial_id, "}");
  trial.done = true;
  trial.result.add_costs(1e-3 * (trial_id + 1));
  trial.record_line = absl::StrCat("record ", job_id, " ", trial_id);
  return trial;
}

std::string TempDir() {
  const char* base = getenv("TEST_TMPDIR");
  std::string dir = absl::StrCat(base != nullptr ? base : "/tmp", "/store_copy.XXXXXX");
  EXPECT_NE(mkdtemp(dir.data()), nullptr);
  return dir;
}

TEST(StoreCopyTest, CopiesEveryJobTrialAndRecordInOrder) {
  MemoryStore from, to;
  ASSERT_TRUE(from.PutJob(Job("b", 2)).ok());
  ASSERT_TRUE(from.PutJob(Job("a", 1)).ok());
  std::vector<StoredTrial> many;
  for (int i = 0; i < 1203; ++i) many.push_back(Trial("a", i));  // several batches
  ASSERT_TRUE(from.PutTrials(many).ok());
  ASSERT_TRUE(from.PutTrials({Trial("b", 0)}).ok());

  absl::StatusOr<StoreCopy> copied = CopyStore(from, to);
  ASSERT_TRUE(copied.ok()) << copied.status();
  EXPECT_EQ(copied->jobs, 2);
  EXPECT_EQ(copied->trials, 1204);
  EXPECT_EQ(copied->damaged_jobs, 0);
  EXPECT_EQ(to.LoadRecordLines("").value(), from.LoadRecordLines("").value());
  EXPECT_EQ(to.LoadJobs().value()[0].spec.name(), "job a");
  EXPECT_EQ(to.LoadTrials("a").value().size(), 1203u);
}

TEST(StoreCopyTest, RefusesATargetThatHoldsJobs) {
  MemoryStore from, to;
  ASSERT_TRUE(from.PutJob(Job("a", 1)).ok());
  ASSERT_TRUE(to.PutJob(Job("in_use", 1)).ok());
  absl::StatusOr<StoreCopy> copied = CopyStore(from, to);
  EXPECT_EQ(copied.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(copied.status().message(), HasSubstr("'in_use'"));
  EXPECT_EQ(to.LoadJobs().value().size(), 1u);
}

TEST(StoreCopyTest, UnreadableTrialsStopTheCopyNamingTheJobAndWriteNothingOfIt) {
  const std::string path = TempDir() + "/tracker.db";
  {
    std::unique_ptr<Store> sqlite = OpenSqliteStore(path).value();
    ASSERT_TRUE(sqlite->PutJob(Job("good", 1)).ok());
    ASSERT_TRUE(sqlite->PutJob(Job("bad", 2)).ok());
    ASSERT_TRUE(sqlite->PutTrials({Trial("good", 0), Trial("bad", 0)}).ok());
  }
  ExecSqlBehindTheStore(path, "UPDATE trials SET result = x'ffffffff' WHERE job_id = 'bad'");
  std::unique_ptr<Store> from = OpenSqliteStore(path).value();
  MemoryStore to;
  absl::StatusOr<StoreCopy> copied = CopyStore(*from, to);
  EXPECT_EQ(copied.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(copied.status().message(), HasSubstr("job 'bad'"));
  EXPECT_THAT(copied.status().message(), HasSubstr("1 job(s) copied before it"));
  EXPECT_EQ(to.LoadJobs().value().size(), 1u);  // "good" only
}

TEST(StoreCopyTest, ADamagedJobRowIsCopiedAsFailedAndCounted) {
  const std::string path = TempDir() + "/tracker.db";
  {
    std::unique_ptr<Store> sqlite = OpenSqliteStore(path).value();
    ASSERT_TRUE(sqlite->PutJob(Job("damaged", 1)).ok());
  }
  ExecSqlBehindTheStore(path, "UPDATE jobs SET spec = x'ffffffff'");
  std::unique_ptr<Store> from = OpenSqliteStore(path).value();
  MemoryStore to;
  absl::StatusOr<StoreCopy> copied = CopyStore(*from, to);
  ASSERT_TRUE(copied.ok()) << copied.status();
  EXPECT_EQ(copied->damaged_jobs, 1);
  EXPECT_EQ(to.LoadJobs().value()[0].state, proto::FAILED);
  EXPECT_THAT(to.LoadJobs().value()[0].message, HasSubstr(kDamagedRowMessage));
}

}  // namespace
}  // namespace tunefleet
