#include "target/x86_64/arch.h"

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

TEST(X86_64ArchTest, VectorRegistersFollowTheWidestIsa) {
  const Arch& x86 = X86_64Arch();
  const std::set<std::string> avx512 = {"avx", "avx2", "fma", "avx512f"};
  const std::set<std::string> avx2 = {"avx", "avx2", "fma"};
  const std::set<std::string> sse = {"sse4.2"};
  const VectorShape zmm = x86.Vectors(Has(avx512));
  EXPECT_EQ(zmm.vector_bits, 512);
  EXPECT_EQ(zmm.max_vector_bits, 512);
  EXPECT_EQ(zmm.vector_registers, 32);
  const VectorShape ymm = x86.Vectors(Has(avx2));
  EXPECT_EQ(ymm.vector_bits, 256);
  EXPECT_EQ(ymm.max_vector_bits, 256);  // 16 registers: no ganging
  EXPECT_EQ(ymm.vector_registers, 16);
  EXPECT_EQ(x86.Vectors(Has(sse)).vector_bits, 128);
  EXPECT_EQ(x86.Family(zmm, "znver4"), "x86_64-avx512");
  EXPECT_EQ(x86.Family(ymm, "znver3"), "x86_64-avx2");
  EXPECT_EQ(x86.Family(x86.Vectors(Has(sse)), "x86-64"), "x86_64-sse");
  EXPECT_EQ(x86.VectorRegisterName(512), "zmm");
  EXPECT_EQ(x86.VectorRegisterName(256), "ymm");
  EXPECT_TRUE(x86.FmaReadsMemoryOperand());
}

TEST(X86_64ArchTest, ReportsFeaturesLanesAndCpuNames) {
  const Arch& x86 = X86_64Arch();
  const std::set<std::string> spr = {"fpu",     "sse4_2",      "avx",      "avx2", "fma",
                                     "avx512f", "avx512_vnni", "amx_tile", "pni"};
  EXPECT_THAT(x86.ReportedFeatures(Has(spr)),
              ElementsAre("sse4_2", "avx", "avx2", "fma", "avx512f", "avx512_vnni", "amx_tile"));
  EXPECT_EQ(x86.Fp32Lanes(Has(spr)), 16);
  EXPECT_EQ(x86.Fp32Lanes(Has({"avx2"})), 8);
  EXPECT_EQ(x86.Fp32Lanes(Has({"neon"})), 0);
  EXPECT_EQ(x86.LlvmCpuName("model name : Intel(R) Xeon(R) Platinum 8480+\n", Has(spr)),
            "sapphirerapids");
  EXPECT_EQ(x86.LlvmCpuName("model name : AMD EPYC 9654\n", Has(spr)), "znver4");
  EXPECT_EQ(x86.LlvmCpuName("model name : AMD EPYC 7763\n", Has({"avx2", "vaes"})), "znver3");
  EXPECT_EQ(x86.LlvmCpuName("model name : QEMU\n", Has({"sse2"})), "");
}

}  // namespace
}  // namespace tunefleet
