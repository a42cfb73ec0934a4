// Whether a config's register tile fits the target's vector register file,
// decided before any code is generated. A CPU template's space is defined
// without the target (the same knobs serve AVX-512, AVX2 and NEON), so it
// holds tiles that a narrower register file cannot keep: they would build,
// spill accumulators on every step and be measured only to rank last. The
// builder refuses them as INSTANTIATION_ERROR (BuildCandidate), naming the
// demand and the target.
//
// The count, from the template's RegisterDemand (template.h) and the
// target's registers (TargetSpec::vector_registers, vector_bits):
//
//   per vector    ceil(lanes * 32 / vector_bits) physical registers (an
//                 8-lane vector is 2 NEON q registers, 1 ymm)
//   accumulators  accumulators * per vector
//   operands      AArch64: every vector operand (* per vector) plus one
//                 register per broadcast scalar: fmla reads registers
//                 only, and LLVM keeps each reused operand loaded once per
//                 step (measured: toolchain/aarch64_inner_loop_test.cc,
//                 where 28 + 5 = 33 q registers spills and 29 does not).
//                 x86-64: every vector operand reused across the tile
//                 (* per vector) plus one register for the broadcast
//                 scalar (one at a time); without a broadcast, one vector
//                 operand of each FMA is read from memory instead
//                 (vfmadd231ps acc, w, [x]). Counting
//                 the reused operands is what LLVM's register allocation
//                 does: on AVX2 (16 ymm) a 7 x 16 conv tile (14
//                 accumulators + 2 weight vectors + the broadcast) and a
//                 3 x 32 one (12 + 4 + 1) ran at half the speed of 5 x 16
//                 and 2 x 32, and no task's best config in this session's
//                 AVX-512 and AVX2 conv and dense records needs more.
//
// and the tile fits when accumulators + operands <= vector_registers. No
// slack: on NEON one register over already spills. A vector wider than the
// target generates (TargetSpec::max_vector_bits: AVX2's 16-lane vectors) is
// refused here too, before the code generator would.
#ifndef TUNEFLEET_TUNER_CORE_TEMPLATES_REGISTER_FIT_H_
#define TUNEFLEET_TUNER_CORE_TEMPLATES_REGISTER_FIT_H_

#include <cstdint>
#include <functional>

#include "absl/status/status.h"
#include "target/target_spec.h"
#include "tuner_core/space/config_space.h"
#include "tuner_core/templates/task.h"
#include "tuner_core/templates/template.h"
#include "tuner_core/workloads/workload.h"

namespace tunefleet {

// A RegisterDemand in the target's physical registers.
struct RegisterCount {
  int64_t per_vector = 1;    // registers per vector of the tile
  int64_t accumulators = 0;  // registers the accumulators take
  int64_t operands = 0;      // registers the operands take, as the ISA reads them
  int64_t available = 0;     // TargetSpec::vector_registers

  int64_t needed() const { return accumulators + operands; }
  bool fits() const { return needed() <= available; }
};

// The count above for a target whose vector_registers is not 0.
RegisterCount CountRegisters(const RegisterDemand& demand, const TargetSpec& target);

// OK when the config's tile fits `target`, or when nothing can be counted
// (a template without a register tile, a target without a register count).
// InvalidArgument otherwise, e.g. "register tile needs 37 vector registers
// (32 accumulators + 5 operands; vectors of 4 lanes = 1 q register each);
// target "llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72" (cortex-a72)
// has 32", or the template's error for a config it cannot read.
[[nodiscard]] absl::Status CheckRegisterTileFits(const Template& tmpl, const Workload& workload,
                                                 const Config& config, const TargetSpec& target);

// CheckRegisterTileFits for `task`'s template and workload on `target`, as a
// search's config check (Tuner::SetConfigCheck). `task` must outlive it.
std::function<absl::Status(const Config&)> RegisterTileCheck(const Task& task, TargetSpec target);

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_TEMPLATES_REGISTER_FIT_H_
