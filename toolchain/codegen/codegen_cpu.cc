// The CPU backend (x86-64, AArch64): the kernel ABI of common/kernel_abi.h.
//
//   i32 @<name>(ptr %args, ptr %runtime)
//
// Parallel loops are outlined into `void @<name>.par.N(i64 %i, ptr %closure)`
// and handed to runtime->parallel_for (the agent owns the threads); global
// allocations come from runtime->alloc_workspace; the prepare/finish stages
// of a staged kernel are entry points of their own.
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/kernel_abi.h"
#include "common/status_macros.h"
#include "toolchain/codegen/codegen_llvm.h"
#include "toolchain/codegen/codegen_targets.h"

namespace tunefleet {
namespace {

using namespace ir;  // NOLINT

// Names a parallel loop body uses, so the outlined function can capture them.
class UsedNames : public IRVisitor {
 public:
  std::set<std::string> vars, buffers;

 protected:
  void VisitVar(const Var* op) override { vars.insert(op->name); }
  void VisitLoad(const Load* op) override {
    buffers.insert(op->buffer);
    IRVisitor::VisitLoad(op);
  }
  void VisitStore(const Store* op) override {
    buffers.insert(op->buffer);
    IRVisitor::VisitStore(op);
  }
  void VisitPrefetch(const Prefetch* op) override {
    buffers.insert(op->buffer);
    IRVisitor::VisitPrefetch(op);
  }
  void VisitOutputReady(const OutputReady* op) override {
    buffers.insert(kEpilogueHookArg);
    IRVisitor::VisitOutputReady(op);
  }
};

class CodeGenCPU : public CodeGenLLVM {
 public:
  CodeGenCPU(const TargetSpec& target, llvm::LLVMContext& context)
      : CodeGenLLVM(target, context, /*index_bits=*/64) {
    runtime_type_ =
        llvm::StructType::create(ctx_, {i32_, i32_, ptr_, ptr_, ptr_, ptr_}, "TfRuntime");
  }

 protected:
  [[nodiscard]] absl::Status EmitFunctions(const LoweredFunc& func) override {
    // Every stage sees the tensors, then the staged buffers.
    std::vector<std::string> arg_names;
    for (const BufferArg& arg : func.args) arg_names.push_back(arg.name);
    for (const StagedBuffer& staged : func.staged) arg_names.push_back(staged.name);
    hook_buffer_.clear();
    if (func.epilogue_hook) {
      if (func.epilogue_buffer.empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat("kernel ", func.name, " has an epilogue hook but no epilogue buffer"));
      }
      arg_names.push_back(kEpilogueHookArg);
      hook_buffer_ = func.epilogue_buffer;
    }
    if (!func.epilogue_inputs.empty()) {
      // The hook's pointer comes first, hook or not.
      if (!func.epilogue_hook) arg_names.push_back(kUnusedHookArg);
      for (const std::string& name : func.epilogue_inputs) arg_names.push_back(name);
    }
    if (func.staged.empty() && (func.prepare.defined() || func.finish.defined())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "kernel ", func.name, " has a prepare or finish stage but no staged buffers"));
    }

    TF_RETURN_IF_ERROR(EmitFunction(func.name, arg_names, func.body));
    if (func.prepare.defined()) {
      TF_RETURN_IF_ERROR(
          EmitFunction(func.name + TF_KERNEL_PREPARE_SUFFIX, arg_names, func.prepare));
    }
    if (func.finish.defined()) {
      TF_RETURN_IF_ERROR(EmitFunction(func.name + TF_KERNEL_FINISH_SUFFIX, arg_names, func.finish));
    }
    if (func.staged.empty()) return absl::OkStatus();
    std::vector<llvm::Constant*> sizes;
    for (const StagedBuffer& staged : func.staged) {
      if (staged.num_elements <= 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("staged buffer ", staged.name, " has ", staged.num_elements, " elements"));
      }
      sizes.push_back(llvm::ConstantInt::get(i64_, staged.num_elements));
    }
    sizes.push_back(llvm::ConstantInt::get(i64_, -1));
    auto* array_type = llvm::ArrayType::get(i64_, sizes.size());
    new llvm::GlobalVariable(
        *module_, array_type, /*isConstant=*/true, llvm::GlobalValue::ExternalLinkage,
        llvm::ConstantArray::get(array_type, sizes), func.name + TF_KERNEL_STAGED_ELEMENTS_SUFFIX);
    return absl::OkStatus();
  }

  // Outlines the loop body into `void body(i64 index, ptr closure)`; the
  // closure is a struct of the runtime pointer, the loop's min, and every
  // variable and buffer the body uses from the enclosing scope.
  void EmitParallelFor(const For* op) override {
    UsedNames used;
    used.Visit(op->body);
    std::vector<std::string> captured_vars, captured_buffers;
    for (const std::string& v : used.vars) {
      if (v != op->var && vars_.Contains(v)) captured_vars.push_back(v);
    }
    for (const std::string& b : used.buffers) {
      if (buffers_.Contains(b)) captured_buffers.push_back(b);
    }
    std::vector<llvm::Type*> fields = {ptr_, i64_};
    for (size_t i = 0; i < captured_vars.size(); ++i) fields.push_back(i64_);
    for (size_t i = 0; i < captured_buffers.size(); ++i) fields.push_back(ptr_);
    llvm::StructType* closure_type = llvm::StructType::get(ctx_, fields);

    // Parent side: fill the closure.
    llvm::Value* min = Emit(op->min);
    llvm::Value* extent = Emit(op->extent);
    llvm::Function* parent = current_function();
    llvm::IRBuilder<> entry_builder(&parent->getEntryBlock(), parent->getEntryBlock().begin());
    llvm::AllocaInst* closure = entry_builder.CreateAlloca(closure_type, nullptr, "closure");
    builder_.CreateStore(runtime_, builder_.CreateStructGEP(closure_type, closure, 0));
    builder_.CreateStore(min, builder_.CreateStructGEP(closure_type, closure, 1));
    int field = 2;
    for (const std::string& v : captured_vars) {
      builder_.CreateStore(vars_.Find(v), builder_.CreateStructGEP(closure_type, closure, field++));
    }
    for (const std::string& b : captured_buffers) {
      builder_.CreateStore(buffers_.Find(b),
                           builder_.CreateStructGEP(closure_type, closure, field++));
    }

    // Child side: the outlined body.
    auto* body_type = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx_), {i64_, ptr_}, false);
    llvm::Function* body_fn =
        llvm::Function::Create(body_type, llvm::Function::InternalLinkage,
                               absl::StrCat(entry_name_, ".par.", parallel_count_++), *module_);
    AddAttributes(body_fn);
    body_fn->addParamAttr(1, llvm::Attribute::NoAlias);
    llvm::IRBuilderBase::InsertPoint saved_ip = builder_.saveIP();
    llvm::Value* saved_runtime = runtime_;
    const bool saved_in_entry = in_entry_function_;
    in_entry_function_ = false;
    builder_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", body_fn));
    llvm::Value* body_closure = body_fn->getArg(1);
    runtime_ = builder_.CreateLoad(ptr_, builder_.CreateStructGEP(closure_type, body_closure, 0),
                                   "runtime");
    llvm::Value* body_min =
        builder_.CreateLoad(i64_, builder_.CreateStructGEP(closure_type, body_closure, 1));
    field = 2;
    for (const std::string& v : captured_vars) {
      vars_.Bind(v, builder_.CreateLoad(
                        i64_, builder_.CreateStructGEP(closure_type, body_closure, field++), v));
    }
    for (const std::string& b : captured_buffers) {
      buffers_.Bind(b, builder_.CreateLoad(
                           ptr_, builder_.CreateStructGEP(closure_type, body_closure, field++), b));
    }
    vars_.Bind(op->var, builder_.CreateNSWAdd(body_min, body_fn->getArg(0), op->var));
    Emit(op->body);
    builder_.CreateRetVoid();
    vars_.Unbind(op->var);
    for (const std::string& v : captured_vars) vars_.Unbind(v);
    for (const std::string& b : captured_buffers) buffers_.Unbind(b);
    runtime_ = saved_runtime;
    in_entry_function_ = saved_in_entry;
    builder_.restoreIP(saved_ip);

    // Parent side: runtime->parallel_for(context, extent, body, closure).
    llvm::Value* context = LoadRuntimeField(TF_RUNTIME_FIELD_CONTEXT);
    llvm::Value* parallel_for = LoadRuntimeField(TF_RUNTIME_FIELD_PARALLEL_FOR);
    auto* pf_type =
        llvm::FunctionType::get(llvm::Type::getVoidTy(ctx_), {ptr_, i64_, ptr_, ptr_}, false);
    builder_.CreateCall(pf_type, parallel_for, {context, extent, body_fn, closure});
  }

  void EmitGpuBoundFor(const For* op) override {
    Fail(absl::StrCat("loop '", op->var, "' is bound to ", ForKindName(op->for_kind),
                      ", which only a CUDA target has"));
  }

  void VisitAllocate(const Allocate* op) override {
    switch (op->scope) {
      case MemoryScope::kShared:
        return Fail(absl::StrCat("shared buffer ", op->buffer, " on a CPU target"));
      case MemoryScope::kStack:
        return EmitStackAllocate(op);
      case MemoryScope::kGlobal:
        return EmitWorkspaceAllocate(op);
    }
  }

  void VisitBarrier(const Barrier*) override {
    Fail("a barrier is only meaningful in a CUDA kernel");
  }

 private:
  // Emits `i32 @<name>(ptr %args, ptr %runtime)` running `body`, with
  // args[i] bound to buffer arg_names[i].
  [[nodiscard]] absl::Status EmitFunction(const std::string& name,
                                          const std::vector<std::string>& arg_names,
                                          const Stmt& body) {
    entry_name_ = name;
    parallel_count_ = 0;
    auto* fn_type = llvm::FunctionType::get(i32_, {ptr_, ptr_}, false);
    llvm::Function* function =
        llvm::Function::Create(fn_type, llvm::Function::ExternalLinkage, name, *module_);
    AddAttributes(function);
    function->getArg(0)->setName("args");
    function->getArg(1)->setName("runtime");
    function->addParamAttr(0, llvm::Attribute::NoAlias);
    function->addParamAttr(1, llvm::Attribute::NoAlias);
    in_entry_function_ = true;

    llvm::BasicBlock* entry = llvm::BasicBlock::Create(ctx_, "entry", function);
    builder_.SetInsertPoint(entry);
    runtime_ = function->getArg(1);
    for (size_t i = 0; i < arg_names.size(); ++i) {
      llvm::Value* slot = builder_.CreateConstInBoundsGEP1_64(ptr_, function->getArg(0), i);
      llvm::LoadInst* p = builder_.CreateLoad(ptr_, slot, arg_names[i]);
      if (arg_names[i] != kEpilogueHookArg && arg_names[i] != kUnusedHookArg) {  // may be NULL
        p->setMetadata(llvm::LLVMContext::MD_nonnull, llvm::MDNode::get(ctx_, {}));
      }
      buffers_.Bind(arg_names[i], p);
    }
    llvm::BasicBlock* return_block = llvm::BasicBlock::Create(ctx_, "return", function);
    alloc_failed_block_ = llvm::BasicBlock::Create(ctx_, "alloc_failed", function);
    {
      llvm::IRBuilder<> b(alloc_failed_block_);
      b.CreateRet(llvm::ConstantInt::get(i32_, 1));
    }

    Emit(body);
    for (const std::string& arg : arg_names) buffers_.Unbind(arg);
    TF_RETURN_IF_ERROR(ErrorStatus());
    builder_.CreateBr(return_block);
    builder_.SetInsertPoint(return_block);
    builder_.CreateRet(llvm::ConstantInt::get(i32_, 0));
    return absl::OkStatus();
  }

  // A kGlobal buffer: runtime->alloc_workspace, freed after its body; a
  // failed allocation returns 1 from the entry point.
  void EmitWorkspaceAllocate(const Allocate* op) {
    if (!in_entry_function_) {
      return Fail(absl::StrCat("global buffer ", op->buffer,
                               " is allocated inside a parallel loop; allocate it outside"));
    }
    const int64_t bytes = op->num_elements * 4;
    llvm::Value* context = LoadRuntimeField(TF_RUNTIME_FIELD_CONTEXT);
    llvm::Value* alloc_fn = LoadRuntimeField(TF_RUNTIME_FIELD_ALLOC_WORKSPACE);
    auto* alloc_type = llvm::FunctionType::get(ptr_, {ptr_, i64_}, false);
    llvm::Value* p = builder_.CreateCall(
        alloc_type, alloc_fn, {context, llvm::ConstantInt::get(i64_, bytes)}, op->buffer);
    llvm::BasicBlock* ok = llvm::BasicBlock::Create(ctx_, "alloc_ok", current_function());
    builder_.CreateCondBr(builder_.CreateIsNull(p), alloc_failed_block_, ok);
    builder_.SetInsertPoint(ok);
    buffers_.Bind(op->buffer, p);
    Emit(op->body);
    buffers_.Unbind(op->buffer);
    llvm::Value* free_fn = LoadRuntimeField(TF_RUNTIME_FIELD_FREE_WORKSPACE);
    auto* free_type = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx_), {ptr_, ptr_}, false);
    builder_.CreateCall(free_type, free_fn, {LoadRuntimeField(TF_RUNTIME_FIELD_CONTEXT), p});
  }

  llvm::Value* LoadRuntimeField(int field) {
    llvm::Value* addr = builder_.CreateStructGEP(runtime_type_, runtime_, field);
    return builder_.CreateLoad(ptr_, addr);
  }

  llvm::StructType* runtime_type_;
  llvm::Value* runtime_ = nullptr;  // the entry's runtime argument, or the closure's copy
  llvm::BasicBlock* alloc_failed_block_ = nullptr;
  bool in_entry_function_ = true;
  int parallel_count_ = 0;
};

}  // namespace

std::unique_ptr<CodeGenLLVM> NewCodeGenCPU(const TargetSpec& target, llvm::LLVMContext& context) {
  return std::make_unique<CodeGenCPU>(target, context);
}

}  // namespace tunefleet
