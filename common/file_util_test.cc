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

TEST(ReadFileToStringTest, ReadsAFileUpToTheCap) {
  const std::string path = TempDir() + "/exact";
  ASSERT_TRUE(ReplaceFileAtomically(path, "12345678").ok());
  absl::StatusOr<std::string> content = ReadFileToString(path, 8);
  ASSERT_TRUE(content.ok()) << content.status();
  EXPECT_EQ(*content, "12345678");
  ASSERT_TRUE(ReplaceFileAtomically(path, "").ok());
  EXPECT_EQ(ReadFileToString(path, 8).value(), "");
}

TEST(ReadPrivateFileToStringTest, ReadsAnOwnerOnlyFileAndRefusesGroupOrOtherAccess) {
  const std::string path = TempDir() + "/secret";
  ASSERT_TRUE(ReplaceFileAtomically(path, "s3cret", 0600).ok());
  EXPECT_EQ(ReadPrivateFileToString(path, 64).value(), "s3cret");
  struct Case {
    mode_t mode;
    const char* says;
  };
  for (const Case& c : {Case{0640, "readable by its group (mode 640)"},
                        Case{0620, "writable by its group (mode 620)"},
                        Case{0604, "readable by other users (mode 604)"}}) {
    ASSERT_TRUE(ReplaceFileAtomically(path, "s3cret", c.mode).ok());
    const absl::StatusOr<std::string> content = ReadPrivateFileToString(path, 64);
    EXPECT_EQ(content.status().code(), absl::StatusCode::kFailedPrecondition) << content.status();
    EXPECT_THAT(content.status().message(), testing::HasSubstr(c.says));
    EXPECT_THAT(content.status().message(), testing::HasSubstr("run: chmod 600 " + path));
  }
}

TEST(ReadFileToStringTest, RefusesAFileOverTheCapNamingFileAndCap) {
  const std::string path = TempDir() + "/big";
  ASSERT_TRUE(ReplaceFileAtomically(path, "123456789").ok());
  absl::StatusOr<std::string> content = ReadFileToString(path, 8);
  ASSERT_FALSE(content.ok());
  EXPECT_EQ(content.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(content.status().message(), testing::HasSubstr(path));
  EXPECT_THAT(content.status().message(), testing::HasSubstr("9 bytes, over the cap of 8 bytes"));
}

TEST(ReadFileToStringTest, CapsAProcFileThatReportsNoSize) {
  // /proc files report st_size 0: the cap holds while reading.
  absl::StatusOr<std::string> content = ReadFileToString("/proc/self/status", 16);
  ASSERT_FALSE(content.ok());
  EXPECT_THAT(content.status().message(), testing::HasSubstr("over the cap of 16 bytes"));
  EXPECT_TRUE(ReadFileToString("/proc/self/status", kMaxConfigFileBytes).ok());
}

TEST(ReadFileToStringTest, MissingFileAndDirectoryAreClearErrors) {
  const std::string dir = TempDir();
  absl::StatusOr<std::string> missing = ReadFileToString(dir + "/none", 8);
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), testing::HasSubstr(dir + "/none"));
  absl::StatusOr<std::string> directory = ReadFileToString(dir, 8);
  EXPECT_EQ(directory.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(directory.status().message(), testing::HasSubstr("not a regular file"));
}

}  // namespace
}  // namespace tunefleet
