// The NVPTX backend (CUDA targets): one kernel per module,
//
//   void @<name>(ptr noalias %tensor0, ...)      (common/gpu_artifact.h)
//
// marked as a kernel with its block size (.maxntid); loops bound to
// blockIdx/threadIdx read the special registers, kShared buffers are
// addrspace(3) globals, Barrier is bar.sync 0, and index arithmetic is 32-bit.
// Parallel loops, heap workspaces and staged kernels are rejected.
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "toolchain/codegen/codegen_llvm.h"
#include "toolchain/codegen/codegen_targets.h"

namespace tunefleet {
namespace {

using namespace ir;  // NOLINT

class CodeGenNVPTX : public CodeGenLLVM {
 public:
  // GPUs do 64-bit integer arithmetic in two instructions; every tensor of a
  // CUDA kernel is < 2^31 elements (AnalyzeGpuKernel checks), so index math
  // here is 32-bit.
  CodeGenNVPTX(const TargetSpec& target, const GpuLaunch* launch, llvm::LLVMContext& context)
      : CodeGenLLVM(target, context, /*index_bits=*/32), launch_(launch) {}

 protected:
  // One global pointer per tensor; read-only inputs may go through the
  // non-coherent (texture) cache, ld.global.nc. .maxntid makes ptxas budget
  // registers for exactly the block's threads.
  [[nodiscard]] absl::Status EmitFunctions(const LoweredFunc& func) override {
    if (launch_ == nullptr)
      return absl::InternalError("CUDA code generation needs the launch geometry");
    if (!func.staged.empty() || func.prepare.defined() || func.finish.defined()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "kernel ", func.name, " has untimed stages; CUDA kernels must be self-contained"));
    }
    entry_name_ = func.name;
    std::vector<llvm::Type*> params(func.args.size(), ptr_);
    auto* fn_type = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx_), params, false);
    llvm::Function* kernel =
        llvm::Function::Create(fn_type, llvm::Function::ExternalLinkage, func.name, *module_);
    AddAttributes(kernel);
    for (size_t i = 0; i < func.args.size(); ++i) {
      llvm::Argument* arg = kernel->getArg(i);
      arg->setName(func.args[i].name);
      arg->addAttr(llvm::Attribute::NoAlias);
      if (!func.args[i].is_output) arg->addAttr(llvm::Attribute::ReadOnly);
      buffers_.Bind(func.args[i].name, arg);
    }
    llvm::NamedMDNode* annotations = module_->getOrInsertNamedMetadata("nvvm.annotations");
    auto annotate = [&](const char* key, int64_t value) {
      annotations->addOperand(llvm::MDNode::get(
          ctx_, {llvm::ValueAsMetadata::get(kernel), llvm::MDString::get(ctx_, key),
                 llvm::ValueAsMetadata::get(llvm::ConstantInt::get(i32_, value))}));
    };
    annotate("kernel", 1);
    annotate("maxntidx", launch_->block[0]);
    annotate("maxntidy", launch_->block[1]);
    annotate("maxntidz", launch_->block[2]);

    builder_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", kernel));
    Emit(func.body);
    for (const BufferArg& arg : func.args) buffers_.Unbind(arg.name);
    TF_RETURN_IF_ERROR(ErrorStatus());
    builder_.CreateRetVoid();
    return absl::OkStatus();
  }

  void EmitParallelFor(const For* op) override {
    Fail(absl::StrCat("loop '", op->var,
                      "' is parallel; a CUDA kernel binds its loops to blockIdx/threadIdx"));
  }

  // The loop is the launch: its variable is the block or thread index.
  void EmitGpuBoundFor(const For* op) override {
    static constexpr llvm::Intrinsic::ID kBlock[3] = {llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x,
                                                      llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_y,
                                                      llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_z};
    static constexpr llvm::Intrinsic::ID kThread[3] = {llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x,
                                                       llvm::Intrinsic::nvvm_read_ptx_sreg_tid_y,
                                                       llvm::Intrinsic::nvvm_read_ptx_sreg_tid_z};
    const int axis = GpuAxis(op->for_kind);
    llvm::Value* index = builder_.CreateIntrinsic(
        IsBlockBound(op->for_kind) ? kBlock[axis] : kThread[axis], {}, {}, nullptr, op->var);
    vars_.Bind(op->var, index);
    Emit(op->body);
    vars_.Unbind(op->var);
  }

  // lanes * 4 bytes when `base` is provably a multiple of the lane count
  // (buffers are at least 256-byte aligned here), so ld.v4.f32 is legal.
  llvm::Align VectorAlign(const Expr& base, int lanes) override {
    std::unordered_map<const ExprNode*, bool> memo;  // expressions are DAGs after unrolling
    return DivisibleBy(base, lanes, memo) ? llvm::Align(4 * lanes) : llvm::Align(4);
  }

  void VisitAllocate(const Allocate* op) override {
    switch (op->scope) {
      case MemoryScope::kShared:
        return EmitSharedAllocate(op);
      case MemoryScope::kGlobal:
        return Fail(absl::StrCat("heap workspace ", op->buffer, " in a CUDA kernel"));
      case MemoryScope::kStack:
        return EmitStackAllocate(op);
    }
  }

  void VisitBarrier(const Barrier*) override {
    builder_.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {});
  }
  // A CPU cache hint; GPU kernels stage through shared memory instead.
  void VisitPrefetch(const Prefetch*) override {}

 private:
  // One copy per thread block: an addrspace(3) global of the module.
  void EmitSharedAllocate(const Allocate* op) {
    auto* type = llvm::ArrayType::get(f32_, op->num_elements);
    auto* shared = new llvm::GlobalVariable(
        *module_, type, /*isConstant=*/false, llvm::GlobalValue::InternalLinkage,
        llvm::UndefValue::get(type), absl::StrCat(entry_name_, ".", op->buffer), nullptr,
        llvm::GlobalValue::NotThreadLocal, /*AddressSpace=*/3);
    shared->setAlignment(llvm::Align(16));
    buffers_.Bind(op->buffer, shared);
    Emit(op->body);
    buffers_.Unbind(op->buffer);
  }

  bool DivisibleBy(const Expr& e, int64_t n, std::unordered_map<const ExprNode*, bool>& memo) {
    auto it = memo.find(e.get());
    if (it != memo.end()) return it->second;
    memo[e.get()] = false;  // a let that names itself (let x = x) must not recurse forever
    bool divisible = false;
    if (const IntImm* imm = e.as<IntImm>()) {
      divisible = imm->value % n == 0;
    } else if (const Var* var = e.as<Var>()) {
      const std::vector<Expr>* lets = LetValues(var->name);
      divisible = lets != nullptr && !lets->empty() && DivisibleBy(lets->back(), n, memo);
    } else if (e.kind() == IRNodeKind::kAdd || e.kind() == IRNodeKind::kSub) {
      const auto* bin = static_cast<const BinaryOp*>(e.get());
      divisible = DivisibleBy(bin->a, n, memo) && DivisibleBy(bin->b, n, memo);
    } else if (e.kind() == IRNodeKind::kMul) {
      const auto* bin = static_cast<const BinaryOp*>(e.get());
      divisible = DivisibleBy(bin->a, n, memo) || DivisibleBy(bin->b, n, memo);
    }
    memo[e.get()] = divisible;
    return divisible;
  }

  const GpuLaunch* launch_;
};

}  // namespace

std::unique_ptr<CodeGenLLVM> NewCodeGenNVPTX(const TargetSpec& target, const GpuLaunch* launch,
                                             llvm::LLVMContext& context) {
  return std::make_unique<CodeGenNVPTX>(target, launch, context);
}

}  // namespace tunefleet
