#include "builder_worker/codegen/codegen_llvm.h"

#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "builder_worker/codegen/llvm_headers.h"
#include "common/kernel_abi.h"
#include "common/status_macros.h"
#include "tuner_core/ir/ir_printer.h"
#include "tuner_core/ir/ir_visitor.h"

namespace tunefleet {
namespace {

using namespace ir;  // NOLINT

// Largest stack allocation one kernel may ask for (pool threads have 8 MiB
// stacks; the rest is the kernel's own frame and the caller's).
constexpr int64_t kMaxStackBytes = 2 << 20;

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
};

// A name -> value table with shadowing: Bind pushes, Unbind pops.
class ScopedTable {
 public:
  void Bind(const std::string& name, llvm::Value* v) { table_[name].push_back(v); }
  void Unbind(const std::string& name) {
    auto it = table_.find(name);
    it->second.pop_back();
    if (it->second.empty()) table_.erase(it);
  }
  llvm::Value* Find(const std::string& name) const {
    auto it = table_.find(name);
    return it == table_.end() ? nullptr : it->second.back();
  }
  bool Contains(const std::string& name) const { return table_.count(name) > 0; }

 private:
  std::unordered_map<std::string, std::vector<llvm::Value*>> table_;
};

class CodeGen {
 public:
  CodeGen(const TargetSpec& target, const GpuLaunch* launch, llvm::LLVMContext& ctx)
      : target_(target), gpu_(target.is_cuda()), launch_(launch), ctx_(ctx), builder_(ctx), mdb_(ctx) {
    f32_ = llvm::Type::getFloatTy(ctx_);
    i64_ = llvm::Type::getInt64Ty(ctx_);
    i32_ = llvm::Type::getInt32Ty(ctx_);
    // GPUs do 64-bit integer arithmetic in two instructions; every tensor of
    // a CUDA kernel is < 2^31 elements (AnalyzeGpuKernel checks), so index
    // math there is 32-bit.
    idx_ = gpu_ ? i32_ : i64_;
    i1_ = llvm::Type::getInt1Ty(ctx_);
    ptr_ = llvm::PointerType::getUnqual(ctx_);
    runtime_type_ = llvm::StructType::create(ctx_, {i32_, i32_, ptr_, ptr_, ptr_, ptr_}, "TfRuntime");
    tbaa_root_ = mdb_.createTBAARoot("tunefleet.buffers");
    llvm::FastMathFlags fmf;
    fmf.setAllowContract(true);  // lets the backend fuse a*b+c into FMA
    builder_.setFastMathFlags(fmf);
  }

  absl::StatusOr<std::unique_ptr<llvm::Module>> Compile(const LoweredFunc& func) {
    module_ = std::make_unique<llvm::Module>(func.name, ctx_);
    module_->setTargetTriple(target_.triple);
    if (gpu_) {
      TF_RETURN_IF_ERROR(EmitKernel(func));
      return Verified();
    }
    // Every stage sees the tensors, then the staged buffers.
    std::vector<std::string> arg_names;
    for (const BufferArg& arg : func.args) arg_names.push_back(arg.name);
    for (const StagedBuffer& staged : func.staged) arg_names.push_back(staged.name);
    if (func.staged.empty() && (func.prepare.defined() || func.finish.defined())) {
      return absl::InvalidArgumentError(
          absl::StrCat("kernel ", func.name, " has a prepare or finish stage but no staged buffers"));
    }

    TF_RETURN_IF_ERROR(EmitFunction(func.name, arg_names, func.body));
    if (func.prepare.defined()) {
      TF_RETURN_IF_ERROR(EmitFunction(func.name + TF_KERNEL_PREPARE_SUFFIX, arg_names, func.prepare));
    }
    if (func.finish.defined()) {
      TF_RETURN_IF_ERROR(EmitFunction(func.name + TF_KERNEL_FINISH_SUFFIX, arg_names, func.finish));
    }
    if (!func.staged.empty()) {
      std::vector<llvm::Constant*> sizes;
      for (const StagedBuffer& staged : func.staged) {
        if (staged.num_elements <= 0) {
          return absl::InvalidArgumentError(absl::StrCat("staged buffer ", staged.name, " has ",
                                                         staged.num_elements, " elements"));
        }
        sizes.push_back(llvm::ConstantInt::get(i64_, staged.num_elements));
      }
      sizes.push_back(llvm::ConstantInt::get(i64_, -1));
      auto* array_type = llvm::ArrayType::get(i64_, sizes.size());
      new llvm::GlobalVariable(*module_, array_type, /*isConstant=*/true,
                               llvm::GlobalValue::ExternalLinkage,
                               llvm::ConstantArray::get(array_type, sizes),
                               func.name + TF_KERNEL_STAGED_ELEMENTS_SUFFIX);
    }
    return Verified();
  }

 private:
  absl::StatusOr<std::unique_ptr<llvm::Module>> Verified() {
    std::string verify_errors;
    llvm::raw_string_ostream os(verify_errors);
    if (llvm::verifyModule(*module_, &os)) {
      return absl::InternalError(absl::StrCat("generated LLVM IR does not verify: ", os.str()));
    }
    return std::move(module_);
  }

  // CUDA: `void @<name>(ptr noalias %t0, ...)`, one global pointer per
  // tensor (common/gpu_artifact.h), marked as a kernel with its block size
  // (.maxntid, so ptxas budgets registers for exactly that many threads).
  absl::Status EmitKernel(const LoweredFunc& func) {
    if (launch_ == nullptr) return absl::InternalError("CUDA code generation needs the launch geometry");
    if (!func.staged.empty() || func.prepare.defined() || func.finish.defined()) {
      return absl::InvalidArgumentError(
          absl::StrCat("kernel ", func.name, " has untimed stages; CUDA kernels must be self-contained"));
    }
    entry_name_ = func.name;
    std::vector<llvm::Type*> params(func.args.size(), ptr_);
    auto* fn_type = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx_), params, false);
    function_ = llvm::Function::Create(fn_type, llvm::Function::ExternalLinkage, func.name, *module_);
    AddAttributes(function_);
    for (size_t i = 0; i < func.args.size(); ++i) {
      llvm::Argument* arg = function_->getArg(i);
      arg->setName(func.args[i].name);
      arg->addAttr(llvm::Attribute::NoAlias);
      // Read-only and not aliased: loads may go through the non-coherent
      // (texture) cache, ld.global.nc.
      if (!func.args[i].is_output) arg->addAttr(llvm::Attribute::ReadOnly);
      buffers_.Bind(func.args[i].name, arg);
    }
    llvm::NamedMDNode* annotations = module_->getOrInsertNamedMetadata("nvvm.annotations");
    auto annotate = [&](const char* key, int64_t value) {
      annotations->addOperand(llvm::MDNode::get(
          ctx_, {llvm::ValueAsMetadata::get(function_), llvm::MDString::get(ctx_, key),
                 llvm::ValueAsMetadata::get(llvm::ConstantInt::get(i32_, value))}));
    };
    annotate("kernel", 1);
    annotate("maxntidx", launch_->block[0]);
    annotate("maxntidy", launch_->block[1]);
    annotate("maxntidz", launch_->block[2]);

    builder_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", function_));
    Emit(func.body);
    for (const BufferArg& arg : func.args) buffers_.Unbind(arg.name);
    if (!error_.empty()) return absl::InvalidArgumentError(error_);
    builder_.CreateRetVoid();
    return absl::OkStatus();
  }

  // Emits `i32 @<name>(ptr %args, ptr %runtime)` running `body`, with
  // args[i] bound to buffer arg_names[i].
  absl::Status EmitFunction(const std::string& name, const std::vector<std::string>& arg_names,
                            const Stmt& body) {
    entry_name_ = name;
    parallel_count_ = 0;
    auto* fn_type = llvm::FunctionType::get(i32_, {ptr_, ptr_}, false);
    function_ = llvm::Function::Create(fn_type, llvm::Function::ExternalLinkage, name, *module_);
    AddAttributes(function_);
    function_->getArg(0)->setName("args");
    function_->getArg(1)->setName("runtime");
    function_->addParamAttr(0, llvm::Attribute::NoAlias);
    function_->addParamAttr(1, llvm::Attribute::NoAlias);
    in_entry_function_ = true;

    llvm::BasicBlock* entry = llvm::BasicBlock::Create(ctx_, "entry", function_);
    builder_.SetInsertPoint(entry);
    runtime_ = function_->getArg(1);
    for (size_t i = 0; i < arg_names.size(); ++i) {
      llvm::Value* slot = builder_.CreateConstInBoundsGEP1_64(ptr_, function_->getArg(0), i);
      llvm::LoadInst* p = builder_.CreateLoad(ptr_, slot, arg_names[i]);
      p->setMetadata(llvm::LLVMContext::MD_nonnull, llvm::MDNode::get(ctx_, {}));
      buffers_.Bind(arg_names[i], p);
    }
    return_block_ = llvm::BasicBlock::Create(ctx_, "return", function_);
    llvm::BasicBlock* fail_block = llvm::BasicBlock::Create(ctx_, "alloc_failed", function_);
    {
      llvm::IRBuilder<> b(fail_block);
      b.CreateRet(llvm::ConstantInt::get(i32_, 1));
    }
    alloc_failed_block_ = fail_block;

    Emit(body);
    for (const std::string& arg : arg_names) buffers_.Unbind(arg);
    if (!error_.empty()) return absl::InvalidArgumentError(error_);
    builder_.CreateBr(return_block_);
    builder_.SetInsertPoint(return_block_);
    builder_.CreateRet(llvm::ConstantInt::get(i32_, 0));
    return absl::OkStatus();
  }

  void Fail(std::string message) {
    if (error_.empty()) error_ = std::move(message);
  }

  void AddAttributes(llvm::Function* fn) {
    fn->addFnAttr("target-cpu", target_.cpu);
    if (!target_.features.empty()) fn->addFnAttr("target-features", target_.features);
    fn->addFnAttr(llvm::Attribute::NoUnwind);
  }

  llvm::MDNode* TbaaTag(const std::string& buffer) {
    auto it = tbaa_tags_.find(buffer);
    if (it != tbaa_tags_.end()) return it->second;
    llvm::MDNode* type = mdb_.createTBAAScalarTypeNode(absl::StrCat("buffer.", buffer), tbaa_root_);
    llvm::MDNode* tag = mdb_.createTBAAStructTagNode(type, type, 0);
    tbaa_tags_[buffer] = tag;
    return tag;
  }

  llvm::Type* LLVMType(const Type& t) {
    llvm::Type* scalar = t.is_float() ? f32_ : (t.is_int() ? idx_ : i1_);
    return t.lanes == 1 ? scalar : llvm::FixedVectorType::get(scalar, t.lanes);
  }

  void CheckVectorWidth(const Type& t) {
    if (t.lanes > 1 && t.is_float() && t.lanes * 32 > target_.max_vector_bits) {
      Fail(absl::StrCat("a vector of ", t.lanes, " x float32 (", t.lanes * 32,
                        " bits) is wider than the ", target_.max_vector_bits,
                        " bits target \"", target_.original, "\" takes (", target_.vector_bits,
                        "-bit registers)"));
    }
  }

  llvm::Value* BufferPointer(const std::string& name) {
    llvm::Value* p = buffers_.Find(name);
    if (p == nullptr) Fail(absl::StrCat("use of unknown buffer \"", name, "\""));
    return p;
  }

  // ---- expressions --------------------------------------------------------
  llvm::Value* Emit(const Expr& e) {
    if (!error_.empty()) return llvm::UndefValue::get(LLVMType(e.type()));
    switch (e.kind()) {
      case IRNodeKind::kIntImm:
        return llvm::ConstantInt::get(idx_, e.as<IntImm>()->value, true);
      case IRNodeKind::kFloatImm:
        return llvm::ConstantFP::get(f32_, e.as<FloatImm>()->value);
      case IRNodeKind::kVar: {
        llvm::Value* v = vars_.Find(e.as<Var>()->name);
        if (v == nullptr) {
          Fail(absl::StrCat("use of unbound variable \"", e.as<Var>()->name, "\""));
          return llvm::UndefValue::get(LLVMType(e.type()));
        }
        return v;
      }
      case IRNodeKind::kNot:
        return builder_.CreateNot(Emit(e.as<Not>()->a));
      case IRNodeKind::kSelect: {
        const Select* op = e.as<Select>();
        return builder_.CreateSelect(Emit(op->condition), Emit(op->true_value), Emit(op->false_value));
      }
      case IRNodeKind::kCast:
        return EmitCast(e.as<Cast>());
      case IRNodeKind::kLoad:
        return EmitLoad(e.as<Load>());
      case IRNodeKind::kRamp: {
        const Ramp* op = e.as<Ramp>();
        llvm::Value* base = builder_.CreateVectorSplat(op->lanes, Emit(op->base));
        llvm::Value* stride = builder_.CreateVectorSplat(op->lanes, Emit(op->stride));
        std::vector<llvm::Constant*> steps;
        for (int i = 0; i < op->lanes; ++i) steps.push_back(llvm::ConstantInt::get(idx_, i));
        return builder_.CreateAdd(base, builder_.CreateMul(stride, llvm::ConstantVector::get(steps)));
      }
      case IRNodeKind::kBroadcast: {
        const Broadcast* op = e.as<Broadcast>();
        CheckVectorWidth(e.type());
        return builder_.CreateVectorSplat(op->lanes, Emit(op->value));
      }
      default:
        return EmitBinary(static_cast<const BinaryOp*>(e.get()));
    }
  }

  llvm::Value* EmitCast(const Cast* op) {
    llvm::Value* v = Emit(op->value);
    const Type& from = op->value.type();
    const Type& to = op->type;
    llvm::Type* dst = LLVMType(to);
    if (from.is_int() && to.is_float()) return builder_.CreateSIToFP(v, dst);
    if (from.is_float() && to.is_int()) return builder_.CreateFPToSI(v, dst);
    if (from.is_bool() && to.is_int()) return builder_.CreateZExt(v, dst);
    if (from.is_bool() && to.is_float()) return builder_.CreateUIToFP(v, dst);
    if (to.is_bool()) {
      return from.is_float() ? builder_.CreateFCmpUNE(v, llvm::Constant::getNullValue(v->getType()))
                             : builder_.CreateICmpNE(v, llvm::Constant::getNullValue(v->getType()));
    }
    return v;
  }

  llvm::Value* EmitBinary(const BinaryOp* op) {
    llvm::Value* a = Emit(op->a);
    llvm::Value* b = Emit(op->b);
    const Type& t = op->a.type();
    if (t.is_float()) {
      CheckVectorWidth(t);
      switch (op->kind) {
        case IRNodeKind::kAdd: return builder_.CreateFAdd(a, b);
        case IRNodeKind::kSub: return builder_.CreateFSub(a, b);
        case IRNodeKind::kMul: return builder_.CreateFMul(a, b);
        case IRNodeKind::kDiv: return builder_.CreateFDiv(a, b);
        case IRNodeKind::kMin: return builder_.CreateMinNum(a, b);
        case IRNodeKind::kMax: return builder_.CreateMaxNum(a, b);
        case IRNodeKind::kEQ: return builder_.CreateFCmpOEQ(a, b);
        case IRNodeKind::kNE: return builder_.CreateFCmpUNE(a, b);
        case IRNodeKind::kLT: return builder_.CreateFCmpOLT(a, b);
        case IRNodeKind::kLE: return builder_.CreateFCmpOLE(a, b);
        default: break;
      }
    } else {
      switch (op->kind) {
        case IRNodeKind::kAdd: return builder_.CreateNSWAdd(a, b);
        case IRNodeKind::kSub: return builder_.CreateNSWSub(a, b);
        case IRNodeKind::kMul: return builder_.CreateNSWMul(a, b);
        case IRNodeKind::kDiv: return builder_.CreateSDiv(a, b);
        case IRNodeKind::kMod: return builder_.CreateSRem(a, b);
        case IRNodeKind::kMin: return builder_.CreateSelect(builder_.CreateICmpSLT(a, b), a, b);
        case IRNodeKind::kMax: return builder_.CreateSelect(builder_.CreateICmpSGT(a, b), a, b);
        case IRNodeKind::kEQ: return builder_.CreateICmpEQ(a, b);
        case IRNodeKind::kNE: return builder_.CreateICmpNE(a, b);
        case IRNodeKind::kLT: return builder_.CreateICmpSLT(a, b);
        case IRNodeKind::kLE: return builder_.CreateICmpSLE(a, b);
        case IRNodeKind::kAnd: return builder_.CreateAnd(a, b);
        case IRNodeKind::kOr: return builder_.CreateOr(a, b);
        default: break;
      }
    }
    Fail(absl::StrCat("unsupported operation on ", t.ToString()));
    return llvm::UndefValue::get(a->getType());
  }

  // Scalar index: one element. Unit-stride ramp: one vector access. Any
  // other vector index: per-lane accesses (a gather or scatter).
  llvm::Value* EmitLoad(const Load* op) {
    llvm::Value* base = BufferPointer(op->buffer);
    if (base == nullptr) return llvm::UndefValue::get(LLVMType(op->type));
    CheckVectorWidth(op->type);
    llvm::MDNode* tbaa = TbaaTag(op->buffer);
    const int lanes = op->type.lanes;
    if (lanes == 1) {
      llvm::Value* addr = builder_.CreateInBoundsGEP(f32_, base, Emit(op->index));
      llvm::LoadInst* load = builder_.CreateAlignedLoad(f32_, addr, llvm::Align(4));
      load->setMetadata(llvm::LLVMContext::MD_tbaa, tbaa);
      return load;
    }
    if (const Ramp* ramp = op->index.as<Ramp>()) {
      const int64_t* stride = AsConstInt(ramp->stride);
      if (stride && *stride == 1) {
        llvm::Value* addr = builder_.CreateInBoundsGEP(f32_, base, Emit(ramp->base));
        llvm::LoadInst* load =
            builder_.CreateAlignedLoad(LLVMType(op->type), addr, VectorAlign(ramp->base, lanes));
        load->setMetadata(llvm::LLVMContext::MD_tbaa, tbaa);
        return load;
      }
    }
    llvm::Value* index = Emit(op->index);
    llvm::Value* result = llvm::UndefValue::get(LLVMType(op->type));
    for (int i = 0; i < lanes; ++i) {
      llvm::Value* lane_index = builder_.CreateExtractElement(index, uint64_t(i));
      llvm::Value* addr = builder_.CreateInBoundsGEP(f32_, base, lane_index);
      llvm::LoadInst* load = builder_.CreateAlignedLoad(f32_, addr, llvm::Align(4));
      load->setMetadata(llvm::LLVMContext::MD_tbaa, tbaa);
      result = builder_.CreateInsertElement(result, load, uint64_t(i));
    }
    return result;
  }

  // ---- statements ---------------------------------------------------------
  void Emit(const Stmt& s) {
    if (!s.defined() || !error_.empty()) return;
    switch (s.kind()) {
      case IRNodeKind::kFor: return EmitFor(s.as<For>());
      case IRNodeKind::kStore: return EmitStore(s.as<Store>());
      case IRNodeKind::kAllocate: return EmitAllocate(s.as<Allocate>());
      case IRNodeKind::kBlock:
        for (const Stmt& child : s.as<Block>()->stmts) Emit(child);
        return;
      case IRNodeKind::kIfThenElse: return EmitIfThenElse(s.as<IfThenElse>());
      case IRNodeKind::kLetStmt: {
        const LetStmt* op = s.as<LetStmt>();
        llvm::Value* v = Emit(op->value);
        v->setName(op->var);
        vars_.Bind(op->var, v);
        let_values_[op->var].push_back(op->value);
        Emit(op->body);
        let_values_[op->var].pop_back();
        vars_.Unbind(op->var);
        return;
      }
      case IRNodeKind::kBarrier:
        if (!gpu_) return Fail("a barrier is only meaningful in a CUDA kernel");
        builder_.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {});
        return;
      default:
        Fail("unknown statement kind");
    }
  }

  void EmitStore(const Store* op) {
    llvm::Value* base = BufferPointer(op->buffer);
    if (base == nullptr) return;
    CheckVectorWidth(op->value.type());
    llvm::MDNode* tbaa = TbaaTag(op->buffer);
    llvm::Value* value = Emit(op->value);
    const int lanes = op->value.type().lanes;
    if (lanes == 1) {
      llvm::Value* addr = builder_.CreateInBoundsGEP(f32_, base, Emit(op->index));
      builder_.CreateAlignedStore(value, addr, llvm::Align(4))->setMetadata(llvm::LLVMContext::MD_tbaa, tbaa);
      return;
    }
    if (const Ramp* ramp = op->index.as<Ramp>()) {
      const int64_t* stride = AsConstInt(ramp->stride);
      if (stride && *stride == 1) {
        llvm::Value* addr = builder_.CreateInBoundsGEP(f32_, base, Emit(ramp->base));
        builder_.CreateAlignedStore(value, addr, VectorAlign(ramp->base, lanes))
            ->setMetadata(llvm::LLVMContext::MD_tbaa, tbaa);
        return;
      }
    }
    llvm::Value* index = Emit(op->index);
    for (int i = 0; i < lanes; ++i) {
      llvm::Value* addr =
          builder_.CreateInBoundsGEP(f32_, base, builder_.CreateExtractElement(index, uint64_t(i)));
      builder_.CreateAlignedStore(builder_.CreateExtractElement(value, uint64_t(i)), addr, llvm::Align(4))
          ->setMetadata(llvm::LLVMContext::MD_tbaa, tbaa);
    }
  }

  void EmitIfThenElse(const IfThenElse* op) {
    llvm::Value* cond = Emit(op->condition);
    llvm::BasicBlock* then_bb = llvm::BasicBlock::Create(ctx_, "then", current_function());
    llvm::BasicBlock* else_bb = op->else_case.defined()
                                    ? llvm::BasicBlock::Create(ctx_, "else", current_function())
                                    : nullptr;
    llvm::BasicBlock* after = llvm::BasicBlock::Create(ctx_, "endif", current_function());
    builder_.CreateCondBr(cond, then_bb, else_bb ? else_bb : after);
    builder_.SetInsertPoint(then_bb);
    Emit(op->then_case);
    builder_.CreateBr(after);
    if (else_bb) {
      builder_.SetInsertPoint(else_bb);
      Emit(op->else_case);
      builder_.CreateBr(after);
    }
    builder_.SetInsertPoint(after);
  }

  void EmitAllocate(const Allocate* op) {
    const int64_t bytes = op->num_elements * 4;
    if (op->scope == MemoryScope::kShared) {
      if (!gpu_) return Fail(absl::StrCat("shared buffer ", op->buffer, " on a CPU target"));
      auto* type = llvm::ArrayType::get(f32_, op->num_elements);
      auto* shared = new llvm::GlobalVariable(
          *module_, type, /*isConstant=*/false, llvm::GlobalValue::InternalLinkage,
          llvm::UndefValue::get(type), absl::StrCat(entry_name_, ".", op->buffer), nullptr,
          llvm::GlobalValue::NotThreadLocal, /*AddressSpace=*/3);
      shared->setAlignment(llvm::Align(16));
      buffers_.Bind(op->buffer, shared);
      Emit(op->body);
      buffers_.Unbind(op->buffer);
      return;
    }
    if (op->scope == MemoryScope::kGlobal && gpu_) {
      return Fail(absl::StrCat("heap workspace ", op->buffer, " in a CUDA kernel"));
    }
    if (op->scope == MemoryScope::kStack) {
      if (bytes > kMaxStackBytes) {
        Fail(absl::StrCat("stack buffer ", op->buffer, " needs ", bytes, " bytes (limit ",
                          kMaxStackBytes, ")"));
        return;
      }
      // Entry-block allocas are what SROA/mem2reg promote to registers.
      llvm::Function* fn = current_function();
      llvm::IRBuilder<> entry_builder(&fn->getEntryBlock(), fn->getEntryBlock().begin());
      llvm::AllocaInst* alloca =
          entry_builder.CreateAlloca(llvm::ArrayType::get(f32_, op->num_elements), nullptr, op->buffer);
      alloca->setAlignment(llvm::Align(64));
      buffers_.Bind(op->buffer, alloca);
      Emit(op->body);
      buffers_.Unbind(op->buffer);
      return;
    }
    if (!in_entry_function_) {
      Fail(absl::StrCat("global buffer ", op->buffer,
                        " is allocated inside a parallel loop; allocate it outside"));
      return;
    }
    llvm::Value* context = LoadRuntimeField(TF_RUNTIME_FIELD_CONTEXT);
    llvm::Value* alloc_fn = LoadRuntimeField(TF_RUNTIME_FIELD_ALLOC_WORKSPACE);
    auto* alloc_type = llvm::FunctionType::get(ptr_, {ptr_, i64_}, false);
    llvm::Value* p = builder_.CreateCall(alloc_type, alloc_fn,
                                         {context, llvm::ConstantInt::get(i64_, bytes)}, op->buffer);
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

  void EmitFor(const For* op) {
    switch (op->for_kind) {
      case ForKind::kSerial:
        return EmitSerialFor(op);
      case ForKind::kParallel:
        return EmitParallelFor(op);
      case ForKind::kVectorized:
      case ForKind::kUnrolled:
        Fail(absl::StrCat("loop '", op->var, "' is still ", ForKindName(op->for_kind),
                          "; run VectorizeLoops and UnrollLoops first"));
        return;
      default:
        return EmitGpuBoundFor(op);
    }
  }

  // The loop is the launch: its variable is the block or thread index.
  void EmitGpuBoundFor(const For* op) {
    if (!gpu_) {
      return Fail(absl::StrCat("loop '", op->var, "' is bound to ", ForKindName(op->for_kind),
                               ", which only a CUDA target has"));
    }
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

  // Alignment of a unit-stride vector access at element `base`: lanes * 4
  // bytes on CUDA when base is provably a multiple of the lane count (buffers
  // are at least 256-byte aligned there), so ld.v4.f32 is legal; 4 otherwise.
  llvm::Align VectorAlign(const Expr& base, int lanes) {
    if (!gpu_) return llvm::Align(4);
    std::unordered_map<const ExprNode*, bool> memo;  // expressions are DAGs after unrolling
    return DivisibleBy(base, lanes, memo) ? llvm::Align(4 * lanes) : llvm::Align(4);
  }

  bool DivisibleBy(const Expr& e, int64_t n, std::unordered_map<const ExprNode*, bool>& memo) {
    auto it = memo.find(e.get());
    if (it != memo.end()) return it->second;
    memo[e.get()] = false;  // a let that names itself (let x = x) must not recurse forever
    bool divisible = false;
    if (const IntImm* imm = e.as<IntImm>()) {
      divisible = imm->value % n == 0;
    } else if (const Var* var = e.as<Var>()) {
      auto let = let_values_.find(var->name);
      divisible = let != let_values_.end() && !let->second.empty() &&
                  DivisibleBy(let->second.back(), n, memo);
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

  void EmitSerialFor(const For* op) {
    llvm::Value* min = Emit(op->min);
    if (!error_.empty()) return;
    llvm::Value* end = builder_.CreateNSWAdd(min, Emit(op->extent));
    llvm::Function* fn = current_function();
    llvm::BasicBlock* preheader = builder_.GetInsertBlock();
    llvm::BasicBlock* body_bb = llvm::BasicBlock::Create(ctx_, op->var + ".body", fn);
    llvm::BasicBlock* exit_bb = llvm::BasicBlock::Create(ctx_, op->var + ".exit", fn);
    builder_.CreateCondBr(builder_.CreateICmpSLT(min, end), body_bb, exit_bb);

    builder_.SetInsertPoint(body_bb);
    llvm::PHINode* phi = builder_.CreatePHI(idx_, 2, op->var);
    phi->addIncoming(min, preheader);
    vars_.Bind(op->var, phi);
    Emit(op->body);
    vars_.Unbind(op->var);
    llvm::Value* next = builder_.CreateNSWAdd(phi, llvm::ConstantInt::get(idx_, 1));
    phi->addIncoming(next, builder_.GetInsertBlock());
    builder_.CreateCondBr(builder_.CreateICmpSLT(next, end), body_bb, exit_bb);
    builder_.SetInsertPoint(exit_bb);
  }

  // Outlines the loop body into `void body(i64 index, ptr closure)`; the
  // closure is a struct of the runtime pointer, the loop's min, and every
  // variable and buffer the body uses from the enclosing scope.
  void EmitParallelFor(const For* op) {
    if (gpu_) {
      return Fail(absl::StrCat("loop '", op->var,
                               "' is parallel; a CUDA kernel binds its loops to blockIdx/threadIdx"));
    }
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
      builder_.CreateStore(buffers_.Find(b), builder_.CreateStructGEP(closure_type, closure, field++));
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
    runtime_ = builder_.CreateLoad(ptr_, builder_.CreateStructGEP(closure_type, body_closure, 0), "runtime");
    llvm::Value* body_min = builder_.CreateLoad(i64_, builder_.CreateStructGEP(closure_type, body_closure, 1));
    field = 2;
    for (const std::string& v : captured_vars) {
      vars_.Bind(v, builder_.CreateLoad(i64_, builder_.CreateStructGEP(closure_type, body_closure, field++), v));
    }
    for (const std::string& b : captured_buffers) {
      buffers_.Bind(b, builder_.CreateLoad(ptr_, builder_.CreateStructGEP(closure_type, body_closure, field++), b));
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
    auto* pf_type = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx_), {ptr_, i64_, ptr_, ptr_}, false);
    builder_.CreateCall(pf_type, parallel_for, {context, extent, body_fn, closure});
  }

  llvm::Function* current_function() { return builder_.GetInsertBlock()->getParent(); }

  const TargetSpec& target_;
  const bool gpu_;
  const GpuLaunch* launch_;
  llvm::LLVMContext& ctx_;
  llvm::IRBuilder<> builder_;
  llvm::MDBuilder mdb_;
  std::unique_ptr<llvm::Module> module_;
  llvm::Function* function_ = nullptr;
  llvm::Value* runtime_ = nullptr;
  llvm::BasicBlock* return_block_ = nullptr;
  llvm::BasicBlock* alloc_failed_block_ = nullptr;
  bool in_entry_function_ = true;
  std::string entry_name_;
  int parallel_count_ = 0;

  llvm::Type *f32_, *i64_, *i32_, *i1_;
  llvm::Type* idx_;  // the IR's integer type: i64 on CPUs, i32 on GPUs
  std::unordered_map<std::string, std::vector<Expr>> let_values_;
  llvm::PointerType* ptr_;
  llvm::StructType* runtime_type_;
  llvm::MDNode* tbaa_root_;
  std::unordered_map<std::string, llvm::MDNode*> tbaa_tags_;

  ScopedTable vars_, buffers_;
  std::string error_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<llvm::Module>> CodegenLLVM(const ir::LoweredFunc& func,
                                                          const TargetSpec& target,
                                                          llvm::LLVMContext& context,
                                                          const GpuLaunch* launch) {
  CodeGen codegen(target, launch, context);
  return codegen.Compile(func);
}

}  // namespace tunefleet
