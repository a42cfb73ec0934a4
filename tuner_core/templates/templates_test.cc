#include "tuner_core/templates/task.h"

#include "gtest/gtest.h"
#include "tuner_core/ir/ir_printer.h"

namespace tunefleet {
namespace {

TEST(TemplatesTest, FindsTemplatesByNameAndDefaultForDense) {
  auto pack = FindTemplate("dense_pack.x86");
  ASSERT_TRUE(pack.ok());
  EXPECT_EQ((*pack)->workload_name(), "dense");
  auto def = DefaultTemplate("dense");
  ASSERT_TRUE(def.ok());
  EXPECT_EQ((*def)->name(), "dense_pack.x86");
  auto missing = FindTemplate("conv2d_magic");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("dense_pack.x86"), std::string::npos);
}

TEST(TemplatesTest, TiledSpaceIsTheProductOfTwoFactorSplits) {
  auto task = Task::Make("dense_tiled", "dense", {{"M", 32}, {"N", 32}, {"K", 8}}, "llvm");
  ASSERT_TRUE(task.ok()) << task.status();
  EXPECT_EQ((*task)->space().size(), 36);  // 6 factors of 32, twice
}

TEST(TemplatesTest, PackSpaceContainsTheVendorLevelConfig) {
  auto task = Task::Make("", "dense", {{"M", 1024}, {"N", 1024}, {"K", 1024}}, "llvm");
  ASSERT_TRUE(task.ok()) << task.status();
  // MR=6, NR=16 (2 x 8-lane vectors), KC=256: the classic AVX2 micro-kernel.
  auto config = (*task)->space().FromJson(
      {{"entity",
        {{"vec", "ot", 8}, {"nr_vecs", "ot", 2}, {"mr", "ot", 6}, {"kc", "ot", 256},
         {"mc_panels", "ot", 16}, {"nc_panels", "ot", 8}, {"unroll_k", "ot", 4}, {"pack_a", "ot", 1},
         {"order", "ot", "nm"}, {"fuse", "ot", "mn"}}}});
  ASSERT_TRUE(config.ok()) << config.status();
  auto func = (*task)->tmpl().Instantiate((*task)->workload(), *config);
  ASSERT_TRUE(func.ok()) << func.status();
  const std::string text = ir::ToString(*func);
  EXPECT_NE(text.find("parallel for (blk"), std::string::npos) << text;
  EXPECT_NE(text.find("vectorized for"), std::string::npos);
  EXPECT_NE(text.find("allocate acc[float32 * 96] in stack"), std::string::npos);
}

TEST(TemplatesTest, WrongWorkloadForTemplateIsInvalidArgument) {
  auto task = Task::Make("dense_pack.x86", "conv2d", {}, "llvm");
  EXPECT_FALSE(task.ok());
  auto bad_args = Task::Make("", "dense", {{"M", 0}, {"N", 4}, {"K", 4}}, "llvm");
  EXPECT_EQ(bad_args.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad_args.status().message().find("\"M\""), std::string::npos);
}

}  // namespace
}  // namespace tunefleet
