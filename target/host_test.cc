#include "target/host.h"

#include <sys/utsname.h>

#include <algorithm>
#include <vector>

#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace {

TEST(HostTest, TheHostArchIsTheMachineTheKernelReports) {
  struct utsname names;
  ASSERT_EQ(uname(&names), 0);
  const Arch* host = HostArch();
  if (host == nullptr) GTEST_SKIP() << names.machine << " has no architecture folder";
  EXPECT_EQ(host->name(), names.machine);
  EXPECT_FALSE(host->is_gpu());
}

// Whatever the machine, the features a compiled model needs at the
// architecture's baseline are reported (x86-64: SSE2 in every CPU's flags;
// AArch64: fp and asimd, from HWCAP even under qemu-user).
TEST(HostTest, ReportsTheBaselineFeatures) {
  const Arch* host = HostArch();
  if (host == nullptr) GTEST_SKIP();
  const std::string features = HostCpuFeatures();
  const std::vector<std::string> names = absl::StrSplit(features, ' ');
  if (host->name() == "x86_64") {
    EXPECT_THAT(names, ::testing::Contains("sse2")) << features;
  } else if (host->name() == "aarch64") {
    EXPECT_THAT(names, ::testing::IsSupersetOf({"fp", "asimd"})) << features;
  }
  EXPECT_GT(host->Fp32Lanes([&](absl::string_view f) {
    return std::find(names.begin(), names.end(), f) != names.end();
  }),
            0)
      << features;
}

TEST(HostTest, FlushedDataReadsBackUnchanged) {
  std::vector<float> data(100000);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(i);
  // An empty range, an unaligned one and a large one.
  FlushCacheLines({{data.data(), 0}, {data.data() + 3, 17}, {data.data(), data.size() * 4}});
  for (size_t i = 0; i < data.size(); ++i) ASSERT_EQ(data[i], static_cast<float>(i));
  CpuRelax();
}

}  // namespace
}  // namespace tunefleet
