#include "target/aarch64/arch.h"

#include <set>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace {

using ::testing::ElementsAre;

// A feature test over `features`, which must outlive it (a whole call).
auto Has(const std::set<std::string>& features) {
  return [&features](absl::string_view f) { return features.count(std::string(f)) > 0; };
}

TEST(Aarch64ArchTest, NeonRegistersGangUpToFour) {
  const Arch& arm = Aarch64Arch();
  const VectorShape neon = arm.Vectors(Has({"neon"}));
  EXPECT_EQ(neon.vector_bits, 128);
  EXPECT_EQ(neon.max_vector_bits, 512);
  EXPECT_EQ(neon.vector_registers, 32);
  EXPECT_EQ(arm.Family(neon, "cortex-a72"), "aarch64-neon");
  EXPECT_EQ(arm.VectorRegisterName(128), "q");
  EXPECT_FALSE(arm.FmaReadsMemoryOperand());
}

TEST(Aarch64ArchTest, AnRk3399BigCoreIsACortexA72WithNeon) {
  const Arch& arm = Aarch64Arch();
  const std::set<std::string> a72 = {"fp", "asimd", "evtstrm", "aes", "crc32", "cpuid"};
  EXPECT_THAT(arm.ReportedFeatures(Has(a72)), ElementsAre("neon", "asimd"));
  EXPECT_EQ(arm.Fp32Lanes(Has(a72)), 4);
  EXPECT_EQ(arm.Fp32Lanes(Has({"asimd", "sve"})), 64);
  EXPECT_EQ(arm.Fp32Lanes(Has({"avx2"})), 0);
  EXPECT_EQ(arm.LlvmCpuName("CPU implementer\t: 0x41\nCPU part\t: 0xd08\n", Has(a72)),
            "cortex-a72");
  EXPECT_EQ(arm.LlvmCpuName("CPU part\t: 0xfff\n", Has(a72)), "");
}

TEST(Aarch64ArchTest, DecodesHwcapBits) {
  // A Cortex-A72 (RK3399 big core): fp asimd evtstrm aes pmull sha1 sha2 crc32 cpuid.
  const uint64_t a72 = (1u << 0) | (1u << 1) | (1u << 2) | (1u << 3) | (1u << 4) | (1u << 5) |
                       (1u << 6) | (1u << 7) | (1u << 11);
  EXPECT_EQ(Aarch64HwcapNames(a72, 0), "fp asimd evtstrm aes pmull sha1 sha2 crc32 cpuid");
  EXPECT_EQ(Aarch64HwcapNames((1u << 20) | (1u << 22), (1u << 1) | (1u << 14)),
            "asimddp sve sve2 bf16");
  EXPECT_EQ(Aarch64HwcapNames(0, 0), "");
}

}  // namespace
}  // namespace tunefleet
