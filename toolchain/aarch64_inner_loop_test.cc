// Instruction quality of the CPU templates' AArch64 (NEON) code: for
// representative configs of each register-tiled template, built for the
// RK3399's cores (`-mcpu=cortex-a72` and `-mcpu=cortex-a53`), the innermost
// loop with the most vector FMAs is found in the shared object's machine
// code (LLVM's MC disassembler over .text; a loop is the range a backward
// branch closes) and checked against the config's register tile:
//
//   - fmla .4s per iteration is exactly the tile's q-register count times
//     the steps the IR unrolls into one iteration (unroll_k, kernel taps),
//   - a GEMM config with a prefetch distance (prefetch_b) has one prfm per
//     cache line of the B row per step, and one without has none,
//   - a tile whose accumulators and operands fit the 32 q registers has no
//     stack (sp-based) load or store and no store at all in the loop, and
//     no more loads than its operands need; a tile that cannot fit is
//     refused by the builder (register_fit.h: the spaces are defined
//     without the target and keep such tiles, which would only spill).
//
// Correctness of the same code under qemu is tests/aarch64_agent_test.cc's
// job; this test only reads the instructions.
#include <elf.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "llvm/MC/MCAsmInfo.h"
#include "llvm/MC/MCContext.h"
#include "llvm/MC/MCDisassembler/MCDisassembler.h"
#include "llvm/MC/MCInst.h"
#include "llvm/MC/MCInstPrinter.h"
#include "llvm/MC/MCInstrAnalysis.h"
#include "llvm/MC/MCInstrInfo.h"
#include "llvm/MC/MCRegisterInfo.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/MCTargetOptions.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "nlohmann/json.hpp"
#include "toolchain/builder.h"
#include "tuner_core/templates/nchwc_layout.h"
#include "tuner_core/templates/template.h"
#include "tuner_core/workloads/workload.h"

namespace tunefleet {
namespace {

constexpr char kCortexA72[] = "llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72";
constexpr char kCortexA53[] = "llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a53";
constexpr int kNeonRegisters = 32;

// One decoded instruction of the shared object's executable sections.
struct Insn {
  uint64_t address = 0;
  bool is_fmla_4s = false;   // fmla vD.4s, vN.4s, vM.4s or vM.s[i]
  bool is_prefetch = false;  // prfm/prfum (not counted as a load)
  bool loads = false;
  bool stores = false;
  bool uses_sp = false;  // a memory operation with sp among its operands
  bool backward_branch = false;
  uint64_t branch_target = 0;
  std::string text;  // as the assembler prints it, for failure messages
};

// A loop as the machine code lays it out: [begin, latch] closed by the
// backward branch at `latch`.
struct LoopBody {
  uint64_t begin = 0, latch = 0;
  int instructions = 0;
  int fmla = 0;
  int prefetches = 0;
  int loads = 0, stores = 0;
  int stack_loads = 0, stack_stores = 0;
  std::string listing;
};

// LLVM's AArch64 MC layer: disassembler, instruction info, printer.
class Aarch64Disassembler {
 public:
  static std::unique_ptr<Aarch64Disassembler> Make(const std::string& triple,
                                                   const std::string& cpu, std::string* error) {
    static std::once_flag once;
    std::call_once(once, [] {
      llvm::InitializeAllTargetInfos();
      llvm::InitializeAllTargetMCs();
      llvm::InitializeAllDisassemblers();
    });
    auto d = std::unique_ptr<Aarch64Disassembler>(new Aarch64Disassembler());
    const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, *error);
    if (target == nullptr) return nullptr;
    const llvm::Triple parsed(triple);
    d->registers_.reset(target->createMCRegInfo(triple));
    d->asm_info_.reset(target->createMCAsmInfo(*d->registers_, triple, llvm::MCTargetOptions()));
    d->subtarget_.reset(target->createMCSubtargetInfo(triple, cpu, ""));
    d->instr_info_.reset(target->createMCInstrInfo());
    if (!d->registers_ || !d->asm_info_ || !d->subtarget_ || !d->instr_info_) {
      *error = "the AArch64 MC layer is incomplete";
      return nullptr;
    }
    d->context_ = std::make_unique<llvm::MCContext>(parsed, d->asm_info_.get(), d->registers_.get(),
                                                    d->subtarget_.get());
    d->disassembler_.reset(target->createMCDisassembler(*d->subtarget_, *d->context_));
    d->analysis_.reset(target->createMCInstrAnalysis(d->instr_info_.get()));
    d->printer_.reset(
        target->createMCInstPrinter(parsed, 0, *d->asm_info_, *d->instr_info_, *d->registers_));
    if (!d->disassembler_ || !d->analysis_ || !d->printer_) {
      *error = "no AArch64 disassembler in this LLVM";
      return nullptr;
    }
    return d;
  }

  // The instructions of every executable section of an ELF64 object.
  std::vector<Insn> Decode(const std::string& elf) const {
    std::vector<Insn> out;
    if (elf.size() < sizeof(Elf64_Ehdr)) return out;
    Elf64_Ehdr header;
    std::memcpy(&header, elf.data(), sizeof(header));
    for (int i = 0; i < header.e_shnum; ++i) {
      const uint64_t at = header.e_shoff + static_cast<uint64_t>(i) * header.e_shentsize;
      if (at + sizeof(Elf64_Shdr) > elf.size()) break;
      Elf64_Shdr section;
      std::memcpy(&section, elf.data() + at, sizeof(section));
      if (section.sh_type != SHT_PROGBITS || (section.sh_flags & SHF_EXECINSTR) == 0) continue;
      if (section.sh_offset + section.sh_size > elf.size()) continue;
      const auto* bytes = reinterpret_cast<const uint8_t*>(elf.data() + section.sh_offset);
      for (uint64_t offset = 0; offset + 4 <= section.sh_size; offset += 4) {
        out.push_back(
            DecodeOne(llvm::ArrayRef<uint8_t>(bytes + offset, 4), section.sh_addr + offset));
      }
    }
    return out;
  }

 private:
  Aarch64Disassembler() = default;

  Insn DecodeOne(llvm::ArrayRef<uint8_t> bytes, uint64_t address) const {
    Insn insn;
    insn.address = address;
    llvm::MCInst inst;
    uint64_t size = 0;
    if (disassembler_->getInstruction(inst, size, bytes, address, llvm::nulls()) !=
        llvm::MCDisassembler::Success) {
      insn.text = "<data>";
      return insn;
    }
    const llvm::StringRef name = instr_info_->getName(inst.getOpcode());
    insn.is_fmla_4s = name == "FMLAv4f32" || name == "FMLAv4i32_indexed";
    const llvm::MCInstrDesc& desc = instr_info_->get(inst.getOpcode());
    insn.is_prefetch = name.starts_with("PRFM") || name.starts_with("PRFUM");
    insn.loads = desc.mayLoad() && !insn.is_prefetch;
    insn.stores = desc.mayStore();
    if (insn.loads || insn.stores) {
      for (const llvm::MCOperand& operand : inst) {
        if (operand.isReg() && llvm::StringRef(registers_->getName(operand.getReg())) == "SP") {
          insn.uses_sp = true;
        }
      }
    }
    uint64_t target = 0;
    if (analysis_->isBranch(inst) && !analysis_->isCall(inst) &&
        analysis_->evaluateBranch(inst, address, 4, target) && target <= address) {
      insn.backward_branch = true;
      insn.branch_target = target;
    }
    llvm::raw_string_ostream text(insn.text);
    printer_->printInst(&inst, address, "", *subtarget_, text);
    return insn;
  }

  std::unique_ptr<llvm::MCRegisterInfo> registers_;
  std::unique_ptr<llvm::MCAsmInfo> asm_info_;
  std::unique_ptr<llvm::MCSubtargetInfo> subtarget_;
  std::unique_ptr<llvm::MCInstrInfo> instr_info_;
  std::unique_ptr<llvm::MCContext> context_;
  std::unique_ptr<llvm::MCDisassembler> disassembler_;
  std::unique_ptr<llvm::MCInstrAnalysis> analysis_;
  std::unique_ptr<llvm::MCInstPrinter> printer_;
};

// The innermost loops (ranges that contain no other loop's range), each
// with its counts; the one with the most fmla is the hot loop.
std::vector<LoopBody> InnermostLoops(const std::vector<Insn>& code) {
  struct Range {
    uint64_t begin, latch;
  };
  std::vector<Range> ranges;
  for (const Insn& insn : code) {
    if (insn.backward_branch) ranges.push_back({insn.branch_target, insn.address});
  }
  std::vector<LoopBody> out;
  for (const Range& r : ranges) {
    bool contains_another = false;
    for (const Range& other : ranges) {
      if (&other == &r) continue;
      if (other.begin >= r.begin && other.latch <= r.latch &&
          (other.begin != r.begin || other.latch != r.latch)) {
        contains_another = true;
      }
    }
    if (contains_another) continue;
    LoopBody body;
    body.begin = r.begin;
    body.latch = r.latch;
    for (const Insn& insn : code) {
      if (insn.address < r.begin || insn.address > r.latch) continue;
      ++body.instructions;
      body.fmla += insn.is_fmla_4s;
      body.prefetches += insn.is_prefetch;
      body.loads += insn.loads;
      body.stores += insn.stores;
      body.stack_loads += insn.loads && insn.uses_sp;
      body.stack_stores += insn.stores && insn.uses_sp;
      absl::StrAppend(&body.listing, "    ", insn.text, "\n");
    }
    out.push_back(std::move(body));
  }
  return out;
}

LoopBody HotLoop(const std::vector<Insn>& code) {
  LoopBody best;
  for (LoopBody& loop : InnermostLoops(code)) {
    if (loop.fmla > best.fmla) best = std::move(loop);
  }
  return best;
}

// What a config's hot loop should do with the stack.
enum class Spills {
  kNone,       // the tile and its operands fit the 32 q registers
  kSome,       // the tile cannot fit: the loop reloads accumulators
  kEitherWay,  // at the edge; depends on the core's schedule (printed only)
  kRefused,    // cannot fit: the builder refuses it (INSTANTIATION_ERROR)
};

const char* SpillsName(Spills s) {
  switch (s) {
    case Spills::kNone:
      return "none";
    case Spills::kSome:
      return "some";
    case Spills::kEitherWay:
      return "either";
    case Spills::kRefused:
      return "refused";
  }
  return "?";
}

// A config to build and the register tile it implies on NEON.
struct Case {
  std::string label;  // e.g. "8x12 vec4 unroll_k1"
  std::string template_name;
  std::string workload_name;
  nlohmann::json workload_args;
  nlohmann::json entity;     // AutoTVM config entity
  int tile_q_registers = 0;  // accumulators as 128-bit registers
  // Registers one FMA step reads besides the accumulators: the vectors
  // reused across the tile (B row, weights) and one broadcast/input vector.
  int operand_q_registers = 0;
  // Loads one FMA step needs at most: each operand vector once, and for
  // the broadcast kernels one load per broadcast row/column.
  int loads_per_step = 0;
  int unroll = 1;               // FMA steps the IR puts in one iteration of the loop
  int prefetches_per_step = 0;  // prfm per FMA step (prefetch_b's lines)
  Spills spills = Spills::kNone;
};

// The default expectation: spill-free when accumulators and operands fit,
// refused by the builder when they cannot.
void ExpectSpillsFromRegisterCount(Case* c) {
  c->spills = c->tile_q_registers + c->operand_q_registers <= kNeonRegisters ? Spills::kNone
                                                                             : Spills::kRefused;
}

Case WithSpills(Case c, Spills spills) {
  c.spills = spills;
  return c;
}

nlohmann::json GemmEntity(int vec, int nr_vecs, int mr, int unroll_k, bool dense_gemm,
                          const std::string& kernel) {
  nlohmann::json entity = {{"vec", "ot", vec},
                           {"nr_vecs", "ot", nr_vecs},
                           {"mr", "ot", mr},
                           {"kc", "ot", 256},
                           {"mc_panels", "ot", 4},
                           {"nc_panels", "ot", 4},
                           {"unroll_k", "ot", unroll_k},
                           {"pack_a", "ot", 1},
                           {"order", "ot", "nm"},
                           {"fuse", "ot", "mn"}};
  if (dense_gemm) {
    entity.push_back({"pack_b", "ot", "once"});
    entity.push_back({"kernel", "ot", kernel});
  }
  return entity;
}

// prefetch_b > 0 sets that knob (a distance in k steps); otherwise the
// entity leaves the prefetch knobs out, as records from before them do.
Case GemmCase(const std::string& template_name, int vec, int nr_vecs, int mr, int unroll_k,
              const std::string& kernel = "panel", int prefetch_b = 0) {
  Case c;
  c.label = absl::StrCat(kernel == "dot" ? "dot " : "", mr, "x", vec * nr_vecs, " vec", vec,
                         " unroll_k", unroll_k, prefetch_b > 0 ? " prefetch_b" : "",
                         prefetch_b > 0 ? absl::StrCat(prefetch_b) : "");
  c.template_name = template_name;
  c.workload_name = "dense";
  c.workload_args = {{"M", 96}, {"N", 192}, {"K", 256}, {"layout", "NK"}};
  c.entity = GemmEntity(vec, nr_vecs, mr, unroll_k, template_name == "dense_gemm.x86", kernel);
  if (prefetch_b > 0) {
    c.entity.push_back({"prefetch_b", "ot", prefetch_b});
    c.prefetches_per_step = (nr_vecs * vec + 15) / 16;  // 64-byte lines of the B row
  }
  const int b_vectors = nr_vecs * vec / 4;
  c.tile_q_registers = mr * b_vectors;
  if (kernel == "dot") {
    // A k vector of each A row and each B row.
    c.operand_q_registers = mr + b_vectors;
    c.loads_per_step = mr + b_vectors;
  } else {
    // The B row's vectors and A's values (by element, or one ld1r per row).
    c.operand_q_registers = b_vectors + 1;
    c.loads_per_step = b_vectors + mr;
  }
  c.unroll = unroll_k;
  ExpectSpillsFromRegisterCount(&c);
  return c;
}

Case ConvCase(int tile_oc, int tile_ow, int vec, const std::string& reduce) {
  Case c;
  c.label = absl::StrCat("ow", tile_ow, " x oc", tile_oc, " vec", vec, " ", reduce);
  c.template_name = "conv2d_nchwc.x86";
  c.workload_name = "conv2d_nchw";
  c.workload_args = {{"N", 1}, {"C", 64}, {"H", 28},      {"W", 28},          {"K", 64},
                     {"R", 3}, {"S", 3},  {"padding", 1}, {"layout", "NCHWc"}};
  c.entity = {{"tile_ic", "ot", 16},
              {"tile_oc", "ot", tile_oc},
              {"tile_ow", "ot", tile_ow},
              {"vec", "ot", vec},
              {"reduce", "ot", reduce}};
  // The widest tile of a 28-column row cut into tiles of at most tile_ow.
  const int width = RowTileWidth(28, tile_ow);
  c.tile_q_registers = width * tile_oc / 4;
  // The weights of one input channel, one broadcast input pixel.
  c.operand_q_registers = tile_oc / 4 + 1;
  c.loads_per_step = tile_oc / 4 + width;
  // "c_kh_ic_kw" unrolls the 3 taps of a kernel row in the IR.
  c.unroll = reduce.find("ic_kw") != std::string::npos ? 3 : 1;
  ExpectSpillsFromRegisterCount(&c);
  return c;
}

Case DepthwiseCase(int tile_c, int tile_ow, int vec, int unroll_kw) {
  Case c;
  c.label = absl::StrCat("ow", tile_ow, " x c", tile_c, " vec", vec, " unroll_kw", unroll_kw);
  c.template_name = "depthwise_conv2d_nchwc.x86";
  c.workload_name = "depthwise_conv2d_nchw";
  c.workload_args = {{"N", 1}, {"C", 64}, {"H", 56},      {"W", 56},
                     {"R", 3}, {"S", 3},  {"padding", 1}, {"layout", "NCHW"}};
  c.entity = {{"tile_c", "ot", tile_c},
              {"tile_ow", "ot", tile_ow},
              {"vec", "ot", vec},
              {"unroll_kw", "ot", unroll_kw}};
  c.tile_q_registers = RowTileWidth(56, tile_ow) * tile_c / 4;
  // The tap's weights, one input vector at a time; every FMA has its own
  // input vector (no broadcast in a depthwise convolution).
  c.operand_q_registers = tile_c / 4 + 1;
  c.loads_per_step = tile_c / 4 + c.tile_q_registers;
  c.unroll = unroll_kw ? 3 : 1;  // the 3 taps of a kernel row
  ExpectSpillsFromRegisterCount(&c);
  return c;
}

std::vector<Case> RepresentativeCases() {
  return {
      // dense_gemm.x86's panel kernel: the ARM sgemm micro-kernels (8x12,
      // 6x16: 24 accumulators), a small one, AVX2's 6x16 of 8-lane vectors
      // (24 q on NEON), and tiles that cannot fit: 8x16 (32 accumulators)
      // and AVX-512's 14x32 (112 q on NEON). Then the dot kernel.
      GemmCase("dense_gemm.x86", 4, 3, 8, 1),
      GemmCase("dense_gemm.x86", 4, 3, 8, 4),
      GemmCase("dense_gemm.x86", 4, 4, 6, 2),
      GemmCase("dense_gemm.x86", 4, 2, 4, 4),
      GemmCase("dense_gemm.x86", 8, 2, 6, 4),
      GemmCase("dense_gemm.x86", 4, 4, 8, 1),
      GemmCase("dense_gemm.x86", 16, 2, 14, 1),
      GemmCase("dense_gemm.x86", 4, 4, 4, 2, "dot"),
      // With software prefetch of B 16 k steps ahead: one prfm per line of
      // the 12- or 32-float B row per step.
      GemmCase("dense_gemm.x86", 4, 3, 8, 2, "panel", 16),
      GemmCase("dense_gemm.x86", 8, 2, 6, 4, "panel", 16),
      GemmCase("dense_pack.x86", 4, 4, 6, 1, "panel", 16),
      GemmCase("dense_pack.x86", 4, 3, 8, 2),
      GemmCase("dense_pack.x86", 4, 4, 6, 1),
      GemmCase("dense_pack.x86", 8, 4, 8, 1),
      // conv2d_nchwc.x86: 16-28 accumulators at 4 lanes. The space's cap
      // (kMaxTileVectors = 28 accumulators) admits 7 x 16 = 28, which
      // with its 4 weight vectors needs 33 q registers and spills on NEON,
      // as do the 8- and 16-lane tiles (2 and 4 q registers per vector).
      ConvCase(16, 4, 4, "c_kh_kw_ic"),
      ConvCase(16, 5, 4, "c_kh_kw_ic_inline_pad"),
      ConvCase(32, 2, 4, "kh_kw_c_ic"),
      // The whole 14-column half row: 28 accumulators, 31 of the 32 q
      // registers; cortex-a72's schedule fits them, cortex-a53's in-order
      // schedule spills one.
      WithSpills(ConvCase(8, 14, 4, "c_kh_kw_ic_inline_pad"), Spills::kEitherWay),
      ConvCase(16, 7, 4, "c_kh_kw_ic"),
      ConvCase(16, 7, 4, "c_kh_kw_ic_inline_pad"),
      ConvCase(32, 3, 4, "icc_outer_kh_kw_ic"),
      // 24 accumulators fit, but with the kernel row's 3 taps unrolled
      // LLVM hoists the next taps' weight loads and spills (both cores).
      WithSpills(ConvCase(16, 6, 4, "c_kh_ic_kw"), Spills::kSome),
      ConvCase(32, 7, 8, "c_kh_kw_ic"),
      ConvCase(64, 7, 16, "c_kh_kw_ic"),
      // depthwise_conv2d_nchwc.x86: the same row tiles, one input vector per
      // FMA. With the 3 taps unrolled, cortex-a53's in-order schedule
      // hoists loads and spills at 16 accumulators where cortex-a72's does
      // not.
      DepthwiseCase(16, 4, 4, 0),
      DepthwiseCase(8, 6, 4, 0),
      WithSpills(DepthwiseCase(8, 8, 4, 1), Spills::kEitherWay),
      DepthwiseCase(16, 7, 4, 0),
      DepthwiseCase(64, 7, 16, 0),
  };
}

struct Measured {
  bool built = false;
  std::string error;
  LoopBody loop;
};

Measured BuildAndMeasure(const Case& c, const TargetSpec& target,
                         const Aarch64Disassembler& disassembler) {
  Measured m;
  absl::StatusOr<const Template*> tmpl = FindTemplate(c.template_name);
  if (!tmpl.ok()) return {false, std::string(tmpl.status().message()), {}};
  absl::StatusOr<std::unique_ptr<Workload>> workload =
      MakeWorkload(c.workload_name, c.workload_args);
  if (!workload.ok()) return {false, std::string(workload.status().message()), {}};
  absl::StatusOr<ConfigSpace> space = (*tmpl)->DefineSpace(**workload);
  if (!space.ok()) return {false, std::string(space.status().message()), {}};
  absl::StatusOr<Config> config = space->FromJson({{"entity", c.entity}});
  if (!config.ok()) return {false, std::string(config.status().message()), {}};
  BuildResult result = BuildCandidate(**tmpl, **workload, *config, target);
  if (!result.ok()) {
    return {false, absl::StrCat(MeasureErrorName(result.error_no), ": ", result.error_msg), {}};
  }
  m.built = true;
  m.loop = HotLoop(disassembler.Decode(result.artifact.shared_object));
  return m;
}

TEST(Aarch64InnerLoopTest, DisassemblerFindsTheLoopAndItsFmla) {
  // A hand-assembled loop: two fmla, an sp reload, a backward b.ne.
  //   0: ldr q0, [x1], #16      4: fmla v1.4s, v0.4s, v2.s[0]
  //   8: fmla v3.4s, v0.4s, v2.4s   c: ldr q4, [sp, #32]
  //  10: subs x2, x2, #1     14: b.ne 0            18: ret
  const uint32_t words[] = {0x3cc10420, 0x4f821001, 0x4e22cc03, 0x3dc00be4,
                            0xf1000442, 0x54ffff61, 0xd65f03c0};
  Elf64_Ehdr header{};
  Elf64_Shdr sections[2]{};
  std::string elf(sizeof(header) + sizeof(sections) + sizeof(words), '\0');
  header.e_shoff = sizeof(header);
  header.e_shentsize = sizeof(Elf64_Shdr);
  header.e_shnum = 2;
  sections[1].sh_type = SHT_PROGBITS;
  sections[1].sh_flags = SHF_EXECINSTR | SHF_ALLOC;
  sections[1].sh_offset = sizeof(header) + sizeof(sections);
  sections[1].sh_addr = 0x1000;
  sections[1].sh_size = sizeof(words);
  std::memcpy(elf.data(), &header, sizeof(header));
  std::memcpy(elf.data() + sizeof(header), sections, sizeof(sections));
  std::memcpy(elf.data() + sizeof(header) + sizeof(sections), words, sizeof(words));

  std::string error;
  auto disassembler = Aarch64Disassembler::Make("aarch64-unknown-linux-gnu", "cortex-a72", &error);
  ASSERT_NE(disassembler, nullptr) << error;
  const std::vector<Insn> code = disassembler->Decode(elf);
  ASSERT_EQ(code.size(), 7u);
  const LoopBody loop = HotLoop(code);
  EXPECT_EQ(loop.begin, 0x1000u);
  EXPECT_EQ(loop.latch, 0x1014u);
  EXPECT_EQ(loop.instructions, 6);
  EXPECT_EQ(loop.fmla, 2) << loop.listing;
  EXPECT_EQ(loop.loads, 2) << loop.listing;
  EXPECT_EQ(loop.stores, 0) << loop.listing;
  EXPECT_EQ(loop.stack_loads, 1) << loop.listing;
}

class Aarch64InnerLoopCpuTest : public testing::TestWithParam<const char*> {};

// Every representative config: fmla per iteration of the hot loop is the
// tile times the IR's unroll, loads are no more than the operands need, and
// the loop touches the stack exactly when the tile cannot fit NEON's 32 q
// registers. Prints the table the issue asks for.
TEST_P(Aarch64InnerLoopCpuTest, HotLoopHoldsTheRegisterTile) {
  absl::StatusOr<TargetSpec> target = ParseTarget(GetParam());
  ASSERT_TRUE(target.ok()) << target.status();
  std::string error;
  auto disassembler = Aarch64Disassembler::Make(target->triple, target->cpu, &error);
  ASSERT_NE(disassembler, nullptr) << error;
  std::printf("%s\n%-27s %-34s %4s %5s %6s %9s %10s %11s %6s %6s\n", GetParam(), "template",
              "config", "tile", "needs", "unroll", "fmla/iter", "loads/iter", "stores/iter",
              "spills", "expect");
  for (const Case& c : RepresentativeCases()) {
    const Measured m = BuildAndMeasure(c, *target, *disassembler);
    if (c.spills == Spills::kRefused) {
      // Refused before codegen, naming the demand (built, it spilled).
      EXPECT_FALSE(m.built) << c.template_name << " " << c.label;
      EXPECT_NE(m.error.find("INSTANTIATION_ERROR: template " + c.template_name +
                             ": register tile needs"),
                std::string::npos)
          << m.error;
      std::printf("%-27s %-34s %4d %5d %6s %s\n", c.template_name.c_str(), c.label.c_str(),
                  c.tile_q_registers, c.tile_q_registers + c.operand_q_registers, "", "refused");
      continue;
    }
    if (!m.built) {
      ADD_FAILURE() << c.template_name << " " << c.label << ": " << m.error;
      continue;
    }
    const LoopBody& loop = m.loop;
    const int spills = loop.stack_loads + loop.stack_stores;
    std::printf("%-27s %-34s %4d %5d %6d %9d %10d %11d %6d %6s\n", c.template_name.c_str(),
                c.label.c_str(), c.tile_q_registers, c.tile_q_registers + c.operand_q_registers,
                c.unroll, loop.fmla, loop.loads, loop.stores, spills, SpillsName(c.spills));
    const std::string where = absl::StrCat(c.template_name, " ", c.label, " on ", GetParam(),
                                           ", hot loop:\n", loop.listing);
    // Each accumulator gets exactly one FMA per step (k, or tap x input
    // channel): no lost vectorization, no scalar FMAs, no duplicated work.
    EXPECT_EQ(loop.fmla, c.tile_q_registers * c.unroll) << where;
    EXPECT_EQ(loop.prefetches, c.prefetches_per_step * c.unroll) << where;
    switch (c.spills) {
      case Spills::kNone:
        EXPECT_EQ(spills, 0) << where;
        EXPECT_EQ(loop.stores, 0) << where;
        EXPECT_LE(loop.loads, c.loads_per_step * c.unroll) << where;
        break;
      case Spills::kSome:
        EXPECT_GT(spills, 0) << where;
        break;
      case Spills::kEitherWay:
      case Spills::kRefused:  // handled above
        break;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Rk3399Cores, Aarch64InnerLoopCpuTest,
                         testing::Values(kCortexA72, kCortexA53));

}  // namespace
}  // namespace tunefleet
