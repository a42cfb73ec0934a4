#include "tests/dense_fault_test_template.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tuner_core/ir/ir_printer.h"
#include "tuner_core/templates/task.h"

namespace tunefleet {
namespace {

TEST(DenseFaultTestTemplateTest, RegisteredByLinkingButNeverADefault) {
  auto tmpl = FindTemplate("dense_fault.test");
  ASSERT_TRUE(tmpl.ok()) << tmpl.status();
  EXPECT_EQ((*tmpl)->workload_name(), "dense");
  const std::vector<const Template*> all = AllTemplates();
  EXPECT_EQ(all.back(), *tmpl);  // registered ones come after the built-in ones
  EXPECT_EQ(KernelEntryName(**tmpl), "tf_dense_fault_test");
  auto def = DefaultTemplate("dense");
  ASSERT_TRUE(def.ok());
  EXPECT_EQ((*def)->name(), "dense_gemm.x86");
}

TEST(DenseFaultTestTemplateTest, SpaceHasThreeFaultsAndAllInstantiate) {
  for (const char* layout : {"NK", "KN"}) {
    auto task = Task::Make("dense_fault.test", "dense",
                           {{"M", 7}, {"N", 5}, {"K", 3}, {"layout", layout}}, "llvm");
    ASSERT_TRUE(task.ok()) << task.status();
    const ConfigSpace& space = (*task)->space();
    ASSERT_EQ(space.size(), 3);
    ASSERT_EQ(space.num_knobs(), 1);
    EXPECT_EQ(space.knob_name(0), "fault");
    EXPECT_EQ(space.knob_kind(0), KnobKind::kOther);
    const char* expected[] = {"none", "segv", "hang"};
    for (int64_t i = 0; i < 3; ++i) {
      auto config = space.Get(i);
      ASSERT_TRUE(config.ok()) << config.status();
      auto fault = config->GetString("fault");
      ASSERT_TRUE(fault.ok()) << fault.status();
      EXPECT_EQ(*fault, expected[i]);
      auto func = (*task)->tmpl().Instantiate((*task)->workload(), *config);
      ASSERT_TRUE(func.ok()) << func.status();
      EXPECT_EQ(func->name, "tf_dense_fault_test");
      const std::string text = ir::ToString(*func);
      const bool has_oob = text.find("C[1099511627776]") != std::string::npos;
      const bool has_rep = text.find("for (rep, 0, 1099511627776)") != std::string::npos;
      EXPECT_EQ(has_oob, *fault == "segv") << text;
      EXPECT_EQ(has_rep, *fault == "hang") << text;
    }
    // Also from JSON, as a record would name it.
    auto hang = space.FromJson({{"entity", {{"fault", "ot", "hang"}}}});
    ASSERT_TRUE(hang.ok()) << hang.status();
    EXPECT_EQ(hang->index(), 2);
  }
}

}  // namespace
}  // namespace tunefleet
