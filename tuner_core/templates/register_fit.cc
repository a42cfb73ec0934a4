#include "tuner_core/templates/register_fit.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

namespace tunefleet {
namespace {

// x86's FMA takes one vector operand from memory (TargetSpec's Arch says).
bool FmaReadsMemory(const TargetSpec& target) {
  return target.arch != nullptr && target.arch->FmaReadsMemoryOperand();
}

}  // namespace

RegisterCount CountRegisters(const RegisterDemand& demand, const TargetSpec& target) {
  RegisterCount count;
  const int64_t bits = std::max(1, target.vector_bits);
  count.per_vector = std::max<int64_t>(1, (demand.lanes * 32 + bits - 1) / bits);
  count.accumulators = demand.accumulators * count.per_vector;
  if (FmaReadsMemory(target)) {
    // The vector operands reused across the tile (a row of B, a block of
    // weights) stay in registers, and so does the broadcast (one at a
    // time); without a broadcast one vector operand per FMA is read from
    // memory instead.
    if (demand.broadcast_operands > 0) {
      count.operands = demand.vector_operands * count.per_vector + 1;
    } else if (demand.vector_operands > 0) {
      count.operands = (demand.vector_operands - 1) * count.per_vector;
    }
  } else {
    count.operands = demand.vector_operands * count.per_vector + demand.broadcast_operands;
  }
  count.available = target.vector_registers;
  return count;
}

[[nodiscard]] absl::Status CheckRegisterTileFits(const Template& tmpl, const Workload& workload,
                                                 const Config& config, const TargetSpec& target) {
  if (!tmpl.has_register_demand() || target.vector_registers <= 0) return absl::OkStatus();
  absl::StatusOr<RegisterDemand> demand = tmpl.RegisterDemandOf(workload, config);
  if (!demand.ok()) return demand.status();
  if (demand->lanes * 32 > target.max_vector_bits) {
    return absl::InvalidArgumentError(
        absl::StrCat("vectors of ", demand->lanes, " lanes (", demand->lanes * 32,
                     " bits) are wider than target \"", target.original, "\" (", target.cpu,
                     ") generates (at most ", target.max_vector_bits, " bits)"));
  }
  const RegisterCount count = CountRegisters(*demand, target);
  if (count.fits()) return absl::OkStatus();
  const absl::string_view name =
      target.arch == nullptr ? "vector" : target.arch->VectorRegisterName(target.vector_bits);
  return absl::InvalidArgumentError(absl::StrCat(
      "register tile needs ", count.needed(), " vector registers (", count.accumulators,
      " accumulators + ", count.operands, " operand", count.operands == 1 ? "" : "s",
      FmaReadsMemory(target) && demand->broadcast_operands == 0
          ? ", one vector operand of each FMA read from memory"
          : "",
      "; vectors of ", demand->lanes, " lanes = ", count.per_vector, " ", name, " register",
      count.per_vector == 1 ? "" : "s", " each); target \"", target.original, "\" (", target.cpu,
      ") has ", count.available));
}

std::function<absl::Status(const Config&)> RegisterTileCheck(const Task& task, TargetSpec target) {
  return [&task, target = std::move(target)](const Config& config) {
    return CheckRegisterTileFits(task.tmpl(), task.workload(), config, target);
  };
}

}  // namespace tunefleet
