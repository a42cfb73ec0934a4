#include "toolchain/gpu_kernel_info.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "tuner_core/ir/ir_visitor.h"

namespace tunefleet {
namespace {

using namespace ir;  // NOLINT

class GpuLoopScan : public IRVisitor {
 public:
  std::array<int64_t, 3> grid = {0, 0, 0}, block = {0, 0, 0};
  int64_t shared_elements = 0;
  int64_t stack_elements = 0;  // register tiles live at once (nested ones add up)
  int64_t max_stack_elements = 0;
  std::string error;

 protected:
  void VisitFor(const For* op) override {
    if (!IsGpuBound(op->for_kind)) return IRVisitor::VisitFor(op);
    const IntImm* min = op->min.as<IntImm>();
    const IntImm* extent = op->extent.as<IntImm>();
    const char* kind = ForKindName(op->for_kind);
    if (min == nullptr || min->value != 0 || extent == nullptr || extent->value < 1) {
      Fail(absl::StrCat("loop '", op->var, "' bound to ", kind,
                        " needs min 0 and a constant positive extent"));
      return;
    }
    const bool is_block = IsBlockBound(op->for_kind);
    if (is_block && thread_depth_ > 0) {
      Fail(absl::StrCat("loop '", op->var, "' bound to ", kind, " is inside a thread-bound loop"));
      return;
    }
    int64_t& dim = (is_block ? grid : block)[GpuAxis(op->for_kind)];
    if (dim != 0 && dim != extent->value) {
      Fail(absl::StrCat(kind, " is bound with extent ", dim, " and with extent ", extent->value,
                        " (loop '", op->var, "'); one launch has one size per axis"));
      return;
    }
    dim = extent->value;
    if (!is_block) ++thread_depth_;
    IRVisitor::VisitFor(op);
    if (!is_block) --thread_depth_;
  }

  void VisitAllocate(const Allocate* op) override {
    switch (op->scope) {
      case MemoryScope::kShared:
        shared_elements += op->num_elements;
        IRVisitor::VisitAllocate(op);
        return;
      case MemoryScope::kStack:
        stack_elements += op->num_elements;
        max_stack_elements = std::max(max_stack_elements, stack_elements);
        IRVisitor::VisitAllocate(op);
        stack_elements -= op->num_elements;
        return;
      case MemoryScope::kGlobal:
        Fail(absl::StrCat("buffer ", op->buffer,
                          " is a heap workspace; CUDA kernels use shared or per-thread buffers"));
        return;
    }
  }

 private:
  void Fail(std::string message) {
    if (error.empty()) error = std::move(message);
  }
  int thread_depth_ = 0;
};

}  // namespace

[[nodiscard]] absl::StatusOr<GpuKernelInfo> AnalyzeGpuKernel(const LoweredFunc& func,
                                                             const TargetSpec& target) {
  if (!func.staged.empty() || func.prepare.defined() || func.finish.defined()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "kernel ", func.name, " has untimed stages; CUDA kernels must be self-contained"));
  }
  for (const BufferArg& arg : func.args) {
    if (arg.NumElements() >= (int64_t{1} << 31)) {
      return absl::InvalidArgumentError(absl::StrCat("tensor ", arg.name, " has ",
                                                     arg.NumElements(),
                                                     " elements; CUDA kernels index with 32 bits"));
    }
  }
  GpuLoopScan scan;
  scan.Visit(func.body);
  if (!scan.error.empty()) return absl::InvalidArgumentError(scan.error);

  GpuKernelInfo info;
  info.launch.entry = func.name;
  for (int axis = 0; axis < 3; ++axis) {
    info.launch.grid[axis] = std::max<int64_t>(scan.grid[axis], 1);
    info.launch.block[axis] = std::max<int64_t>(scan.block[axis], 1);
  }
  const int64_t threads = info.launch.threads_per_block();
  if (scan.block == std::array<int64_t, 3>{0, 0, 0}) {
    return absl::InvalidArgumentError(absl::StrCat(
        "kernel ", func.name, " binds no loop to threadIdx: it would run one thread per block"));
  }
  if (threads > target.max_threads_per_block) {
    return absl::InvalidArgumentError(absl::StrCat(
        threads, " threads per block (", info.launch.block[0], "x", info.launch.block[1], "x",
        info.launch.block[2], ") exceed the device's limit of ", target.max_threads_per_block));
  }
  if (info.launch.grid[1] > 65535 || info.launch.grid[2] > 65535 ||
      info.launch.grid[0] > (int64_t{1} << 31) - 1) {
    return absl::InvalidArgumentError(absl::StrCat("grid ", info.launch.grid[0], "x",
                                                   info.launch.grid[1], "x", info.launch.grid[2],
                                                   " exceeds CUDA's grid limits"));
  }
  info.shared_bytes = scan.shared_elements * 4;
  info.launch.shared_bytes = info.shared_bytes;
  if (info.shared_bytes > target.max_shared_memory_per_block) {
    return absl::InvalidArgumentError(absl::StrCat(
        "shared memory of ", info.shared_bytes, " bytes per block exceeds the device's limit of ",
        target.max_shared_memory_per_block));
  }
  info.estimated_registers = static_cast<int>(
      std::min<int64_t>(scan.max_stack_elements + kGpuBaseRegisters, int64_t{1} << 30));
  if (info.estimated_registers > target.max_registers_per_thread) {
    return absl::InvalidArgumentError(absl::StrCat(
        "about ", info.estimated_registers, " registers per thread (", scan.max_stack_elements,
        " for register tiles) exceed the limit of ", target.max_registers_per_thread));
  }
  if (int64_t{info.estimated_registers} * threads > target.registers_per_block) {
    return absl::InvalidArgumentError(
        absl::StrCat("about ", info.estimated_registers, " registers x ", threads,
                     " threads = ", int64_t{info.estimated_registers} * threads,
                     " registers per block exceed the device's ", target.registers_per_block));
  }
  return info;
}

}  // namespace tunefleet
