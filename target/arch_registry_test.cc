#include "target/arch_registry.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "target/aarch64/arch.h"

namespace tunefleet {
namespace {

TEST(ArchRegistryTest, FindsAnArchitectureByTripleOrName) {
  const Arch* arm = FindArch("aarch64-unknown-linux-gnu");
  ASSERT_NE(arm, nullptr);
  EXPECT_EQ(arm, &Aarch64Arch());
  EXPECT_EQ(FindArch("aarch64"), arm);
  ASSERT_NE(FindArch("x86_64-pc-linux-gnu"), nullptr);
  EXPECT_EQ(FindArch("x86_64-pc-linux-gnu")->name(), "x86_64");
  ASSERT_NE(FindArch("nvptx64-nvidia-cuda"), nullptr);
  EXPECT_TRUE(FindArch("nvptx64-nvidia-cuda")->is_gpu());
}

TEST(ArchRegistryTest, UnknownArchitecturesAreNotFound) {
  EXPECT_EQ(FindArch("riscv64-unknown-linux-gnu"), nullptr);
  EXPECT_EQ(FindArch("x86"), nullptr);  // a prefix of x86_64 is not it
  EXPECT_EQ(FindArch(""), nullptr);
}

TEST(ArchRegistryTest, NamesAreUniqueAndListed) {
  EXPECT_EQ(SupportedTriples(), "x86_64-*, aarch64-*, nvptx64-*");
  for (const Arch* a : AllArchs()) {
    for (const Arch* b : AllArchs()) {
      if (a != b) {
        EXPECT_NE(a->name(), b->name());
      }
    }
  }
}

TEST(ArchRegistryTest, CpuArchitecturesBuildElfObjectsAndGpusDoNot) {
  for (const Arch* arch : AllArchs()) {
    EXPECT_EQ(arch->elf_machine() == 0, arch->is_gpu()) << arch->name();
  }
}

}  // namespace
}  // namespace tunefleet
