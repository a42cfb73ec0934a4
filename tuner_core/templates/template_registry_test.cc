// RegisterTemplate: a registered template is found and listed after the
// built-in ones but is never a default; a binary that registers nothing (any
// production binary) has no test-only template.
#include <string>

#include "gtest/gtest.h"
#include "tuner_core/templates/template.h"

namespace tunefleet {
namespace {

bool Listed(const std::string& name) {
  for (const Template* t : AllTemplates()) {
    if (t->name() == name) return true;
  }
  return false;
}

// A stand-in that only has a name; never instantiated.
const Template& NamedOnlyTemplate() {
  static const Template kTemplate(
      Template::Names{"dense_registered.test", "dense", "dense_registered.test", false},
      [](const Workload&) -> absl::StatusOr<ConfigSpace> {
        return absl::UnimplementedError("named only");
      },
      [](const Workload&, const Config&) -> absl::StatusOr<ir::LoweredFunc> {
        return absl::UnimplementedError("named only");
      });
  return kTemplate;
}

TEST(TemplateRegistryTest, NoTestTemplateUnlessABinaryRegistersOne) {
  EXPECT_EQ(FindTemplate("dense_fault.test").status().code(), absl::StatusCode::kNotFound);
  EXPECT_FALSE(Listed("dense_fault.test"));
}

TEST(TemplateRegistryTest, RegisteredTemplateIsFoundAndListedLastButNeverADefault) {
  const Template& registered = NamedOnlyTemplate();
  const size_t built_in = AllTemplates().size();
  RegisterTemplate(&registered);
  auto found = FindTemplate("dense_registered.test");
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(*found, &registered);
  ASSERT_EQ(AllTemplates().size(), built_in + 1);
  EXPECT_EQ(AllTemplates().back(), &registered);
  auto def = DefaultTemplate("dense");
  ASSERT_TRUE(def.ok()) << def.status();
  EXPECT_NE(*def, &registered);
}

}  // namespace
}  // namespace tunefleet
