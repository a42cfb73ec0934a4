// The weights packed at compile time equal what each blocked template's own
// prepare stage writes into kernel_vec (the stage run in the IR
// interpreter), for several configs of a conv2d and a depthwise workload.
#include "compiler/kernel_packing.h"

#include <cmath>
#include <random>

#include "gtest/gtest.h"
#include "tuner_core/ir/gpu_emulator.h"
#include "tuner_core/templates/task.h"

namespace tunefleet {
namespace {

nlohmann::json ConvArgsJson(bool depthwise, const std::string& layout) {
  nlohmann::json args = {{"N", 1},       {"C", 24},       {"H", 7},          {"W", 9},
                         {"R", 3},       {"S", 3},        {"stride_h", 1},   {"stride_w", 2},
                         {"pad_top", 1}, {"pad_left", 1}, {"pad_bottom", 1}, {"pad_right", 1},
                         {"dil_h", 1},   {"dil_w", 1},    {"layout", layout}};
  if (!depthwise) args["K"] = 16;
  return args;
}

// Staged buffer `staged_index` as the template's prepare stage writes it
// from `weights` (its second argument): kernel_vec for the blocked convolutions.
std::vector<float> PreparedKernelVec(const KernelChoice& choice, const std::vector<float>& weights,
                                     size_t staged_index = 1) {
  absl::StatusOr<ir::LoweredFunc> func =
      choice.task->tmpl().Instantiate(choice.task->workload(), choice.config);
  EXPECT_TRUE(func.ok()) << func.status();
  ir::LoweredFunc prepare = *func;
  prepare.body = func->prepare;
  std::vector<std::vector<float>> storage;
  for (const ir::BufferArg& arg : func->args) storage.emplace_back(arg.NumElements(), 0.0f);
  storage[1] = weights;
  for (const ir::StagedBuffer& staged : func->staged) {
    prepare.args.push_back({staged.name, {staged.num_elements}, false});
    storage.emplace_back(staged.num_elements, 0.0f);
  }
  std::vector<float*> tensors;
  for (std::vector<float>& s : storage) tensors.push_back(s.data());
  absl::Status status = ir::EmulateGpuKernel(prepare, tensors);
  EXPECT_TRUE(status.ok()) << status;
  return storage[func->args.size() + staged_index];
}

void ExpectPackingMatchesTemplate(const std::string& workload, const nlohmann::json& args,
                                  const std::string& template_name) {
  absl::StatusOr<std::unique_ptr<Task>> task =
      Task::Make("", workload, args, "llvm -mcpu=skylake-avx512");
  ASSERT_TRUE(task.ok()) << task.status();
  EXPECT_EQ((*task)->tmpl().name(), template_name);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1, 1);
  const int64_t size = (*task)->space().size();
  int checked = 0;
  for (int64_t i = 0; i < size && checked < 6; i += std::max<int64_t>(1, size / 11)) {
    KernelChoice choice;
    choice.task = Task::Make("", workload, args, "llvm -mcpu=skylake-avx512").value();
    choice.config = (*task)->space().Get(i).value();
    absl::StatusOr<std::optional<BlockedConvKernel>> blocked = BlockedConvOf(choice);
    if (!blocked.ok()) continue;  // a config the template refuses (tile too large)
    ASSERT_TRUE(blocked->has_value()) << choice.config.ToString();
    std::vector<float> weights((*blocked)->kernel_elements);
    for (float& w : weights) w = dist(rng);
    EXPECT_EQ(PackBlockedWeights(weights, **blocked), PreparedKernelVec(choice, weights))
        << choice.config.ToString();
    ++checked;
  }
  EXPECT_GE(checked, 3);
}

TEST(KernelPackingTest, Conv2dWeightsPackedAsThePrepareStagePacksThem) {
  ExpectPackingMatchesTemplate("conv2d_nchw", ConvArgsJson(false, "NCHWc"), "conv2d_nchwc.x86");
}

TEST(KernelPackingTest, DepthwiseWeightsPackedAsThePrepareStagePacksThem) {
  ExpectPackingMatchesTemplate("depthwise_conv2d_nchw", ConvArgsJson(true, "NCHWc"),
                               "depthwise_conv2d_nchwc.x86");
}

// Blocks of whole groups (3 input and 2 output channels per group): each
// lane's weights over its own group's channels, and the block its input is
// read in is its groups' input channels.
TEST(KernelPackingTest, GroupConvWeightsPackedAsThePrepareStagePacksThem) {
  nlohmann::json args = ConvArgsJson(false, "NCHWc");
  args["group"] = 8;
  ExpectPackingMatchesTemplate("conv2d_nchw", args, "group_conv2d_nchwc.x86");
  KernelChoice choice;
  choice.task = Task::Make("", "conv2d_nchw", args, "llvm -mcpu=skylake-avx512").value();
  choice.config = choice.task->space()
                      .FromJson({{"entity",
                                  {{"tile_oc", "ot", 8},
                                   {"tile_ow", "ot", 3},
                                   {"vec", "ot", 8},
                                   {"reduce", "ot", "kh_kw_ic_inline_pad"}}}})
                      .value();
  absl::StatusOr<std::optional<BlockedConvKernel>> blocked = BlockedConvOf(choice);
  ASSERT_TRUE(blocked.ok() && blocked->has_value()) << blocked.status();
  EXPECT_EQ((*blocked)->lane_groups, 4);
  EXPECT_EQ((*blocked)->reduce_block, 12);
  EXPECT_EQ((*blocked)->in_block, 12);
  EXPECT_EQ((*blocked)->out_block, 8);
  EXPECT_TRUE(ReadsBlockAtNoCost(**blocked, 24));  // a multiple, in place
  EXPECT_FALSE(ReadsBlockAtNoCost(**blocked, 6));  // a divisor, copied
}

// Winograd's transformed weights U = G g G^T ([(m+2)^2][K/ob][C][ob]) as
// the kernel's prepare stage computes them, for both tiles and two blocks;
// and the plan reads no taps from them (kernel_shape stays R x S only for
// direct kernels: BlockedConvKernel::winograd_tile).
TEST(KernelPackingTest, WinogradWeightsTransformedAsThePrepareStageTransformsThem) {
  nlohmann::json args = ConvArgsJson(false, "NCHWc");
  args["stride_w"] = 1;
  const std::string target = "llvm -mcpu=skylake-avx512";
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> weights(16 * 24 * 9);
  for (float& w : weights) w = dist(rng);
  int checked = 0;
  for (const char* reduce : {"winograd_f2", "winograd_f4"}) {
    for (int64_t oc : {16, 8}) {
      KernelChoice choice;
      choice.task = Task::Make("", "conv2d_nchw", args, target).value();
      absl::StatusOr<Config> config = choice.task->space().FromJson({{"entity",
                                                                      {{"tile_ic", "ot", 8},
                                                                       {"tile_oc", "ot", oc},
                                                                       {"tile_ow", "ot", 4},
                                                                       {"vec", "ot", 8},
                                                                       {"reduce", "ot", reduce}}}});
      ASSERT_TRUE(config.ok()) << config.status();
      choice.config = *config;
      absl::StatusOr<std::optional<BlockedConvKernel>> blocked = BlockedConvOf(choice);
      ASSERT_TRUE(blocked.ok()) << blocked.status();
      ASSERT_TRUE(blocked->has_value());
      const int64_t m = std::string(reduce) == "winograd_f2" ? 2 : 4;
      EXPECT_EQ((*blocked)->winograd_tile, m);
      EXPECT_EQ((*blocked)->kernel_elements, (m + 2) * (m + 2) * 16 * 24);
      const std::vector<float> packed = PackBlockedWeights(weights, **blocked);
      const std::vector<float> prepared = PreparedKernelVec(choice, weights);
      ASSERT_EQ(packed.size(), prepared.size());
      for (size_t i = 0; i < packed.size(); ++i) {
        ASSERT_NEAR(packed[i], prepared[i], 1e-6 * (1 + std::fabs(prepared[i])))
            << reduce << " element " << i;
      }
      ++checked;
    }
  }
  EXPECT_EQ(checked, 4);
}

TEST(KernelPackingTest, DenseWeightsPackedOnceAsThePrepareStagePacksThem) {
  // N not a multiple of any panel width: the last panel's zero columns count too.
  const nlohmann::json args = {{"M", 3}, {"N", 37}, {"K", 20}, {"layout", "NK"}};
  const std::string target = "llvm -mcpu=skylake-avx512";
  std::unique_ptr<Task> task = Task::Make("dense_gemm.x86", "dense", args, target).value();
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> nk(37 * 20);
  for (float& w : nk) w = dist(rng);
  int checked = 0, unpacked = 0;
  for (int64_t i = 0; i < task->space().size() && checked < 4; i += 997) {
    KernelChoice choice;
    choice.task = Task::Make("dense_gemm.x86", "dense", args, target).value();
    choice.config = task->space().Get(i).value();
    absl::StatusOr<std::optional<PackedDenseKernel>> dense = PackedDenseOf(choice);
    if (!dense.ok()) continue;  // a config the template refuses
    if (!dense->has_value()) {
      ++unpacked;  // pack_b "call" or the dot kernel: nothing to pack
      continue;
    }
    EXPECT_EQ(PackDenseWeights(nk, **dense), PreparedKernelVec(choice, nk, /*staged_index=*/0))
        << choice.config.ToString();
    ++checked;
  }
  EXPECT_EQ(checked, 4);
  EXPECT_GT(unpacked, 0);
}

TEST(KernelPackingTest, NchwLayoutKernelsAreNotBlocked) {
  KernelChoice choice;
  choice.task =
      Task::Make("", "conv2d_nchw", ConvArgsJson(false, "NCHW"), "llvm -mcpu=skylake-avx512")
          .value();
  choice.config = choice.task->space().Get(0).value();
  absl::StatusOr<std::optional<BlockedConvKernel>> blocked = BlockedConvOf(choice);
  ASSERT_TRUE(blocked.ok()) << blocked.status();
  EXPECT_FALSE(blocked->has_value());
}

}  // namespace
}  // namespace tunefleet
