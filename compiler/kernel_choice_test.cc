// Default configs (a layer with no record) are configs the builder would
// build for the compile target: on every target the compiler supports, every
// layer of every model of the zoo (ResNet-18/50, MobileNet-v2, VGG-16) gets
// a default whose register tile fits the target's vector registers, with
// vectors one register wide.
#include "compiler/kernel_choice.h"

#include <string>

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

}  // namespace
}  // namespace tunefleet
