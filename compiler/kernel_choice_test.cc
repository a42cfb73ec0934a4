// Default configs (a layer with no record) are configs the builder would
// build for the compile target: on every target the compiler supports, every
// layer of every model of the zoo (ResNet-18/50, MobileNet-v2, VGG-16) gets
// a default whose register tile fits the target's vector registers, with
// vectors one register wide. A record whose register tile no longer fits
// the target is passed over for the next, with a warning.
#include "compiler/kernel_choice.h"

#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "toolchain/codegen/target.h"
#include "tuner_core/models/model_zoo.h"
#include "tuner_core/templates/register_fit.h"

namespace tunefleet {
namespace {

TEST(KernelChoiceTest, DefaultConfigsFitEveryTargetsRegisters) {
  for (const std::string target :
       {"llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72",
        "llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a53", "llvm -mcpu=haswell",
        "llvm -mcpu=znver3", "llvm -mcpu=znver4", "llvm -mcpu=skylake-avx512"}) {
    absl::StatusOr<TargetSpec> spec = ParseTarget(target);
    ASSERT_TRUE(spec.ok()) << spec.status();
    const int lanes = spec->vector_bits / 32;
    for (const std::string& model : ModelNames()) {
      absl::StatusOr<std::vector<ModelLayer>> layers = ModelLayers(model);
      ASSERT_TRUE(layers.ok()) << layers.status();
      int checked = 0;
      for (const ModelLayer& layer : *layers) {
        absl::StatusOr<KernelChoice> choice = ChooseKernel(layer, RecordSelection{}, target, lanes);
        ASSERT_TRUE(choice.ok()) << target << " " << layer.name << ": " << choice.status();
        EXPECT_FALSE(choice->tuned);
        const Task& task = *choice->task;
        EXPECT_TRUE(task.tmpl().Instantiate(task.workload(), choice->config).ok())
            << target << " " << layer.name;
        const absl::Status fits =
            CheckRegisterTileFits(task.tmpl(), task.workload(), choice->config, *spec);
        EXPECT_TRUE(fits.ok()) << target << " " << layer.name << " "
                               << choice->config.ToJson().dump() << ": " << fits;
        const nlohmann::json entity = choice->config.ToJson()["entity"];
        for (const nlohmann::json& knob : entity) {
          if (knob[0] == "vec") {
            EXPECT_EQ(knob[2], lanes) << target << " " << layer.name;
          }
        }
        ++checked;
      }
      EXPECT_GT(checked, 10) << model;
    }
  }
}

// ResNet-50's strided 1x1 layer (256 -> 512 channels, 56x56 -> 28x28)
// tiles its 784 gathered pixels as one row: a record from before, whose
// tile_ow of 28 cut the 28-wide rows into whole rows, now asks for a tile
// of 28 columns x 2 vectors, more than AVX2's 16 registers. The slower
// record that still builds is chosen, and a warning names the one passed
// over.
TEST(KernelChoiceTest, RecordsWhoseRegisterTileNoLongerFitsArePassedOver) {
  const std::string target = "llvm -mcpu=znver3";
  absl::StatusOr<std::vector<ModelLayer>> layers = ModelLayers("resnet-50");
  ASSERT_TRUE(layers.ok()) << layers.status();
  const ModelLayer* strided = nullptr;
  for (const ModelLayer& layer : *layers) {
    if (layer.workload == "conv2d_nchw" && layer.args.value("R", 0) == 1 &&
        layer.args.value("stride_h", 1) == 2 && layer.args.value("C", 0) == 256) {
      strided = &layer;
      break;
    }
  }
  ASSERT_NE(strided, nullptr);
  auto record_line = [&](int64_t tile_ow, double seconds) {
    std::unique_ptr<Task> task =
        Task::Make("conv2d_nchwc.x86", strided->workload, strided->args, target).value();
    const Config config = task->space()
                              .FromJson({{"entity",
                                          {{"tile_ic", "ot", 16},
                                           {"tile_oc", "ot", 16},
                                           {"tile_ow", "ot", tile_ow},
                                           {"vec", "ot", 8},
                                           {"reduce", "ot", "c_kh_kw_ic"}}}})
                              .value();
    Record record;
    record.target = target;
    record.task_name = task->name();
    record.workload_name = strided->workload;
    record.workload_args = strided->args;
    record.config = config.ToJson();
    record.result.costs = {seconds};
    return record.ToLine();
  };
  const std::string path = ::testing::TempDir() + "/outgrown_records.jsonl";
  {
    std::ofstream out(path);
    out << record_line(28, 1e-4) << "\n" << record_line(6, 2e-4) << "\n";
  }
  absl::StatusOr<RecordSelection> records = SelectRecords(path, *layers, target);
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->warnings.size(), 1u);
  EXPECT_THAT(records->warnings[0],
              ::testing::HasSubstr(":1: 1 record(s) ignored whose config no longer builds"));
  absl::StatusOr<KernelChoice> choice = ChooseKernel(*strided, *records, target, 8);
  ASSERT_TRUE(choice.ok()) << choice.status();
  EXPECT_TRUE(choice->tuned);
  EXPECT_EQ(choice->source, path + ":2");
}

}  // namespace
}  // namespace tunefleet
