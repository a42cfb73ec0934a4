#include "kernel_runtime/file_confinement.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <functional>
#include <string>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace {

std::string TestDir() {
  const char* dir = std::getenv("TEST_TMPDIR");
  return dir != nullptr ? dir : "/tmp";
}

// Runs `body` in a forked child (confinement is irreversible) and returns
// its exit code, or -signal.
int InChild(const std::function<int()>& body) {
  const pid_t pid = fork();
  if (pid == 0) _exit(body());
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
}

bool CanRead(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char byte;
  const bool read_one = read(fd, &byte, 1) >= 0;
  close(fd);
  return read_one;
}

TEST(FileConfinementTest, TheRunnersViewHasTheLibrariesAndNotTheSecrets) {
  ASSERT_GT(LandlockAbiVersion(), 0) << "this kernel has no Landlock";
  const std::string secret = TestDir() + "/builder.key";
  {
    const int fd = open(secret.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(write(fd, "k", 1), 1);
    close(fd);
  }
  ASSERT_TRUE(CanRead(secret));
  const int code = InChild([&] {
    if (!ConfineFiles(FileConfinementFor("")).ok()) return 1;
    if (CanRead(secret)) return 2;  // the daemons' files: refused
    if (errno != EACCES) return 3;
    if (CanRead("/etc/passwd")) return 4;           // /etc beyond the loader cache
    if (!CanRead("/etc/ld.so.cache")) return 5;     // the loader's cache
    if (!CanRead("/usr/lib/os-release")) return 6;  // the system's files
    // A kernel arrives in a memfd and is opened through /proc/self/fd.
    const int memfd = memfd_create("kernel", MFD_CLOEXEC);
    if (memfd < 0 || write(memfd, "x", 1) != 1) return 7;
    if (!CanRead("/proc/self/fd/" + std::to_string(memfd))) return 8;
    // Writing is refused even where reading is allowed.
    if (open("/usr/lib/os-release", O_WRONLY | O_CLOEXEC) >= 0) return 9;
    return 0;
  });
  EXPECT_EQ(code, 0);
}

TEST(FileConfinementTest, ThreadsStartedAfterwardsAreConfinedToo) {
  ASSERT_GT(LandlockAbiVersion(), 0);
  const std::string secret = TestDir() + "/token";
  {
    const int fd = open(secret.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ASSERT_GE(fd, 0);
    close(fd);
  }
  const int code = InChild([&] {
    if (!ConfineFiles(FileConfinementFor("")).ok()) return 1;
    int result = 0;
    std::thread reader([&] { result = CanRead(secret) ? 2 : 0; });
    reader.join();
    return result;
  });
  EXPECT_EQ(code, 0);
}

TEST(FileConfinementTest, TheDriversDirectoryAndLibraryPathAreReadable) {
  setenv("LD_LIBRARY_PATH", "/opt/bundle/lib::/srv/libs", 1);
  const FileConfinement c = FileConfinementFor("/opt/cuda/lib64/libcuda.so.1");
  unsetenv("LD_LIBRARY_PATH");
  EXPECT_THAT(c.readable_trees,
              ::testing::IsSupersetOf({"/usr", "/opt/bundle/lib", "/srv/libs", "/opt/cuda/lib64"}));
  EXPECT_THAT(c.readable_trees, ::testing::Not(::testing::Contains("")));
  EXPECT_THAT(FileConfinementFor("libcuda.so.1").readable_trees,
              ::testing::Not(::testing::Contains("")));
}

}  // namespace
}  // namespace tunefleet
