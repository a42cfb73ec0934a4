#include "common/daemon_util.h"

#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "gtest/gtest.h"

namespace tunefleet {
namespace {

std::string WriteTemp(const std::string& content) {
  const char* dir = std::getenv("TEST_TMPDIR");
  std::string path = std::string(dir != nullptr ? dir : "/tmp") + "/token_XXXXXX";
  const int fd = mkstemp(path.data());
  EXPECT_GE(fd, 0);
  EXPECT_EQ(write(fd, content.data(), content.size()), static_cast<ssize_t>(content.size()));
  close(fd);
  return path;
}

TEST(DaemonUtilTest, DaemonsAreUndumpable) {
  const pid_t pid = fork();
  if (pid == 0) {
    BlockTerminationSignals();
    _exit(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == 0 ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

TEST(DaemonUtilTest, TokenFileIsTrimmed) {
  auto token = ReadTokenFile(WriteTemp("  s3cret\n"));
  ASSERT_TRUE(token.ok()) << token.status();
  EXPECT_EQ(*token, "s3cret");
}

TEST(DaemonUtilTest, EmptyPathMeansNoToken) {
  auto token = ReadTokenFile("");
  ASSERT_TRUE(token.ok());
  EXPECT_EQ(*token, "");
}

TEST(DaemonUtilTest, MissingOrBlankTokenFileIsAnErrorNamingThePath) {
  auto missing = ReadTokenFile("/nonexistent/token");
  EXPECT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("/nonexistent/token"), std::string::npos);
  const std::string blank = WriteTemp(" \n");
  auto empty = ReadTokenFile(blank);
  EXPECT_EQ(empty.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(DaemonUtilTest, DefaultNameCarriesPrefixAndPid) {
  const std::string name = DefaultWorkerName("builder");
  EXPECT_EQ(name.rfind("builder-", 0), 0u);
  EXPECT_NE(name.find(std::to_string(getpid())), std::string::npos);
}

}  // namespace
}  // namespace tunefleet
