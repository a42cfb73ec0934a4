#include "toolchain/register_fit.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

namespace tunefleet {
namespace {

// The assembler's name of one vector register of the target.
std::string RegisterName(const TargetSpec& target) {
  if (target.is_aarch64()) return "q";
  switch (target.vector_bits) {
    case 512:
      return "zmm";
    case 256:
      return "ymm";
    default:
      return "xmm";
  }
}

}  // namespace

RegisterCount CountRegisters(const RegisterDemand& demand, const TargetSpec& target) {
  RegisterCount count;
  const int64_t bits = std::max(1, target.vector_bits);
  count.per_vector = std::max<int64_t>(1, (demand.lanes * 32 + bits - 1) / bits);
  count.accumulators = demand.accumulators * count.per_vector;
  if (target.is_x86()) {
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
  const std::string name = RegisterName(target);
  return absl::InvalidArgumentError(absl::StrCat(
      "register tile needs ", count.needed(), " vector registers (", count.accumulators,
      " accumulators + ", count.operands, " operand", count.operands == 1 ? "" : "s",
      target.is_x86() && demand->broadcast_operands == 0
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
