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

TEST(CpuinfoTest, CacheSizesReadAsSysfsWritesThem) {
  EXPECT_EQ(ParseCacheSize("8192K\n"), 8 << 20);
  EXPECT_EQ(ParseCacheSize("32M"), 32 << 20);
  EXPECT_EQ(ParseCacheSize("1G"), int64_t{1} << 30);
  EXPECT_EQ(ParseCacheSize("65536"), 65536);
  for (const char* bad : {"", "K", "-4K", "12Q", "0K", "99999999999999G", "8 MB"}) {
    EXPECT_EQ(ParseCacheSize(bad), 0) << bad;
  }
}

TEST(CpuinfoTest, TheHostsLastLevelCacheIsAtLeastItsL1) {
  // Where sysfs lists caches (every Linux this runs on), the highest level's
  // is no smaller than 16 KiB; elsewhere nothing can be read.
  const int64_t llc = HostLastLevelCacheBytes();
  if (llc == 0) GTEST_SKIP() << "no /sys/devices/system/cpu/cpu0/cache here";
  EXPECT_GE(llc, 16 << 10);
}

TEST(CpuinfoTest, TheKeyIsMatchedWhole) {
  EXPECT_EQ(CpuinfoValue("flagsfoo : x\n", "flags"), "");
  EXPECT_EQ(CpuinfoValue("model name : AMD EPYC\n", "model"), "");
  EXPECT_EQ(CpuinfoValue("no colon here\n", "no colon here"), "");
}

}  // namespace
}  // namespace tunefleet
