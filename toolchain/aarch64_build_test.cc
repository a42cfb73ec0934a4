// Cross-building for AArch64 boards (RK3399: cortex-a72 big cores,
// cortex-a53 little ones) on this x86 builder: random configs of every CPU
// template build for `llvm -mtriple=aarch64-linux-gnu -mcpu=...` into an
// AArch64 ELF shared object (linked by lld with no AArch64 sysroot) whose
// code uses NEON: its .text holds vector FMLA instructions on 4 x f32.
// Running these objects is the qemu integration test's job
// (tests/aarch64_agent_test.cc); this host cannot load them.
#include <elf.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "toolchain/builder.h"
#include "tuner_core/templates/template.h"
#include "tuner_core/workloads/workload.h"

namespace tunefleet {
namespace {

constexpr char kCortexA72[] = "llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72";
constexpr char kCortexA53[] = "llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a53";

// What the ELF header says and how many NEON FMLA instructions on .4s
// vectors the executable sections hold.
struct ElfSummary {
  bool is_elf64_little = false;
  uint16_t type = 0;
  uint16_t machine = 0;
  int vector_fmla_4s = 0;
};

// FMLA (vector), single precision, 128-bit: fmla vD.4s, vN.4s, vM.4s.
bool IsFmlaVector4s(uint32_t insn) { return (insn & 0xFFE0FC00u) == 0x4E20CC00u; }
// FMLA (by element), single precision, 128-bit: fmla vD.4s, vN.4s, vM.s[i].
bool IsFmlaByElement4s(uint32_t insn) { return (insn & 0xFFC0F400u) == 0x4F801000u; }

ElfSummary Summarize(const std::string& bytes) {
  ElfSummary summary;
  if (bytes.size() < sizeof(Elf64_Ehdr)) return summary;
  Elf64_Ehdr header;
  std::memcpy(&header, bytes.data(), sizeof(header));
  summary.is_elf64_little = std::memcmp(header.e_ident, ELFMAG, SELFMAG) == 0 &&
                            header.e_ident[EI_CLASS] == ELFCLASS64 &&
                            header.e_ident[EI_DATA] == ELFDATA2LSB;
  if (!summary.is_elf64_little) return summary;
  summary.type = header.e_type;
  summary.machine = header.e_machine;
  for (int i = 0; i < header.e_shnum; ++i) {
    const uint64_t at = header.e_shoff + static_cast<uint64_t>(i) * header.e_shentsize;
    if (at + sizeof(Elf64_Shdr) > bytes.size()) break;
    Elf64_Shdr section;
    std::memcpy(&section, bytes.data() + at, sizeof(section));
    if (section.sh_type != SHT_PROGBITS || (section.sh_flags & SHF_EXECINSTR) == 0) continue;
    if (section.sh_offset + section.sh_size > bytes.size()) continue;
    for (uint64_t offset = 0; offset + 4 <= section.sh_size; offset += 4) {
      uint32_t insn;
      std::memcpy(&insn, bytes.data() + section.sh_offset + offset, 4);
      if (IsFmlaVector4s(insn) || IsFmlaByElement4s(insn)) ++summary.vector_fmla_4s;
    }
  }
  return summary;
}

TEST(Aarch64BuildTest, FmlaEncodingsMatchKnownInstructions) {
  // Encodings from `llvm-mc -triple=aarch64 -show-encoding` (LLVM 19).
  EXPECT_TRUE(IsFmlaVector4s(0x4e22cc20));     // fmla v0.4s, v1.4s, v2.4s
  EXPECT_TRUE(IsFmlaByElement4s(0x4f821020));  // fmla v0.4s, v1.4s, v2.s[0]
  EXPECT_TRUE(IsFmlaByElement4s(0x4fa21820));  // fmla v0.4s, v1.4s, v2.s[3]
  EXPECT_TRUE(IsFmlaByElement4s(0x4faf13df));  // fmla v31.4s, v30.4s, v15.s[1]
  EXPECT_FALSE(IsFmlaVector4s(0x0e22cc20));    // fmla v0.2s, v1.2s, v2.2s (64-bit)
  EXPECT_FALSE(IsFmlaVector4s(0x4e62cc20));    // fmla v0.2d, v1.2d, v2.2d (double)
  EXPECT_FALSE(IsFmlaVector4s(0xd503201f));    // nop
}

TEST(Aarch64BuildTest, TargetStringsParseAsAarch64WithNeon) {
  for (const char* target_string : {kCortexA72, kCortexA53}) {
    absl::StatusOr<TargetSpec> target = ParseTarget(target_string);
    ASSERT_TRUE(target.ok()) << target.status();
    EXPECT_EQ(target->arch->name(), "aarch64") << target_string;
    EXPECT_EQ(target->vector_bits, 128) << target_string;
  }
}

// A small workload per template's workload, with shapes that divide no tile.
nlohmann::json SmallWorkloadArgs(const std::string& workload_name) {
  if (workload_name == "dense") return {{"M", 24}, {"N", 40}, {"K", 20}, {"layout", "NK"}};
  if (workload_name == "batch_matmul") return {{"B", 2}, {"M", 12}, {"N", 20}, {"K", 16}};
  if (workload_name == "conv2d_nchw") {
    return {{"N", 1}, {"C", 8}, {"H", 14},      {"W", 14},          {"K", 16},
            {"R", 3}, {"S", 3}, {"padding", 1}, {"layout", "NCHWc"}};
  }
  if (workload_name == "depthwise_conv2d_nchw") {
    return {{"N", 1}, {"C", 16}, {"H", 14},      {"W", 14},
            {"R", 3}, {"S", 3},  {"padding", 1}, {"layout", "NCHW"}};
  }
  return nullptr;
}

// Every template, both RK3399 core types: random configs build into AArch64
// shared objects, and the templates' vector code is NEON.
TEST(Aarch64BuildTest, EveryTemplateBuildsAarch64SharedObjectsWithNeon) {
  constexpr int kConfigsPerTemplate = 6;
  for (const char* target_string : {kCortexA72, kCortexA53}) {
    absl::StatusOr<TargetSpec> target = ParseTarget(target_string);
    ASSERT_TRUE(target.ok()) << target.status();
    std::mt19937_64 rng(42);
    int templates_tried = 0;
    for (const Template* tmpl : AllTemplates()) {
      // GPU templates (".cuda") need a `cuda` target; every CPU template
      // must build for AArch64.
      if (absl::EndsWith(tmpl->name(), ".cuda")) continue;
      nlohmann::json args = SmallWorkloadArgs(tmpl->workload_name());
      // Its blocks hold whole groups (2 input and 4 output channels each).
      if (tmpl->name() == "group_conv2d_nchwc.x86") args["group"] = 4;
      ASSERT_FALSE(args.is_null())
          << "no small workload for " << tmpl->name() << "'s workload " << tmpl->workload_name();
      absl::StatusOr<std::unique_ptr<Workload>> workload =
          MakeWorkload(tmpl->workload_name(), args);
      ASSERT_TRUE(workload.ok()) << workload.status();
      absl::StatusOr<ConfigSpace> space = tmpl->DefineSpace(**workload);
      ASSERT_TRUE(space.ok()) << space.status();
      ++templates_tried;
      int built = 0;
      int fmla = 0;
      for (int c = 0; c < kConfigsPerTemplate * 4 && built < kConfigsPerTemplate; ++c) {
        const int64_t index = std::uniform_int_distribution<int64_t>(0, space->size() - 1)(rng);
        absl::StatusOr<Config> config = space->Get(index);
        ASSERT_TRUE(config.ok()) << config.status();
        BuildResult result = BuildCandidate(*tmpl, **workload, *config, *target);
        // Configs the template itself refuses (oversized tiles) are skipped;
        // every vector width builds (8 and 16 lanes as 2 and 4 NEON registers).
        if (result.error_no == MeasureErrorNo::kInstantiationError &&
            result.error_msg.find("wider than") == std::string::npos) {
          continue;
        }
        ASSERT_TRUE(result.ok()) << tmpl->name() << " for " << target_string << ": "
                                 << MeasureErrorName(result.error_no) << ": " << result.error_msg
                                 << " config " << config->ToString();
        ++built;
        EXPECT_EQ(result.artifact.target, target_string);
        const ElfSummary elf = Summarize(result.artifact.shared_object);
        ASSERT_TRUE(elf.is_elf64_little) << tmpl->name();
        EXPECT_EQ(elf.machine, EM_AARCH64) << tmpl->name() << " config " << config->ToString();
        EXPECT_EQ(elf.type, ET_DYN) << tmpl->name();
        fmla += elf.vector_fmla_4s;
      }
      EXPECT_GT(built, 0) << tmpl->name() << ": no config built for " << target_string;
      // dense_tiled (AutoTVM's tutorial) is serial and scalar by design;
      // every other template's inner tile is f32 vector FMAs.
      if (tmpl->name() != "dense_tiled") {
        EXPECT_GT(fmla, 0) << tmpl->name() << " built for " << target_string
                           << " has no NEON fmla .4s instruction";
      }
      std::printf("%s for %s: %d configs built, %d NEON fmla .4s\n", tmpl->name().c_str(),
                  target_string, built, fmla);
    }
    EXPECT_GE(templates_tried, 5);
  }
}

}  // namespace
}  // namespace tunefleet
