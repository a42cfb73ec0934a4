#include "target/cpuinfo.h"

#include "gtest/gtest.h"

namespace tunefleet {
namespace {

TEST(CpuinfoTest, ReadsTheFirstLineWithTheKey) {
  const std::string arm =
      "processor\t: 0\nBogoMIPS\t: 48.00\nFeatures\t: fp asimd evtstrm crc32 cpuid\n"
      "CPU implementer\t: 0x41\nCPU part\t: 0xd08\n\nprocessor\t: 1\nCPU part\t: 0xd03\n";
  EXPECT_EQ(CpuinfoValue(arm, "Features"), "fp asimd evtstrm crc32 cpuid");
  EXPECT_EQ(CpuinfoValue(arm, "CPU part"), "0xd08");
  EXPECT_EQ(CpuinfoValue(arm, "flags"), "");
  const std::string x86 = "processor\t: 0\nflags\t\t: fpu vme sse4_2 avx avx2 fma\nbugs\t\t:\n";
  EXPECT_EQ(CpuinfoValue(x86, "flags"), "fpu vme sse4_2 avx avx2 fma");
  EXPECT_EQ(CpuinfoValue(x86, "bugs"), "");
}

TEST(CpuinfoTest, TheKeyIsMatchedWhole) {
  EXPECT_EQ(CpuinfoValue("flagsfoo : x\n", "flags"), "");
  EXPECT_EQ(CpuinfoValue("model name : AMD EPYC\n", "model"), "");
  EXPECT_EQ(CpuinfoValue("no colon here\n", "no colon here"), "");
}

}  // namespace
}  // namespace tunefleet
