#include "metrics/process_stats.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace {

using ::testing::HasSubstr;

// A fake /proc: <root>/stat and <root>/42/{stat,limits,fd/}.
class FakeProc {
 public:
  explicit FakeProc(const std::string& name) {
    const char* tmpdir = std::getenv("TEST_TMPDIR");
    root_ = absl::StrCat(tmpdir != nullptr ? tmpdir : "/tmp", "/", name);
    mkdir(root_.c_str(), 0755);
    mkdir((root_ + "/42").c_str(), 0755);
    mkdir((root_ + "/42/fd").c_str(), 0755);
  }
  void Write(const std::string& relative, const std::string& content) const {
    std::ofstream(absl::StrCat(root_, "/", relative)) << content;
  }
  ProcFiles files() const {
    return {.proc_root = root_, .process = "42", .ticks_per_second = 100, .page_bytes = 4096};
  }

 private:
  std::string root_;
};

// proc(5) fields 3..24 after "(comm)": utime=250 stime=50 starttime=12345
// vsize=1048576 rss=300.
constexpr char kStat[] =
    "42 (tune fleet) (x)) S 1 42 42 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 3 0 12345 1048576 300 "
    "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n";
constexpr char kBootStat[] = "cpu  1 2 3 4\nintr 5\nbtime 1700000000\nprocesses 9\n";
constexpr char kLimits[] =
    "Limit                     Soft Limit           Hard Limit           Units     \n"
    "Max cpu time              unlimited            unlimited            seconds   \n"
    "Max open files            1024                 524288               files     \n";

TEST(ProcessStatsTest, ReadsEveryFigureFromAFakeProc) {
  FakeProc proc("proc_all");
  proc.Write("stat", kBootStat);
  proc.Write("42/stat", kStat);
  proc.Write("42/limits", kLimits);
  proc.Write("42/fd/0", "");
  proc.Write("42/fd/1", "");
  proc.Write("42/fd/7", "");

  absl::StatusOr<ProcessStats> stats = ReadProcessStats(proc.files());
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_DOUBLE_EQ(stats->cpu_seconds, 3.0);  // (250 + 50) ticks / 100
  EXPECT_DOUBLE_EQ(stats->start_time_seconds, 1700000000 + 123.45);
  EXPECT_DOUBLE_EQ(stats->virtual_memory_bytes, 1048576);
  EXPECT_DOUBLE_EQ(stats->resident_memory_bytes, 300 * 4096);
  EXPECT_DOUBLE_EQ(stats->max_fds, 1024);
  EXPECT_DOUBLE_EQ(stats->open_fds, 3);
}

TEST(ProcessStatsTest, AnUnlimitedFdLimitReadsAsInfinity) {
  FakeProc proc("proc_unlimited");
  proc.Write("stat", kBootStat);
  proc.Write("42/stat", kStat);
  proc.Write("42/limits",
             "Max open files            unlimited            unlimited            files\n");
  absl::StatusOr<ProcessStats> stats = ReadProcessStats(proc.files());
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_TRUE(std::isinf(stats->max_fds));
}

TEST(ProcessStatsTest, ATruncatedStatFileIsAnErrorNamingIt) {
  FakeProc proc("proc_truncated");
  proc.Write("stat", kBootStat);
  proc.Write("42/stat", "42 (x) S 1 42\n");
  proc.Write("42/limits", kLimits);
  absl::StatusOr<ProcessStats> stats = ReadProcessStats(proc.files());
  ASSERT_FALSE(stats.ok());
  EXPECT_EQ(stats.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(stats.status().message(), HasSubstr("42/stat"));
}

TEST(ProcessStatsTest, AMissingBootTimeIsAnErrorNamingTheFile) {
  FakeProc proc("proc_no_btime");
  proc.Write("stat", "cpu 1 2 3\n");
  proc.Write("42/stat", kStat);
  proc.Write("42/limits", kLimits);
  absl::StatusOr<ProcessStats> stats = ReadProcessStats(proc.files());
  ASSERT_FALSE(stats.ok());
  EXPECT_THAT(stats.status().message(), HasSubstr("btime"));
}

TEST(ProcessStatsTest, AMissingProcessIsNotFound) {
  FakeProc proc("proc_missing");
  ProcFiles files = proc.files();
  files.process = "does-not-exist";
  absl::StatusOr<ProcessStats> stats = ReadProcessStats(files);
  ASSERT_FALSE(stats.ok());
  EXPECT_EQ(stats.status().code(), absl::StatusCode::kNotFound);
}

TEST(ProcessStatsTest, ThisProcessHasPlausibleFigures) {
  absl::StatusOr<ProcessStats> stats = ReadProcessStats();
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_GT(stats->resident_memory_bytes, 0);
  EXPECT_GE(stats->virtual_memory_bytes, stats->resident_memory_bytes);
  EXPECT_GE(stats->open_fds, 3);  // stdin, stdout, stderr
  EXPECT_GE(stats->max_fds, stats->open_fds);
  EXPECT_GT(stats->start_time_seconds, 1.5e9);  // after 2017
}

}  // namespace
}  // namespace tunefleet
