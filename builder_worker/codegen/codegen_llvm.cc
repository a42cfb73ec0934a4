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
  CodeGen(const TargetSpec& target, llvm::LLVMContext& ctx)
      : target_(target), ctx_(ctx), builder_(ctx), mdb_(ctx) {
    f32_ = llvm::Type::getFloatTy(ctx_);
    i64_ = llvm::Type::getInt64Ty(ctx_);
    i32_ = llvm::Type::getInt32Ty(ctx_);
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

    std::string verify_errors;
    llvm::raw_string_ostream os(verify_errors);
    if (llvm::verifyModule(*module_, &os)) {
      return absl::InternalError(absl::StrCat("generated LLVM IR does not verify: ", os.str()));
    }
    return std::move(module_);
  }

 private:
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
    llvm::Type* scalar = t.is_float() ? f32_ : (t.is_int() ? i64_ : i1_);
    return t.lanes == 1 ? scalar : llvm::FixedVectorType::get(scalar, t.lanes);
  }

  void CheckVectorWidth(const Type& t) {
    if (t.lanes > 1 && t.is_float() && t.lanes * 32 > target_.vector_bits) {
      Fail(absl::StrCat("a vector of ", t.lanes, " x float32 (", t.lanes * 32,
                        " bits) is wider than the ", target_.vector_bits,
                        "-bit vector registers of target \"", target_.original, "\""));
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
        return llvm::ConstantInt::get(i64_, e.as<IntImm>()->value, true);
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
        for (int i = 0; i < op->lanes; ++i) steps.push_back(llvm::ConstantInt::get(i64_, i));
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
        llvm::LoadInst* load = builder_.CreateAlignedLoad(LLVMType(op->type), addr, llvm::Align(4));
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
        Emit(op->body);
        vars_.Unbind(op->var);
        return;
      }
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
        builder_.CreateAlignedStore(value, addr, llvm::Align(4))->setMetadata(llvm::LLVMContext::MD_tbaa, tbaa);
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
    }
  }

  void EmitSerialFor(const For* op) {
    llvm::Value* min = Emit(op->min);
    llvm::Value* end = builder_.CreateNSWAdd(min, Emit(op->extent));
    llvm::Function* fn = current_function();
    llvm::BasicBlock* preheader = builder_.GetInsertBlock();
    llvm::BasicBlock* body_bb = llvm::BasicBlock::Create(ctx_, op->var + ".body", fn);
    llvm::BasicBlock* exit_bb = llvm::BasicBlock::Create(ctx_, op->var + ".exit", fn);
    builder_.CreateCondBr(builder_.CreateICmpSLT(min, end), body_bb, exit_bb);

    builder_.SetInsertPoint(body_bb);
    llvm::PHINode* phi = builder_.CreatePHI(i64_, 2, op->var);
    phi->addIncoming(min, preheader);
    vars_.Bind(op->var, phi);
    Emit(op->body);
    vars_.Unbind(op->var);
    llvm::Value* next = builder_.CreateNSWAdd(phi, llvm::ConstantInt::get(i64_, 1));
    phi->addIncoming(next, builder_.GetInsertBlock());
    builder_.CreateCondBr(builder_.CreateICmpSLT(next, end), body_bb, exit_bb);
    builder_.SetInsertPoint(exit_bb);
  }

  // Outlines the loop body into `void body(i64 index, ptr closure)`; the
  // closure is a struct of the runtime pointer, the loop's min, and every
  // variable and buffer the body uses from the enclosing scope.
  void EmitParallelFor(const For* op) {
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
                                                          llvm::LLVMContext& context) {
  CodeGen codegen(target, context);
  return codegen.Compile(func);
}

}  // namespace tunefleet
