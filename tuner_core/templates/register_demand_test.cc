// Each CPU template's RegisterDemand: known configs give the demand their
// micro-kernel code implies, and across each space the accumulators agree
// with the register tile the instantiated kernel allocates (so the count
// cannot drift from the code).
#include <cstdint>
#include <memory>
#include <regex>
#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tuner_core/ir/ir_printer.h"
#include "tuner_core/templates/task.h"

namespace tunefleet {
namespace {

const nlohmann::json kDense = {{"M", 96}, {"N", 192}, {"K", 256}, {"layout", "NK"}};
const nlohmann::json kConv = {{"N", 1}, {"C", 64}, {"H", 56},      {"W", 56},          {"K", 64},
                              {"R", 3}, {"S", 3},  {"padding", 1}, {"layout", "NCHWc"}};
const nlohmann::json kDepthwise = {{"N", 1}, {"C", 64}, {"H", 56},      {"W", 56},
                                   {"R", 3}, {"S", 3},  {"padding", 1}, {"layout", "NCHW"}};
const nlohmann::json kBatchMatmul = {{"B", 4}, {"M", 64}, {"N", 64}, {"K", 256}};

std::unique_ptr<Task> MakeTask(const std::string& tmpl, const std::string& workload,
                               const nlohmann::json& args) {
  auto task = Task::Make(tmpl, workload, args, "llvm");
  EXPECT_TRUE(task.ok()) << task.status();
  return task.ok() ? *std::move(task) : nullptr;
}

nlohmann::json GemmEntity(int vec, int nr_vecs, int mr, const std::string& kernel) {
  nlohmann::json entity = {{"vec", "ot", vec},     {"nr_vecs", "ot", nr_vecs},
                           {"mr", "ot", mr},       {"kc", "ot", 256},
                           {"mc_panels", "ot", 4}, {"nc_panels", "ot", 4},
                           {"unroll_k", "ot", 1},  {"pack_a", "ot", 1},
                           {"order", "ot", "nm"},  {"fuse", "ot", "mn"}};
  if (!kernel.empty()) {
    entity.push_back({"pack_b", "ot", "once"});
    entity.push_back({"kernel", "ot", kernel});
  }
  return entity;
}

RegisterDemand DemandOf(const Task& task, const nlohmann::json& entity) {
  auto config = task.space().FromJson({{"entity", entity}});
  EXPECT_TRUE(config.ok()) << config.status();
  if (!config.ok()) return {};
  auto demand = task.tmpl().RegisterDemandOf(task.workload(), *config);
  EXPECT_TRUE(demand.ok()) << demand.status();
  return demand.ok() ? *demand : RegisterDemand{};
}

void ExpectDemand(const RegisterDemand& d, int64_t lanes, int64_t accumulators,
                  int64_t vector_operands, int64_t broadcast_operands) {
  EXPECT_EQ(d.lanes, lanes);
  EXPECT_EQ(d.accumulators, accumulators);
  EXPECT_EQ(d.vector_operands, vector_operands);
  EXPECT_EQ(d.broadcast_operands, broadcast_operands);
}

TEST(RegisterDemandTest, GemmPanelTileIsRowsTimesVectorsPlusTheBRowAndOneBroadcast) {
  auto gemm = MakeTask("dense_gemm.x86", "dense", kDense);
  ASSERT_NE(gemm, nullptr);
  // AVX-512's 14 x 32: 28 accumulators, 2 B vectors, A broadcast.
  ExpectDemand(DemandOf(*gemm, GemmEntity(16, 2, 14, "panel")), 16, 28, 2, 1);
  // The dot kernel: 4 A rows and 4 B rows of k vectors, no broadcast.
  ExpectDemand(DemandOf(*gemm, GemmEntity(4, 4, 4, "dot")), 4, 16, 8, 0);
  auto pack = MakeTask("dense_pack.x86", "dense", kDense);
  ASSERT_NE(pack, nullptr);
  ExpectDemand(DemandOf(*pack, GemmEntity(4, 3, 8, "")), 4, 24, 3, 1);  // ARM's 8 x 12
  auto bmm = MakeTask("batch_matmul_pack.x86", "batch_matmul", kBatchMatmul);
  ASSERT_NE(bmm, nullptr);
  ExpectDemand(DemandOf(*bmm, GemmEntity(8, 2, 6, "")), 8, 12, 2, 1);  // AVX2's 6 x 16
}

TEST(RegisterDemandTest, ConvTileIsPixelsTimesChannelVectorsPlusWeightsAndOneBroadcast) {
  auto conv = MakeTask("conv2d_nchwc.x86", "conv2d_nchw", kConv);
  ASSERT_NE(conv, nullptr);
  auto entity = [](int tile_oc, int tile_ow, int vec) {
    return nlohmann::json{{"tile_ic", "ot", 16},
                          {"tile_oc", "ot", tile_oc},
                          {"tile_ow", "ot", tile_ow},
                          {"vec", "ot", vec},
                          {"reduce", "ot", "c_kh_kw_ic"}};
  };
  ExpectDemand(DemandOf(*conv, entity(16, 7, 4)), 4, 28, 4, 1);
  ExpectDemand(DemandOf(*conv, entity(16, 6, 4)), 4, 24, 4, 1);
  // Vectors are min(vec, tile_oc) lanes wide: 2-lane vectors for 2 channels;
  // a block of 32 with vec 16 two vectors (builder_test covers blocks the
  // vector does not divide).
  ExpectDemand(DemandOf(*conv, entity(2, 8, 16)), 2, 8, 1, 1);
  ExpectDemand(DemandOf(*conv, entity(32, 4, 16)), 16, 8, 2, 1);
}

TEST(RegisterDemandTest, DepthwiseTileHasTheWeightsAndOneInputVectorNoBroadcast) {
  auto dw = MakeTask("depthwise_conv2d_nchwc.x86", "depthwise_conv2d_nchw", kDepthwise);
  ASSERT_NE(dw, nullptr);
  auto entity = [](int tile_c, int tile_ow, int vec) {
    return nlohmann::json{{"tile_c", "ot", tile_c},
                          {"tile_ow", "ot", tile_ow},
                          {"vec", "ot", vec},
                          {"unroll_kw", "ot", 0}};
  };
  ExpectDemand(DemandOf(*dw, entity(16, 7, 4)), 4, 28, 5, 0);
  ExpectDemand(DemandOf(*dw, entity(64, 7, 16)), 16, 28, 5, 0);
}

TEST(RegisterDemandTest, GpuTemplatesDeclareNoRegisterTile) {
  auto gpu = Task::Make("dense_gpu.cuda", "dense", kDense, "cuda -mcpu=sm_90");
  ASSERT_TRUE(gpu.ok()) << gpu.status();
  EXPECT_FALSE((*gpu)->tmpl().has_register_demand());
  auto config = (*gpu)->space().Get(0);
  ASSERT_TRUE(config.ok());
  EXPECT_EQ((*gpu)->tmpl().RegisterDemandOf((*gpu)->workload(), *config).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

// The accumulators times their lanes are the register tile the kernel
// allocates ("allocate acc[float32 * N]"), for configs spread over each
// CPU template's space.
TEST(RegisterDemandTest, AccumulatorsMatchTheInstantiatedRegisterTile) {
  struct Space {
    std::string tmpl, workload;
    nlohmann::json args;
  };
  const Space spaces[] = {{"dense_pack.x86", "dense", kDense},
                          {"dense_gemm.x86", "dense", kDense},
                          {"batch_matmul_pack.x86", "batch_matmul", kBatchMatmul},
                          {"conv2d_nchwc.x86", "conv2d_nchw", kConv},
                          {"depthwise_conv2d_nchwc.x86", "depthwise_conv2d_nchw", kDepthwise}};
  const std::regex acc_allocation(R"(allocate acc\[float32 \* (\d+)\])");
  for (const Space& s : spaces) {
    auto task = MakeTask(s.tmpl, s.workload, s.args);
    ASSERT_NE(task, nullptr);
    ASSERT_TRUE(task->tmpl().has_register_demand()) << s.tmpl;
    const int64_t size = task->space().size();
    int checked = 0;
    for (int64_t index = 0; index < size; index += size / 97 + 1) {
      auto config = task->space().Get(index);
      ASSERT_TRUE(config.ok()) << config.status();
      auto func = task->tmpl().Instantiate(task->workload(), *config);
      if (!func.ok()) continue;  // a tile the template refuses outright
      auto demand = task->tmpl().RegisterDemandOf(task->workload(), *config);
      ASSERT_TRUE(demand.ok()) << demand.status();
      const std::string text = ir::ToString(*func);
      std::smatch match;
      ASSERT_TRUE(std::regex_search(text, match, acc_allocation)) << s.tmpl;
      EXPECT_EQ(std::stoll(match[1]), demand->accumulators * demand->lanes)
          << s.tmpl << " " << config->ToString();
      ++checked;
    }
    EXPECT_GT(checked, 20) << s.tmpl;
  }
}

}  // namespace
}  // namespace tunefleet
