#include "toolchain/linker.h"

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <thread>
#include <vector>

#include "common/file_util.h"
#include "gtest/gtest.h"
#include "toolchain/builder.h"
#include "toolchain/kernel_test_util.h"

namespace tunefleet {
namespace {

const LinkOptions kInProcess{.in_process = true};
const LinkOptions kChildProcess{.in_process = false};

// A real kernel's object (dense_pack.x86, a random config) for this host.
struct BuiltObject {
  std::string object;
  std::string entry_name;
};
BuiltObject DenseKernelObject() {
  BuiltObject built;
  kernel_test::ForRandomConfigs(
      "dense_pack.x86", {{{"M", 16}, {"N", 32}, {"K", 24}}}, 1, /*seed=*/7,
      [&](const Template& tmpl, const Workload& workload, const Config& config, int64_t) {
        absl::StatusOr<TargetSpec> host = ParseTarget("llvm -mcpu=native");
        ASSERT_TRUE(host.ok()) << host.status();
        KernelObject object = BuildKernelObject(tmpl, workload, config, *host);
        ASSERT_TRUE(object.ok()) << object.error_msg;
        built.object = object.object;
        built.entry_name = object.entry_name;
      });
  return built;
}

// The library lld makes in this process is byte for byte what ld.lld makes
// as a child process, and it loads with the kernel's entry defined.
TEST(LinkerTest, InProcessAndChildProcessLinksMakeTheSameLibrary) {
  const BuiltObject built = DenseKernelObject();
  ASSERT_FALSE(built.object.empty());
  absl::StatusOr<std::string> in_process = LinkSharedObject(built.object, TargetSpec(), kInProcess);
  ASSERT_TRUE(in_process.ok()) << in_process.status();
  absl::StatusOr<std::string> child = LinkSharedObject(built.object, TargetSpec(), kChildProcess);
  ASSERT_TRUE(child.ok()) << child.status();
  EXPECT_EQ(*in_process, *child);
  std::string error;
  void* handle = kernel_test::LoadSharedObject(*in_process, &error);
  ASSERT_NE(handle, nullptr) << error;
  EXPECT_NE(dlsym(handle, built.entry_name.c_str()), nullptr) << built.entry_name;
  dlclose(handle);
}

// A link lld refuses in this process comes back as an error with lld's own
// message, and the links after it still work.
TEST(LinkerTest, InProcessFailuresNameLldsMessageAndLinkingGoesOn) {
  absl::StatusOr<std::string> bad =
      LinkSharedObject("not an object file", TargetSpec(), kInProcess);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("lld in process"), std::string::npos) << bad.status();
  EXPECT_NE(bad.status().message().find("kernel.o"), std::string::npos)
      << "lld names the input it could not read: " << bad.status();
  const BuiltObject built = DenseKernelObject();
  absl::StatusOr<std::string> good = LinkSharedObject(built.object, TargetSpec(), kInProcess);
  EXPECT_TRUE(good.ok()) << good.status();
}

// Builder threads link at once: every link succeeds and makes the same
// library (lld's globals are never shared by two links).
TEST(LinkerTest, LinksFromManyThreadsAtOnceAllSucceed) {
  const BuiltObject built = DenseKernelObject();
  absl::StatusOr<std::string> expected = LinkSharedObject(built.object, TargetSpec(), kInProcess);
  ASSERT_TRUE(expected.ok()) << expected.status();
  constexpr int kThreads = 4, kLinksEach = 5;
  std::vector<std::vector<absl::StatusOr<std::string>>> results(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kLinksEach; ++i) {
        results[t].push_back(LinkSharedObject(built.object, TargetSpec(), kInProcess));
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (const auto& per_thread : results) {
    for (const absl::StatusOr<std::string>& r : per_thread) {
      ASSERT_TRUE(r.ok()) << r.status();
      EXPECT_EQ(*r, *expected);
    }
  }
}

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

  for (const LinkOptions& options : {kChildProcess, kInProcess}) {
    unlink((output + ".link.log").c_str());
    ASSERT_EQ(symlink(victim.c_str(), (output + ".link.log").c_str()), 0);
    EXPECT_FALSE(LinkSharedObjectFiles({bogus}, output, options).ok());  // not an object
    EXPECT_EQ(ReadFileToString(victim, 1 << 10).value_or(""), "precious");
    struct stat info;
    EXPECT_NE(lstat((output + ".link.log").c_str(), &info), 0) << "the log is removed afterwards";
  }
}

// Objects linked from bytes go through a private directory each time:
// nothing is left behind in TMPDIR.
TEST(LinkerTest, LinkingFromBytesLeavesNothingInTmpdir) {
  const std::string tmp = ::testing::TempDir() + "/tmpdir";
  mkdir(tmp.c_str(), 0700);
  setenv("TMPDIR", tmp.c_str(), 1);
  for (const LinkOptions& options : {kChildProcess, kInProcess}) {
    EXPECT_FALSE(LinkSharedObject("not an object file", TargetSpec(), options).ok());
  }
  unsetenv("TMPDIR");
  EXPECT_EQ(rmdir(tmp.c_str()), 0) << "something was left in " << tmp;
}

}  // namespace
}  // namespace tunefleet
