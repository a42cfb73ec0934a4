#include "common/file_util.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace {

std::string TempDir() {
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::string templ = std::string(tmp != nullptr ? tmp : "/tmp") + "/file_util-XXXXXX";
  return mkdtemp(templ.data()) != nullptr ? templ : "/tmp";
}

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(ReplaceFileAtomicallyTest, ReplacesContentAndSetsMode) {
  const std::string path = TempDir() + "/token";
  ASSERT_TRUE(ReplaceFileAtomically(path, "first\n", 0600).ok());
  ASSERT_TRUE(ReplaceFileAtomically(path, "second\n", 0600).ok());
  EXPECT_EQ(Read(path), "second\n");
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_TRUE(ReplaceFileAtomically(path, "third", 0644).ok());
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
}

TEST(ReplaceFileAtomicallyTest, FailureNamesThePathAndLeavesNoTemporary) {
  const std::string dir = TempDir();
  const std::string path = dir + "/missing/file";
  absl::Status status = ReplaceFileAtomically(path, "x");
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(status.message(), testing::HasSubstr(path));
  // A rename onto a directory fails after the temporary was written.
  const std::string target = dir + "/a_directory";
  ASSERT_EQ(mkdir(target.c_str(), 0700), 0);
  status = ReplaceFileAtomically(target, "x");
  EXPECT_THAT(status.message(), testing::HasSubstr("rename"));
  int entries = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    EXPECT_EQ(entry.path().filename().string().find(".tmp."), std::string::npos) << entry.path();
    ++entries;
  }
  EXPECT_EQ(entries, 1);  // a_directory only
}

}  // namespace
}  // namespace tunefleet
