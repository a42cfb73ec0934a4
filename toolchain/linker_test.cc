#include "toolchain/linker.h"

#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "common/file_util.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace {

// A link planted at the name of the linker's log (in a shared directory, by
// another user) is not written through: the file it points at keeps its
// bytes.
TEST(LinkerTest, ALinkPlantedAtTheLogsNameIsNotWrittenThrough) {
  const std::string dir = ::testing::TempDir();
  const std::string victim = dir + "/precious";
  ASSERT_TRUE(ReplaceFileAtomically(victim, "precious").ok());
  const std::string bogus = dir + "/bogus.o";
  ASSERT_TRUE(ReplaceFileAtomically(bogus, "not an object file").ok());
  const std::string output = dir + "/out.so";
  unlink((output + ".link.log").c_str());
  ASSERT_EQ(symlink(victim.c_str(), (output + ".link.log").c_str()), 0);

  EXPECT_FALSE(LinkSharedObjectFiles({bogus}, output, {}).ok());  // not an object
  EXPECT_EQ(ReadFileToString(victim, 1 << 10).value_or(""), "precious");
  struct stat info;
  EXPECT_NE(lstat((output + ".link.log").c_str(), &info), 0) << "the log is removed afterwards";
}

// Objects linked from bytes go through a private directory each time:
// nothing is left behind in TMPDIR.
TEST(LinkerTest, LinkingFromBytesLeavesNothingInTmpdir) {
  const std::string tmp = ::testing::TempDir() + "/tmpdir";
  mkdir(tmp.c_str(), 0700);
  setenv("TMPDIR", tmp.c_str(), 1);
  EXPECT_FALSE(LinkSharedObject("not an object file", TargetSpec(), {}).ok());
  unsetenv("TMPDIR");
  EXPECT_EQ(rmdir(tmp.c_str()), 0) << "something was left in " << tmp;
}

}  // namespace
}  // namespace tunefleet
