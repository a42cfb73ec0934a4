#include "toolchain/codegen/codegen_llvm.h"

#include <algorithm>
#include <functional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/exp_polynomials.h"
#include "common/status_macros.h"

namespace tunefleet {

using namespace ir;  // NOLINT: codegen reads better with bare node names.

void ScopedTable::Unbind(const std::string& name) {
  auto it = table_.find(name);
  it->second.pop_back();
  if (it->second.empty()) table_.erase(it);
}

llvm::Value* ScopedTable::Find(const std::string& name) const {
  auto it = table_.find(name);
  return it == table_.end() ? nullptr : it->second.back();
}

CodeGenLLVM::CodeGenLLVM(const TargetSpec& target, llvm::LLVMContext& context, int index_bits)
    : target_(target), ctx_(context), builder_(context), mdb_(context) {
  f32_ = llvm::Type::getFloatTy(ctx_);
  i64_ = llvm::Type::getInt64Ty(ctx_);
  i32_ = llvm::Type::getInt32Ty(ctx_);
  idx_ = llvm::Type::getIntNTy(ctx_, index_bits);
  i1_ = llvm::Type::getInt1Ty(ctx_);
  ptr_ = llvm::PointerType::getUnqual(ctx_);
  tbaa_root_ = mdb_.createTBAARoot("tunefleet.buffers");
  llvm::FastMathFlags fmf;
  fmf.setAllowContract(true);  // lets the backend fuse a*b+c into FMA
  builder_.setFastMathFlags(fmf);
}

CodeGenLLVM::~CodeGenLLVM() = default;

absl::StatusOr<std::unique_ptr<llvm::Module>> CodeGenLLVM::Compile(const LoweredFunc& func) {
  module_ = std::make_unique<llvm::Module>(func.name, ctx_);
  module_->setTargetTriple(target_.triple);
  TF_RETURN_IF_ERROR(EmitFunctions(func));
  return Verified();
}

absl::StatusOr<std::unique_ptr<llvm::Module>> CodeGenLLVM::Verified() {
  std::string verify_errors;
  llvm::raw_string_ostream os(verify_errors);
  if (llvm::verifyModule(*module_, &os)) {
    return absl::InternalError(absl::StrCat("generated LLVM IR does not verify: ", os.str()));
  }
  return std::move(module_);
}

void CodeGenLLVM::Fail(std::string message) {
  if (error_.empty()) error_ = std::move(message);
}

absl::Status CodeGenLLVM::ErrorStatus() const {
  return error_.empty() ? absl::OkStatus() : absl::InvalidArgumentError(error_);
}

void CodeGenLLVM::AddAttributes(llvm::Function* fn) {
  fn->addFnAttr("target-cpu", target_.cpu);
  if (!target_.features.empty()) fn->addFnAttr("target-features", target_.features);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  // Only divisions flagged arcp take it (FloatDivide's 1 / b).
  fn->addFnAttr("reciprocal-estimates", "divf:1,vec-divf:1");
}

llvm::Align CodeGenLLVM::VectorAlign(const Expr&, int) { return llvm::Align(4); }

const std::vector<Expr>* CodeGenLLVM::LetValues(const std::string& name) const {
  auto it = let_values_.find(name);
  return it == let_values_.end() ? nullptr : &it->second;
}

llvm::MDNode* CodeGenLLVM::TbaaTag(const std::string& buffer) {
  auto it = tbaa_tags_.find(buffer);
  if (it != tbaa_tags_.end()) return it->second;
  llvm::MDNode* type = mdb_.createTBAAScalarTypeNode(absl::StrCat("buffer.", buffer), tbaa_root_);
  llvm::MDNode* tag = mdb_.createTBAAStructTagNode(type, type, 0);
  tbaa_tags_[buffer] = tag;
  return tag;
}

llvm::Type* CodeGenLLVM::LLVMType(const Type& t) {
  llvm::Type* scalar = t.is_float() ? f32_ : (t.is_int() ? idx_ : i1_);
  return t.lanes == 1 ? scalar : llvm::FixedVectorType::get(scalar, t.lanes);
}

void CodeGenLLVM::CheckVectorWidth(const Type& t) {
  if (t.lanes > 1 && t.is_float() && t.lanes * 32 > target_.max_vector_bits) {
    Fail(absl::StrCat("a vector of ", t.lanes, " x float32 (", t.lanes * 32,
                      " bits) is wider than the ", target_.max_vector_bits, " bits target \"",
                      target_.original, "\" takes (", target_.vector_bits, "-bit registers)"));
  }
}

llvm::Value* CodeGenLLVM::BufferPointer(const std::string& name) {
  llvm::Value* p = buffers_.Find(name);
  if (p == nullptr) Fail(absl::StrCat("use of unknown buffer \"", name, "\""));
  return p;
}

// ---- expressions ------------------------------------------------------------

llvm::Value* CodeGenLLVM::Emit(const Expr& e) {
  if (!error_.empty()) return Undef(e.type());
  return VisitExpr(e);
}

llvm::Value* CodeGenLLVM::VisitIntImm(const IntImm* op) {
  return llvm::ConstantInt::get(idx_, op->value, true);
}

llvm::Value* CodeGenLLVM::VisitFloatImm(const FloatImm* op) {
  return llvm::ConstantFP::get(f32_, op->value);
}

llvm::Value* CodeGenLLVM::VisitVar(const Var* op) {
  llvm::Value* v = vars_.Find(op->name);
  if (v == nullptr) {
    Fail(absl::StrCat("use of unbound variable \"", op->name, "\""));
    return Undef(op->type);
  }
  return v;
}

CodeGenLLVM::Operands CodeGenLLVM::EmitOperands(const BinaryOp* op) {
  llvm::Value* a = Emit(op->a);
  llvm::Value* b = Emit(op->b);
  const bool is_float = op->a.type().is_float();
  if (is_float) CheckVectorWidth(op->a.type());
  return {a, b, is_float};
}

// 1 / b (the sigmoids of an epilogue in a kernel's stores) may be the
// target's reciprocal estimate refined by one Newton step (AddAttributes'
// "reciprocal-estimates"; about 1e-7 relative, as the runtime's own
// sigmoids): a vector division costs 3-5 times as much on x86.
llvm::Value* CodeGenLLVM::FloatDivide(const BinaryOp* op, llvm::Value* a, llvm::Value* b) {
  Expr numerator = op->a;
  if (const Broadcast* splat = numerator.as<Broadcast>()) numerator = splat->value;
  const FloatImm* one = numerator.as<FloatImm>();
  if (one == nullptr || one->value != 1.0) return builder_.CreateFDiv(a, b);
  llvm::FastMathFlags flags;
  flags.setAllowReciprocal();
  flags.setNoInfs();  // LLVM estimates only where no operand is infinite: exp is clamped
  llvm::IRBuilder<>::FastMathFlagGuard guard(builder_);
  builder_.setFastMathFlags(flags);
  return builder_.CreateFDiv(a, b);
}

llvm::Value* CodeGenLLVM::Unsupported(const BinaryOp* op, llvm::Value* a) {
  Fail(absl::StrCat("unsupported operation on ", op->a.type().ToString()));
  return llvm::UndefValue::get(a->getType());
}

// Per binary operator (every kind of TUNEFLEET_IR_BINARY_OP_KINDS; a missing
// one leaves its Visit undefined): what integers and bools compile to, then
// what fp32 compiles to.
#define TUNEFLEET_CODEGEN_BINARY_OPS(X)                                     \
  X(Add, builder_.CreateNSWAdd(x.a, x.b), builder_.CreateFAdd(x.a, x.b))    \
  X(Sub, builder_.CreateNSWSub(x.a, x.b), builder_.CreateFSub(x.a, x.b))    \
  X(Mul, builder_.CreateNSWMul(x.a, x.b), builder_.CreateFMul(x.a, x.b))    \
  X(Div, builder_.CreateSDiv(x.a, x.b), FloatDivide(op, x.a, x.b))          \
  X(Mod, builder_.CreateSRem(x.a, x.b), Unsupported(op, x.a))               \
  X(Min, builder_.CreateSelect(builder_.CreateICmpSLT(x.a, x.b), x.a, x.b), \
    builder_.CreateMinNum(x.a, x.b))                                        \
  X(Max, builder_.CreateSelect(builder_.CreateICmpSGT(x.a, x.b), x.a, x.b), \
    builder_.CreateMaxNum(x.a, x.b))                                        \
  X(EQ, builder_.CreateICmpEQ(x.a, x.b), builder_.CreateFCmpOEQ(x.a, x.b))  \
  X(NE, builder_.CreateICmpNE(x.a, x.b), builder_.CreateFCmpUNE(x.a, x.b))  \
  X(LT, builder_.CreateICmpSLT(x.a, x.b), builder_.CreateFCmpOLT(x.a, x.b)) \
  X(LE, builder_.CreateICmpSLE(x.a, x.b), builder_.CreateFCmpOLE(x.a, x.b)) \
  X(And, builder_.CreateAnd(x.a, x.b), Unsupported(op, x.a))                \
  X(Or, builder_.CreateOr(x.a, x.b), Unsupported(op, x.a))

#define TUNEFLEET_CODEGEN_VISIT_BINARY(name, int_op, float_op) \
  llvm::Value* CodeGenLLVM::Visit##name(const BinaryOp* op) {  \
    const Operands x = EmitOperands(op);                       \
    return x.is_float ? (float_op) : (int_op);                 \
  }
TUNEFLEET_CODEGEN_BINARY_OPS(TUNEFLEET_CODEGEN_VISIT_BINARY)
#undef TUNEFLEET_CODEGEN_VISIT_BINARY
#undef TUNEFLEET_CODEGEN_BINARY_OPS

llvm::Value* CodeGenLLVM::VisitNot(const Not* op) { return builder_.CreateNot(Emit(op->a)); }

llvm::Value* CodeGenLLVM::VisitSelect(const Select* op) {
  return builder_.CreateSelect(Emit(op->condition), Emit(op->true_value), Emit(op->false_value));
}

llvm::Value* CodeGenLLVM::VisitCast(const Cast* op) {
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

std::optional<CodeGenLLVM::LaneOffsets> CodeGenLLVM::SplitLaneOffsets(llvm::Value* index,
                                                                      int lanes) {
  if (auto* constant = llvm::dyn_cast<llvm::Constant>(index)) {
    LaneOffsets split{nullptr, std::vector<int64_t>(lanes)};
    for (int i = 0; i < lanes; ++i) {
      auto* lane = llvm::dyn_cast_or_null<llvm::ConstantInt>(constant->getAggregateElement(i));
      if (lane == nullptr) return std::nullopt;
      split.offsets[i] = lane->getSExtValue();
    }
    return split;
  }
  if (llvm::Value* scalar = llvm::getSplatValue(index)) {
    return LaneOffsets{scalar, std::vector<int64_t>(lanes, 0)};
  }
  auto* op = llvm::dyn_cast<llvm::BinaryOperator>(index);
  if (op == nullptr) return std::nullopt;
  std::optional<LaneOffsets> a = SplitLaneOffsets(op->getOperand(0), lanes);
  if (!a) return std::nullopt;
  std::optional<LaneOffsets> b = SplitLaneOffsets(op->getOperand(1), lanes);
  if (!b) return std::nullopt;
  switch (op->getOpcode()) {
    case llvm::Instruction::Add:
    case llvm::Instruction::Sub: {
      const bool add = op->getOpcode() == llvm::Instruction::Add;
      LaneOffsets split{a->scalar, a->offsets};
      if (b->scalar != nullptr) {
        split.scalar = a->scalar == nullptr ? (add ? b->scalar : builder_.CreateNeg(b->scalar))
                                            : (add ? builder_.CreateAdd(a->scalar, b->scalar)
                                                   : builder_.CreateSub(a->scalar, b->scalar));
      }
      for (int i = 0; i < lanes; ++i) split.offsets[i] += add ? b->offsets[i] : -b->offsets[i];
      return split;
    }
    case llvm::Instruction::Mul: {
      // One side a constant splat c: the other's scalar and offsets times c.
      if (b->scalar != nullptr) std::swap(a, b);
      if (b->scalar != nullptr || std::adjacent_find(b->offsets.begin(), b->offsets.end(),
                                                     std::not_equal_to<>()) != b->offsets.end()) {
        return std::nullopt;
      }
      const int64_t c = b->offsets[0];
      LaneOffsets split{a->scalar == nullptr
                            ? nullptr
                            : builder_.CreateMul(a->scalar, llvm::ConstantInt::get(idx_, c)),
                        a->offsets};
      for (int64_t& offset : split.offsets) offset *= c;
      return split;
    }
    default:
      return std::nullopt;
  }
}

llvm::Value* CodeGenLLVM::LoadLaneWindow(llvm::Value* base, const LaneOffsets& split,
                                         llvm::MDNode* tbaa) {
  const int lanes = static_cast<int>(split.offsets.size());
  const auto [lo_it, hi_it] = std::minmax_element(split.offsets.begin(), split.offsets.end());
  const int64_t lo = *lo_it, span = *hi_it - lo + 1;
  if (span > 2 * lanes) return nullptr;  // a sparse gather: per lane
  llvm::Value* start = llvm::ConstantInt::get(idx_, lo);
  if (split.scalar != nullptr) start = builder_.CreateAdd(split.scalar, start);
  llvm::Value* addr = builder_.CreateInBoundsGEP(f32_, base, start);
  if (span == 1) {
    llvm::LoadInst* load = builder_.CreateAlignedLoad(f32_, addr, llvm::Align(4));
    load->setMetadata(llvm::LLVMContext::MD_tbaa, tbaa);
    return builder_.CreateVectorSplat(lanes, load);
  }
  auto* vector = llvm::FixedVectorType::get(f32_, lanes);
  // `count` (<= lanes) floats from `at`: a plain load for a whole vector,
  // else a masked one, so nothing past the window's last element is read.
  auto load_part = [&](llvm::Value* at, int64_t count) -> llvm::Value* {
    llvm::Instruction* load = nullptr;
    if (count == lanes) {
      load = builder_.CreateAlignedLoad(vector, at, llvm::Align(4));
    } else {
      std::vector<llvm::Constant*> mask;
      for (int i = 0; i < lanes; ++i) mask.push_back(builder_.getInt1(i < count));
      load = builder_.CreateMaskedLoad(vector, at, llvm::Align(4), llvm::ConstantVector::get(mask),
                                       llvm::PoisonValue::get(vector));
    }
    load->setMetadata(llvm::LLVMContext::MD_tbaa, tbaa);
    return load;
  };
  llvm::Value* first = load_part(addr, std::min<int64_t>(span, lanes));
  llvm::Value* second =
      span > lanes
          ? load_part(builder_.CreateInBoundsGEP(f32_, addr, llvm::ConstantInt::get(idx_, lanes)),
                      span - lanes)
          : llvm::PoisonValue::get(vector);
  std::vector<int> mask;
  for (int64_t offset : split.offsets) mask.push_back(static_cast<int>(offset - lo));
  return builder_.CreateShuffleVector(first, second, mask);
}

// Scalar index: one element. Unit-stride ramp: one vector access. An index
// of constant lane offsets from one scalar (splat(s) + C, what a ramp
// divided or multiplied by constants folds to) within two vectors' span:
// a load of that window and a shuffle (LoadLaneWindow). Any other vector
// index: per-lane accesses (a gather).
llvm::Value* CodeGenLLVM::VisitLoad(const Load* op) {
  llvm::Value* base = BufferPointer(op->buffer);
  if (base == nullptr) return Undef(op->type);
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
  if (std::optional<LaneOffsets> split = SplitLaneOffsets(index, lanes)) {
    if (llvm::Value* window = LoadLaneWindow(base, *split, tbaa)) return window;
  }
  llvm::Value* result = Undef(op->type);
  for (int i = 0; i < lanes; ++i) {
    llvm::Value* lane_index = builder_.CreateExtractElement(index, uint64_t(i));
    llvm::Value* addr = builder_.CreateInBoundsGEP(f32_, base, lane_index);
    llvm::LoadInst* load = builder_.CreateAlignedLoad(f32_, addr, llvm::Align(4));
    load->setMetadata(llvm::LLVMContext::MD_tbaa, tbaa);
    result = builder_.CreateInsertElement(result, load, uint64_t(i));
  }
  return result;
}

llvm::Value* CodeGenLLVM::VisitRamp(const Ramp* op) {
  llvm::Value* base = builder_.CreateVectorSplat(op->lanes, Emit(op->base));
  llvm::Value* stride = builder_.CreateVectorSplat(op->lanes, Emit(op->stride));
  std::vector<llvm::Constant*> steps;
  for (int i = 0; i < op->lanes; ++i) steps.push_back(llvm::ConstantInt::get(idx_, i));
  return builder_.CreateAdd(base, builder_.CreateMul(stride, llvm::ConstantVector::get(steps)));
}

llvm::Value* CodeGenLLVM::VisitBroadcast(const Broadcast* op) {
  CheckVectorWidth(op->type);
  return builder_.CreateVectorSplat(op->lanes, Emit(op->value));
}

// e^x as the compiled model runtime computes it (common/exp_polynomials.h):
// x clamped to [kExpLow, kExpHigh], n = x log2 e rounded to the nearest,
// r = x - n ln2 (in two parts), e^r = 1 + r + r^2 p(r), times 2^n made from
// n's bits. Straight-line, so it vectorises with the value.
llvm::Value* CodeGenLLVM::VisitExp(const Exp* op) {
  CheckVectorWidth(op->type);
  llvm::Value* x = Emit(op->value);
  llvm::Type* type = x->getType();
  const int lanes = op->type.lanes;
  auto splat = [&](float v) -> llvm::Value* {
    llvm::Constant* c = llvm::ConstantFP::get(f32_, v);
    return lanes == 1 ? c : llvm::ConstantVector::getSplat(llvm::ElementCount::getFixed(lanes), c);
  };
  x = builder_.CreateMinNum(builder_.CreateMaxNum(x, splat(kExpLow)), splat(kExpHigh));
  llvm::Value* n =
      builder_.CreateUnaryIntrinsic(llvm::Intrinsic::rint, builder_.CreateFMul(x, splat(kLog2e)));
  llvm::Value* r = builder_.CreateFSub(x, builder_.CreateFMul(n, splat(kLn2Hi)));
  r = builder_.CreateFSub(r, builder_.CreateFMul(n, splat(kLn2Lo)));
  llvm::Value* p = splat(kExpPoly[0]);
  for (int k = 1; k < kExpPolyTerms; ++k) {
    p = builder_.CreateFAdd(builder_.CreateFMul(p, r), splat(kExpPoly[k]));
  }
  llvm::Value* e = builder_.CreateFAdd(builder_.CreateFMul(builder_.CreateFMul(p, r), r),
                                       builder_.CreateFAdd(r, splat(1.0f)));
  llvm::Type* i32 = builder_.getInt32Ty();
  llvm::Type* int_type =
      lanes == 1 ? i32 : llvm::FixedVectorType::get(i32, static_cast<unsigned>(lanes));
  auto splat_i32 = [&](int v) -> llvm::Value* {
    llvm::Constant* c = llvm::ConstantInt::get(i32, v);
    return lanes == 1 ? c : llvm::ConstantVector::getSplat(llvm::ElementCount::getFixed(lanes), c);
  };
  llvm::Value* bits = builder_.CreateShl(
      builder_.CreateAdd(builder_.CreateFPToSI(n, int_type), splat_i32(127)), splat_i32(23));
  return builder_.CreateFMul(e, builder_.CreateBitCast(bits, type));
}

// ---- statements -------------------------------------------------------------

void CodeGenLLVM::Emit(const Stmt& s) {
  if (!s.defined() || !error_.empty()) return;
  VisitStmt(s);
}

void CodeGenLLVM::VisitFor(const For* op) {
  switch (op->for_kind) {
    case ForKind::kSerial:
      return EmitSerialFor(op);
    case ForKind::kParallel:
      return EmitParallelFor(op);
    case ForKind::kVectorized:
    case ForKind::kUnrolled:
      return Fail(absl::StrCat("loop '", op->var, "' is still ", ForKindName(op->for_kind),
                               "; run VectorizeLoops and UnrollLoops first"));
    case ForKind::kBlockIdxX:
    case ForKind::kBlockIdxY:
    case ForKind::kBlockIdxZ:
    case ForKind::kThreadIdxX:
    case ForKind::kThreadIdxY:
    case ForKind::kThreadIdxZ:
      return EmitGpuBoundFor(op);
  }
}

void CodeGenLLVM::EmitSerialFor(const For* op) {
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

void CodeGenLLVM::VisitStore(const Store* op) {
  llvm::Value* base = BufferPointer(op->buffer);
  if (base == nullptr) return;
  CheckVectorWidth(op->value.type());
  llvm::MDNode* tbaa = TbaaTag(op->buffer);
  llvm::Value* value = Emit(op->value);
  const int lanes = op->value.type().lanes;
  if (lanes == 1) {
    llvm::Value* addr = builder_.CreateInBoundsGEP(f32_, base, Emit(op->index));
    builder_.CreateAlignedStore(value, addr, llvm::Align(4))
        ->setMetadata(llvm::LLVMContext::MD_tbaa, tbaa);
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
    builder_
        .CreateAlignedStore(builder_.CreateExtractElement(value, uint64_t(i)), addr, llvm::Align(4))
        ->setMetadata(llvm::LLVMContext::MD_tbaa, tbaa);
  }
}

void CodeGenLLVM::VisitPrefetch(const Prefetch* op) {
  llvm::Value* base = BufferPointer(op->buffer);
  if (base == nullptr) return;
  // Not inbounds: a prefetch distance may run past the end of the buffer,
  // which is fine for an address that is only prefetched (it never faults).
  llvm::Value* addr = builder_.CreateGEP(f32_, base, Emit(op->index));
  builder_.CreateIntrinsic(
      llvm::Intrinsic::prefetch, {addr->getType()},
      {addr, builder_.getInt32(0), builder_.getInt32(3), builder_.getInt32(1)});
}

void CodeGenLLVM::VisitOutputReady(const OutputReady* op) {
  if (hook_buffer_.empty() || op->buffer != hook_buffer_) return;
  llvm::Value* hook = buffers_.Find(kEpilogueHookArg);
  if (hook == nullptr) return Fail("an epilogue hook is used where it is not bound");
  std::vector<llvm::Value*> region;
  for (const Expr& e : {op->offset, op->rows, op->cols, op->row_stride}) {
    if (e.type().lanes != 1) return Fail("an OutputReady region must be scalar");
    region.push_back(builder_.CreateSExtOrTrunc(Emit(e), i64_));
  }
  // if (hook != NULL) hook->apply(hook, offset, rows, cols, row_stride)
  llvm::Function* fn = current_function();
  llvm::BasicBlock* call = llvm::BasicBlock::Create(ctx_, "epilogue", fn);
  llvm::BasicBlock* after = llvm::BasicBlock::Create(ctx_, "epilogue_done", fn);
  builder_.CreateCondBr(builder_.CreateIsNull(hook), after, call);
  builder_.SetInsertPoint(call);
  llvm::Value* apply = builder_.CreateLoad(ptr_, hook, "epilogue_apply");
  auto* apply_type =
      llvm::FunctionType::get(llvm::Type::getVoidTy(ctx_), {ptr_, i64_, i64_, i64_, i64_}, false);
  builder_.CreateCall(apply_type, apply, {hook, region[0], region[1], region[2], region[3]});
  builder_.CreateBr(after);
  builder_.SetInsertPoint(after);
}

void CodeGenLLVM::VisitBlock(const Block* op) {
  for (const Stmt& child : op->stmts) Emit(child);
}

void CodeGenLLVM::VisitIfThenElse(const IfThenElse* op) {
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

void CodeGenLLVM::VisitLetStmt(const LetStmt* op) {
  llvm::Value* v = Emit(op->value);
  v->setName(op->var);
  vars_.Bind(op->var, v);
  let_values_[op->var].push_back(op->value);
  Emit(op->body);
  let_values_[op->var].pop_back();
  vars_.Unbind(op->var);
}

void CodeGenLLVM::EmitStackAllocate(const Allocate* op) {
  // Largest stack allocation one kernel may ask for (pool threads have 8 MiB
  // stacks; the rest is the kernel's own frame and the caller's).
  constexpr int64_t kMaxStackBytes = 2 << 20;
  const int64_t bytes = op->num_elements * 4;
  if (bytes > kMaxStackBytes) {
    return Fail(absl::StrCat("stack buffer ", op->buffer, " needs ", bytes, " bytes (limit ",
                             kMaxStackBytes, ")"));
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
}

}  // namespace tunefleet
