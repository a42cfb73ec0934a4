// CodeGenLLVM: the target-independent core of code generation (Halide's
// CodeGen_LLVM, TVM's CodeGenLLVM). A visitor over the loop-nest IR, after
// VectorizeLoops and UnrollLoops (see lower.h), returning llvm::Value* for
// expressions: serial loops become blocks with a phi, loads and stores carry
// one TBAA type per buffer (distinct buffers never alias), unit-stride ramps
// become vector loads and stores, other vector indices per-lane accesses.
//
// What a kernel is on a given target (its entry point and ABI, parallel and
// GPU-bound loops, allocations, barriers) is left to the target backends in
// codegen_targets.h; use CodegenLLVM() there, not this class, to compile.
//
// A vector wider than TargetSpec::max_vector_bits is rejected as
// InvalidArgument, so the builder can report INSTANTIATION_ERROR.
#ifndef TUNEFLEET_TOOLCHAIN_CODEGEN_CODEGEN_LLVM_H_
#define TUNEFLEET_TOOLCHAIN_CODEGEN_CODEGEN_LLVM_H_

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "toolchain/codegen/llvm_headers.h"
#include "toolchain/codegen/target.h"
#include "tuner_core/ir/ir.h"
#include "tuner_core/ir/ir_visitor.h"

namespace tunefleet {

// A name -> value table with shadowing: Bind pushes, Unbind pops.
class ScopedTable {
 public:
  void Bind(const std::string& name, llvm::Value* v) { table_[name].push_back(v); }
  void Unbind(const std::string& name);
  llvm::Value* Find(const std::string& name) const;
  bool Contains(const std::string& name) const { return table_.count(name) > 0; }

 private:
  std::unordered_map<std::string, std::vector<llvm::Value*>> table_;
};

// The name the epilogue hook's pointer is bound to among the buffers.
inline constexpr char kEpilogueHookArg[] = "__epilogue_hook";
// Its slot in a kernel that takes epilogue inputs but no hook (read, unused).
inline constexpr char kUnusedHookArg[] = "__unused_epilogue_hook";

class CodeGenLLVM : public ir::ExprFunctor<llvm::Value*>, public ir::StmtFunctor<void> {
 public:
  ~CodeGenLLVM() override;

  // Lowers `func` into a new module for the target and verifies it.
  [[nodiscard]] absl::StatusOr<std::unique_ptr<llvm::Module>> Compile(const ir::LoweredFunc& func);

 protected:
  // `index_bits`: width of the IR's integer (index) type on this target.
  CodeGenLLVM(const TargetSpec& target, llvm::LLVMContext& context, int index_bits);

  // ---- what each target defines -------------------------------------------
  // Adds the function(s) implementing `func` to module_.
  [[nodiscard]] virtual absl::Status EmitFunctions(const ir::LoweredFunc& func) = 0;
  virtual void EmitParallelFor(const ir::For* op) = 0;
  // A loop bound to blockIdx/threadIdx.
  virtual void EmitGpuBoundFor(const ir::For* op) = 0;
  // Alignment of a unit-stride vector access starting at element `base`.
  virtual llvm::Align VectorAlign(const ir::Expr& base, int lanes);
  // VisitAllocate and VisitBarrier (StmtFunctor) are left to the targets too.

  // ---- for the targets ----------------------------------------------------
  // Emit* stop emitting (returning undef) once an error has been recorded.
  llvm::Value* Emit(const ir::Expr& e);
  void Emit(const ir::Stmt& s);
  // Records the first error; Compile returns it as InvalidArgument.
  void Fail(std::string message);
  bool failed() const { return !error_.empty(); }
  [[nodiscard]] absl::Status ErrorStatus() const;
  // target-cpu, target-features, nounwind.
  void AddAttributes(llvm::Function* fn);
  // A kStack allocation: an entry-block alloca (what SROA/mem2reg promote to
  // registers), bound to the buffer's name while `op->body` is emitted.
  void EmitStackAllocate(const ir::Allocate* op);
  llvm::Function* current_function() { return builder_.GetInsertBlock()->getParent(); }
  // The values a let binds, innermost last (for divisibility proofs).
  const std::vector<ir::Expr>* LetValues(const std::string& name) const;

  const TargetSpec& target_;
  llvm::LLVMContext& ctx_;
  llvm::IRBuilder<> builder_;
  std::unique_ptr<llvm::Module> module_;
  std::string entry_name_;  // the function being emitted, for derived names
  llvm::Type *f32_, *i64_, *i32_, *i1_;
  llvm::Type* idx_;  // the IR's integer type on this target
  llvm::PointerType* ptr_;
  ScopedTable vars_, buffers_;
  // The output buffer whose OutputReady calls the hook, bound in buffers_
  // as kEpilogueHookArg; empty: no hook.
  std::string hook_buffer_;

  // ---- expressions ----------------------------------------------------------
  llvm::Value* VisitIntImm(const ir::IntImm* op) override;
  llvm::Value* VisitFloatImm(const ir::FloatImm* op) override;
  llvm::Value* VisitVar(const ir::Var* op) override;
#define TUNEFLEET_CODEGEN_DECLARE_BINARY(name, node) \
  llvm::Value* Visit##name(const ir::BinaryOp* op) override;
  TUNEFLEET_IR_BINARY_OP_KINDS(TUNEFLEET_CODEGEN_DECLARE_BINARY)
#undef TUNEFLEET_CODEGEN_DECLARE_BINARY
  llvm::Value* VisitNot(const ir::Not* op) override;
  llvm::Value* VisitSelect(const ir::Select* op) override;
  llvm::Value* VisitCast(const ir::Cast* op) override;
  llvm::Value* VisitLoad(const ir::Load* op) override;
  llvm::Value* VisitRamp(const ir::Ramp* op) override;
  llvm::Value* VisitBroadcast(const ir::Broadcast* op) override;
  llvm::Value* VisitExp(const ir::Exp* op) override;

  // ---- statements -----------------------------------------------------------
  void VisitFor(const ir::For* op) override;
  void VisitStore(const ir::Store* op) override;
  void VisitBlock(const ir::Block* op) override;
  void VisitIfThenElse(const ir::IfThenElse* op) override;
  void VisitLetStmt(const ir::LetStmt* op) override;
  // llvm.prefetch (read, locality 3, data cache) of the element's line.
  void VisitPrefetch(const ir::Prefetch* op) override;
  // A call of the epilogue hook (common/kernel_abi.h: TfEpilogue) when the
  // target bound one for op->buffer (hook_buffer_), nothing otherwise.
  void VisitOutputReady(const ir::OutputReady* op) override;

 private:
  struct Operands {
    llvm::Value* a;
    llvm::Value* b;
    bool is_float;
  };
  // Emits both operands (left first); checks the width of float vectors.
  Operands EmitOperands(const ir::BinaryOp* op);
  // An operator the IR allows but this type does not (e.g. fp32 Mod).
  llvm::Value* Unsupported(const ir::BinaryOp* op, llvm::Value* a);
  llvm::Value* FloatDivide(const ir::BinaryOp* op, llvm::Value* a, llvm::Value* b);
  llvm::Value* Undef(const ir::Type& t) { return llvm::UndefValue::get(LLVMType(t)); }
  llvm::Type* LLVMType(const ir::Type& t);
  void CheckVectorWidth(const ir::Type& t);
  llvm::Value* BufferPointer(const std::string& name);
  llvm::MDNode* TbaaTag(const std::string& buffer);
  void EmitSerialFor(const ir::For* op);
  // A vector index as a scalar plus constant per-lane offsets (nullptr: 0),
  // through constants, splats and sums, differences and constant multiples
  // of them; nullopt for any other index.
  struct LaneOffsets {
    llvm::Value* scalar = nullptr;
    std::vector<int64_t> offsets;
  };
  std::optional<LaneOffsets> SplitLaneOffsets(llvm::Value* index, int lanes);
  // The lanes base[scalar + offsets[i]], loaded as one window of the
  // buffer spanning the offsets (at most two vectors, masked past the last
  // offset) and shuffled into place; nullptr for a wider span.
  llvm::Value* LoadLaneWindow(llvm::Value* base, const LaneOffsets& split, llvm::MDNode* tbaa);
  [[nodiscard]] absl::StatusOr<std::unique_ptr<llvm::Module>> Verified();

  llvm::MDBuilder mdb_;
  llvm::MDNode* tbaa_root_;
  std::unordered_map<std::string, llvm::MDNode*> tbaa_tags_;
  std::unordered_map<std::string, std::vector<ir::Expr>> let_values_;
  std::string error_;
};

}  // namespace tunefleet

#endif  // TUNEFLEET_TOOLCHAIN_CODEGEN_CODEGEN_LLVM_H_
