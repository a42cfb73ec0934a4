// The CPU-feature check of compiled models: HWCAP decoding for AArch64
// (what qemu-user and a board's kernel report), /proc/cpuinfo lines of
// both architectures, and the host's own list against what a plan asks.
#include "compiler/runtime/cpu_features.h"

#include "compiler/runtime/model_runtime.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(CpuFeaturesTest, DecodesAarch64HwcapBits) {
  // A Cortex-A72 (RK3399 big core): fp asimd evtstrm aes pmull sha1 sha2 crc32 cpuid.
  const uint64_t a72 = (1u << 0) | (1u << 1) | (1u << 2) | (1u << 3) | (1u << 4) | (1u << 5) |
                       (1u << 6) | (1u << 7) | (1u << 11);
  EXPECT_EQ(Aarch64HwcapNames(a72, 0), "fp asimd evtstrm aes pmull sha1 sha2 crc32 cpuid");
  EXPECT_EQ(Aarch64HwcapNames((1u << 20) | (1u << 22), (1u << 1) | (1u << 14)),
            "asimddp sve sve2 bf16");
  EXPECT_EQ(Aarch64HwcapNames(0, 0), "");
}

TEST(CpuFeaturesTest, ReadsTheLabelledCpuinfoLine) {
  const std::string arm =
      "processor\t: 0\nBogoMIPS\t: 48.00\nFeatures\t: fp asimd evtstrm crc32 cpuid\n"
      "CPU implementer\t: 0x41\n";
  EXPECT_EQ(CpuinfoFeatureLine(arm, "Features"), "fp asimd evtstrm crc32 cpuid");
  EXPECT_EQ(CpuinfoFeatureLine(arm, "flags"), "");
  const std::string x86 = "processor\t: 0\nflags\t\t: fpu vme sse4_2 avx avx2 fma\nbugs\t\t:\n";
  EXPECT_EQ(CpuinfoFeatureLine(x86, "flags"), "fpu vme sse4_2 avx avx2 fma");
  // "flagsfoo" is not the flags line.
  EXPECT_EQ(CpuinfoFeatureLine("flagsfoo : x\n", "flags"), "");
}

TEST(CpuFeaturesTest, MissingFeaturesAreNamed) {
  EXPECT_THAT(MissingCpuFeatures({"fp", "asimd", "sve"}, "fp asimd evtstrm"), ElementsAre("sve"));
  EXPECT_THAT(MissingCpuFeatures({"avx2", "fma"}, "fpu avx avx2 fma"), IsEmpty());
}

TEST(CpuFeaturesTest, HostReportsItsBaseline) {
  const std::string host = HostCpuFeatures();
#if defined(__aarch64__)
  EXPECT_THAT(MissingCpuFeatures({"fp", "asimd"}, host), IsEmpty()) << host;
#elif defined(__x86_64__)
  EXPECT_THAT(MissingCpuFeatures({"sse2"}, host), IsEmpty()) << host;
#endif
}

}  // namespace
}  // namespace tunefleet
