#include "tuner_core/templates/register_fit.h"

#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "toolchain/builder.h"
#include "tuner_core/templates/template.h"
#include "tuner_core/workloads/workload.h"

namespace tunefleet {
namespace {

constexpr char kZnver4[] = "llvm -mtriple=x86_64-linux-gnu -mcpu=znver4";
constexpr char kSkylakeAvx512[] = "llvm -mtriple=x86_64-linux-gnu -mcpu=skylake-avx512";
constexpr char kHaswell[] = "llvm -mtriple=x86_64-linux-gnu -mcpu=haswell";
constexpr char kCortexA72[] = "llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72";

TargetSpec Target(const std::string& s) {
  absl::StatusOr<TargetSpec> target = ParseTarget(s);
  EXPECT_TRUE(target.ok()) << target.status();
  return target.ok() ? *target : TargetSpec{};
}

// One template, workload and config, as a build takes them.
struct Candidate {
  const Template* tmpl = nullptr;
  std::unique_ptr<Workload> workload;
  Config config;
};

Candidate Make(const std::string& template_name, const nlohmann::json& args,
               const nlohmann::json& entity) {
  Candidate c;
  absl::StatusOr<const Template*> tmpl = FindTemplate(template_name);
  EXPECT_TRUE(tmpl.ok()) << tmpl.status();
  if (!tmpl.ok()) return c;
  c.tmpl = *tmpl;
  absl::StatusOr<std::unique_ptr<Workload>> workload = MakeWorkload(c.tmpl->workload_name(), args);
  EXPECT_TRUE(workload.ok()) << workload.status();
  if (!workload.ok()) return c;
  c.workload = *std::move(workload);
  absl::StatusOr<ConfigSpace> space = c.tmpl->DefineSpace(*c.workload);
  EXPECT_TRUE(space.ok()) << space.status();
  if (!space.ok()) return c;
  absl::StatusOr<Config> config = space->FromJson({{"entity", entity}});
  EXPECT_TRUE(config.ok()) << config.status();
  if (config.ok()) c.config = *config;
  return c;
}

// dense_gemm.x86's AVX-512 micro-kernel: 14 rows x 2 vectors of 16 lanes.
Candidate Dense14x32() {
  return Make("dense_gemm.x86", {{"M", 96}, {"N", 192}, {"K", 256}, {"layout", "NK"}},
              {{"vec", "ot", 16},
               {"nr_vecs", "ot", 2},
               {"mr", "ot", 14},
               {"kc", "ot", 256},
               {"mc_panels", "ot", 4},
               {"nc_panels", "ot", 4},
               {"unroll_k", "ot", 1},
               {"pack_a", "ot", 1},
               {"order", "ot", "nm"},
               {"fuse", "ot", "mn"},
               {"pack_b", "ot", "once"},
               {"kernel", "ot", "panel"}});
}

// conv2d_nchwc.x86 with a row of `tile_ow` pixels x 16 channels, vectors of
// `vec` lanes.
Candidate ConvOwX16(int tile_ow, int vec = 4) {
  return Make("conv2d_nchwc.x86",
              {{"N", 1},
               {"C", 64},
               {"H", 28},
               {"W", 28},
               {"K", 64},
               {"R", 3},
               {"S", 3},
               {"padding", 1},
               {"layout", "NCHWc"}},
              {{"tile_ic", "ot", 16},
               {"tile_oc", "ot", 16},
               {"tile_ow", "ot", tile_ow},
               {"vec", "ot", vec},
               {"reduce", "ot", "c_kh_kw_ic"}});
}

TEST(RegisterFitTest, CountsVectorsAsTheTargetsRegisters) {
  const RegisterDemand panel{/*lanes=*/16, /*accumulators=*/28, /*vector_operands=*/2,
                             /*broadcast_operands=*/1};
  // AVX-512: a 16-lane vector is one zmm; the B row's vectors and the
  // broadcast stay in registers.
  RegisterCount avx512 = CountRegisters(panel, Target(kZnver4));
  EXPECT_EQ(avx512.per_vector, 1);
  EXPECT_EQ(avx512.operands, 3);
  EXPECT_EQ(avx512.needed(), 31);
  EXPECT_EQ(avx512.available, 32);
  EXPECT_TRUE(avx512.fits());
  // NEON: four q registers per vector, every operand loaded, the broadcast
  // one register.
  RegisterCount neon = CountRegisters(panel, Target(kCortexA72));
  EXPECT_EQ(neon.per_vector, 4);
  EXPECT_EQ(neon.accumulators, 112);
  EXPECT_EQ(neon.operands, 9);
  EXPECT_FALSE(neon.fits());
  // No broadcast (depthwise): on x86 one vector operand of each FMA (the
  // input) comes from memory, the two weight vectors stay.
  const RegisterDemand depthwise{8, 14, 3, 0};
  RegisterCount avx2 = CountRegisters(depthwise, Target(kHaswell));
  EXPECT_EQ(avx2.operands, 2);
  EXPECT_EQ(avx2.needed(), 16);
  EXPECT_EQ(avx2.available, 16);
  EXPECT_TRUE(avx2.fits());
  // A conv row of 7 pixels x 2 weight vectors: 14 + 2 + 1 > 16 ymm.
  const RegisterDemand conv{8, 14, 2, 1};
  EXPECT_EQ(CountRegisters(conv, Target(kHaswell)).needed(), 17);
  EXPECT_FALSE(CountRegisters(conv, Target(kHaswell)).fits());
}

TEST(RegisterFitTest, Avx2RefusesTheAvx512DenseTileBeforeCodegen) {
  Candidate c = Dense14x32();
  ASSERT_NE(c.workload, nullptr);
  EXPECT_TRUE(CheckRegisterTileFits(*c.tmpl, *c.workload, c.config, Target(kZnver4)).ok());
  EXPECT_TRUE(CheckRegisterTileFits(*c.tmpl, *c.workload, c.config, Target(kSkylakeAvx512)).ok());
  const BuildResult r = BuildCandidate(*c.tmpl, *c.workload, c.config, Target(kHaswell));
  EXPECT_EQ(r.error_no, MeasureErrorNo::kInstantiationError);
  EXPECT_EQ(r.error_msg,
            "template dense_gemm.x86: vectors of 16 lanes (512 bits) are wider than target "
            "\"llvm -mtriple=x86_64-linux-gnu -mcpu=haswell\" (haswell) generates (at most 256 "
            "bits)");
  EXPECT_EQ(r.timings.codegen_seconds, 0);  // no LLVM work for it
}

// LLVM keeps a conv tile's weight vectors in registers: on AVX2 a row of 7
// pixels x 16 channels (14 accumulators, 2 weight vectors, the broadcast)
// does not fit 16 ymm registers, 5 pixels do.
TEST(RegisterFitTest, Avx2CountsTheReusedWeightVectors) {
  Candidate seven = ConvOwX16(7, /*vec=*/8);
  ASSERT_NE(seven.workload, nullptr);
  const BuildResult refused =
      BuildCandidate(*seven.tmpl, *seven.workload, seven.config, Target(kHaswell));
  EXPECT_EQ(refused.error_no, MeasureErrorNo::kInstantiationError);
  EXPECT_EQ(refused.error_msg,
            "template conv2d_nchwc.x86: register tile needs 17 vector registers (14 accumulators "
            "+ 3 operands; vectors of 8 lanes = 1 ymm register each); target \"" +
                std::string(kHaswell) + "\" (haswell) has 16");
  Candidate five = ConvOwX16(5, /*vec=*/8);
  ASSERT_NE(five.workload, nullptr);
  EXPECT_TRUE(
      CheckRegisterTileFits(*five.tmpl, *five.workload, five.config, Target(kHaswell)).ok());
}

TEST(RegisterFitTest, CortexA72RefusesSevenPixelsBySixteenChannelsAndBuildsSix) {
  const TargetSpec a72 = Target(kCortexA72);
  Candidate seven = ConvOwX16(7);
  ASSERT_NE(seven.workload, nullptr);
  const BuildResult refused = BuildCandidate(*seven.tmpl, *seven.workload, seven.config, a72);
  EXPECT_EQ(refused.error_no, MeasureErrorNo::kInstantiationError);
  EXPECT_EQ(refused.error_msg,
            "template conv2d_nchwc.x86: register tile needs 33 vector registers (28 accumulators "
            "+ 5 operands; vectors of 4 lanes = 1 q register each); target \"" +
                std::string(kCortexA72) + "\" (cortex-a72) has 32");
  // x86 refuses it too (AVX-512: 28 + 4 + 1 > 32), but AVX-512 keeps the
  // row of 16 channels as one zmm vector: 7 + 1 + 1.
  EXPECT_FALSE(
      CheckRegisterTileFits(*seven.tmpl, *seven.workload, seven.config, Target(kZnver4)).ok());
  Candidate zmm = ConvOwX16(7, /*vec=*/16);
  ASSERT_NE(zmm.workload, nullptr);
  EXPECT_TRUE(CheckRegisterTileFits(*zmm.tmpl, *zmm.workload, zmm.config, Target(kZnver4)).ok());
  Candidate six = ConvOwX16(6);
  ASSERT_NE(six.workload, nullptr);
  const BuildResult built = BuildCandidate(*six.tmpl, *six.workload, six.config, a72);
  EXPECT_TRUE(built.ok()) << MeasureErrorName(built.error_no) << ": " << built.error_msg;
}

TEST(RegisterFitTest, TemplatesWithoutATileAndGpuTargetsAreNotCounted) {
  absl::StatusOr<const Template*> tiled = FindTemplate("dense_tiled");
  ASSERT_TRUE(tiled.ok());
  EXPECT_FALSE((*tiled)->has_register_demand());
  Candidate c = Dense14x32();
  ASSERT_NE(c.workload, nullptr);
  TargetSpec uncounted = Target(kHaswell);
  uncounted.vector_registers = 0;
  EXPECT_TRUE(CheckRegisterTileFits(*c.tmpl, *c.workload, c.config, uncounted).ok());
}

}  // namespace
}  // namespace tunefleet
