// The loop-nest IR that templates produce and that both the cost model's
// features and the code generator consume.
//
// A kernel is a LoweredFunc: named tensor arguments plus one statement tree
// of loops (serial, parallel, vectorized, unrolled, GPU-bound), stores,
// allocations of scratch buffers (heap workspace, stack/registers, GPU shared
// memory), conditionals, lets, GPU barriers and cache prefetches.
// Expressions are index arithmetic (int64), fp32 arithmetic, comparisons,
// loads, and the vector forms Ramp/Broadcast that VectorizeLoops introduces.
//
// Nodes are immutable and shared (std::shared_ptr<const Node>). The node
// kinds are one list (TUNEFLEET_IR_EXPR_KINDS / TUNEFLEET_IR_STMT_KINDS
// below) from which the visitors (ir_visitor.h) and the mutator
// (ir_mutator.h) are generated. Passes are IRMutators that rebuild only what
// they change. Buffers are flat: an index is the element offset, computed by
// the template.
//
//   using namespace tunefleet::ir;
//   Expr m = Var::Make("m"), k = Var::Make("k");
//   Stmt s = For::Make("k", 0, K, ForKind::kSerial,
//                      Store::Make("C", Load::Make("C", m) + Load::Make("A", m * K + k), m));
#ifndef TUNEFLEET_TUNER_CORE_IR_IR_H_
#define TUNEFLEET_TUNER_CORE_IR_IR_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tunefleet::ir {

enum class ScalarType { kInt64, kFloat32, kBool };

struct Type {
  ScalarType scalar = ScalarType::kInt64;
  int lanes = 1;

  static Type Int(int lanes = 1) { return {ScalarType::kInt64, lanes}; }
  static Type Float(int lanes = 1) { return {ScalarType::kFloat32, lanes}; }
  static Type Bool(int lanes = 1) { return {ScalarType::kBool, lanes}; }
  Type WithLanes(int new_lanes) const { return {scalar, new_lanes}; }
  bool is_int() const { return scalar == ScalarType::kInt64; }
  bool is_float() const { return scalar == ScalarType::kFloat32; }
  bool is_bool() const { return scalar == ScalarType::kBool; }
  bool is_vector() const { return lanes > 1; }
  int bits() const { return scalar == ScalarType::kBool ? 1 : (is_int() ? 64 : 32); }
  bool operator==(const Type& o) const { return scalar == o.scalar && lanes == o.lanes; }
  bool operator!=(const Type& o) const { return !(*this == o); }
  std::string ToString() const;
};

// ---------------------------------------------------------------------------
// Node kinds: ONE list. The IRNodeKind enum, the per-kind Visit methods of
// ExprFunctor/StmtFunctor/IRVisitor/IRMutator (ir_visitor.h, ir_mutator.h)
// and their dispatch switches are all generated from it, so adding a kind
// here makes every consumer that does not handle it fail to compile.
// X(Name, NodeType): IRNodeKind::kName, node struct NodeType (the binary
// operators share one struct, BinaryOp, and differ by kind).
// clang-format off
#define TUNEFLEET_IR_BINARY_OP_KINDS(X)                                           \
  X(Add, BinaryOp) X(Sub, BinaryOp) X(Mul, BinaryOp) X(Div, BinaryOp)             \
  X(Mod, BinaryOp) X(Min, BinaryOp) X(Max, BinaryOp) X(EQ, BinaryOp)              \
  X(NE, BinaryOp) X(LT, BinaryOp) X(LE, BinaryOp) X(And, BinaryOp) X(Or, BinaryOp)

#define TUNEFLEET_IR_EXPR_KINDS(X)                                                \
  X(IntImm, IntImm) X(FloatImm, FloatImm) X(Var, Var)                             \
  TUNEFLEET_IR_BINARY_OP_KINDS(X)                                                 \
  X(Not, Not) X(Select, Select) X(Cast, Cast) X(Load, Load) X(Ramp, Ramp)         \
  X(Broadcast, Broadcast) X(Exp, Exp)

#define TUNEFLEET_IR_STMT_KINDS(X)                                                \
  X(For, For) X(Store, Store) X(Allocate, Allocate) X(Block, Block)               \
  X(IfThenElse, IfThenElse) X(LetStmt, LetStmt) X(Barrier, Barrier)          \
  X(Prefetch, Prefetch) X(OutputReady, OutputReady)

enum class IRNodeKind {
#define TUNEFLEET_IR_ENUMERATOR(name, node) k##name,
  TUNEFLEET_IR_EXPR_KINDS(TUNEFLEET_IR_ENUMERATOR)
  TUNEFLEET_IR_STMT_KINDS(TUNEFLEET_IR_ENUMERATOR)
#undef TUNEFLEET_IR_ENUMERATOR
};

// clang-format on

#define TUNEFLEET_IR_COUNT_KIND(name, node) +1
inline constexpr int kNumExprKinds = 0 TUNEFLEET_IR_EXPR_KINDS(TUNEFLEET_IR_COUNT_KIND);
inline constexpr int kNumStmtKinds = 0 TUNEFLEET_IR_STMT_KINDS(TUNEFLEET_IR_COUNT_KIND);
#undef TUNEFLEET_IR_COUNT_KIND
inline constexpr int kNumIRNodeKinds = kNumExprKinds + kNumStmtKinds;
// "Add", "For", ...: the kind's name in the list.
const char* IRNodeKindName(IRNodeKind kind);
bool IsExprKind(IRNodeKind kind);
// Aborts: a dispatch met an Expr handle holding a statement kind or vice
// versa, which only a bug in this library can cause.
[[noreturn]] void UnreachableNodeKind(IRNodeKind kind, const char* where);

// The dispatch switch of the generated visitors and mutator: define
// TUNEFLEET_IR_DISPATCH_CALL(Name, NodeType) as the call for one kind, then
// TUNEFLEET_IR_SWITCH_EXPR(e) / TUNEFLEET_IR_SWITCH_STMT(s) returns it for
// the handle's kind (a kind of the other family aborts). No default: a kind
// added to the list is dispatched everywhere.
#define TUNEFLEET_IR_RETURN_CASE(name, node) \
  case IRNodeKind::k##name:                  \
    return TUNEFLEET_IR_DISPATCH_CALL(name, node);
#define TUNEFLEET_IR_NO_CASE(name, node) case IRNodeKind::k##name:
#define TUNEFLEET_IR_SWITCH_EXPR(handle)                 \
  switch ((handle).kind()) {                             \
    TUNEFLEET_IR_EXPR_KINDS(TUNEFLEET_IR_RETURN_CASE)    \
    TUNEFLEET_IR_STMT_KINDS(TUNEFLEET_IR_NO_CASE) break; \
  }                                                      \
  ::tunefleet::ir::UnreachableNodeKind((handle).kind(), __func__)
#define TUNEFLEET_IR_SWITCH_STMT(handle)                 \
  switch ((handle).kind()) {                             \
    TUNEFLEET_IR_STMT_KINDS(TUNEFLEET_IR_RETURN_CASE)    \
    TUNEFLEET_IR_EXPR_KINDS(TUNEFLEET_IR_NO_CASE) break; \
  }                                                      \
  ::tunefleet::ir::UnreachableNodeKind((handle).kind(), __func__)

struct ExprNode {
  ExprNode(IRNodeKind k, Type t) : kind(k), type(t) {}
  virtual ~ExprNode() = default;
  const IRNodeKind kind;
  const Type type;
};

struct StmtNode {
  explicit StmtNode(IRNodeKind k) : kind(k) {}
  virtual ~StmtNode() = default;
  const IRNodeKind kind;
};

// A handle to an immutable expression node, with arithmetic operators so
// templates read like the math they build.
class Expr {
 public:
  Expr() = default;
  Expr(std::shared_ptr<const ExprNode> node) : node_(std::move(node)) {}  // NOLINT
  Expr(int64_t value);                                                    // NOLINT: IntImm
  Expr(int value);                                                        // NOLINT: IntImm
  Expr(double value);                                                     // NOLINT: FloatImm (fp32)

  bool defined() const { return node_ != nullptr; }
  const ExprNode* get() const { return node_.get(); }
  const ExprNode* operator->() const { return node_.get(); }
  const Type& type() const { return node_->type; }
  IRNodeKind kind() const { return node_->kind; }
  bool same_as(const Expr& other) const { return node_ == other.node_; }

  template <typename T>
  const T* as() const {
    return (node_ && node_->kind == T::kKind) ? static_cast<const T*>(node_.get()) : nullptr;
  }

 private:
  std::shared_ptr<const ExprNode> node_;
};

class Stmt {
 public:
  Stmt() = default;
  Stmt(std::shared_ptr<const StmtNode> node) : node_(std::move(node)) {}  // NOLINT

  bool defined() const { return node_ != nullptr; }
  const StmtNode* get() const { return node_.get(); }
  const StmtNode* operator->() const { return node_.get(); }
  IRNodeKind kind() const { return node_->kind; }
  bool same_as(const Stmt& other) const { return node_ == other.node_; }

  template <typename T>
  const T* as() const {
    return (node_ && node_->kind == T::kKind) ? static_cast<const T*>(node_.get()) : nullptr;
  }

 private:
  std::shared_ptr<const StmtNode> node_;
};

// ---------------------------------------------------------------------------
// Expressions.

struct IntImm : ExprNode {
  static constexpr IRNodeKind kKind = IRNodeKind::kIntImm;
  explicit IntImm(int64_t v) : ExprNode(kKind, Type::Int()), value(v) {}
  static Expr Make(int64_t v);
  const int64_t value;
};

struct FloatImm : ExprNode {
  static constexpr IRNodeKind kKind = IRNodeKind::kFloatImm;
  explicit FloatImm(double v) : ExprNode(kKind, Type::Float()), value(v) {}
  static Expr Make(double v);
  const double value;
};

// A loop variable or let-bound name. Variables are int64 scalars unless a
// pass binds them to a vector (then their type says so).
struct Var : ExprNode {
  static constexpr IRNodeKind kKind = IRNodeKind::kVar;
  Var(std::string n, Type t) : ExprNode(kKind, t), name(std::move(n)) {}
  static Expr Make(const std::string& name, Type type = Type::Int());
  const std::string name;
};

// Add, Sub, Mul, Div, Mod, Min, Max, EQ, NE, LT, LE, And, Or. Div and Mod
// are integer division and remainder on non-negative operands (index math)
// or fp32 division (Mod is integer-only).
struct BinaryOp : ExprNode {
  BinaryOp(IRNodeKind k, Type t, Expr x, Expr y)
      : ExprNode(k, t), a(std::move(x)), b(std::move(y)) {}
  // Builds the node; a scalar operand meeting a vector one is broadcast.
  static Expr Make(IRNodeKind kind, Expr a, Expr b);
  static bool IsBinary(IRNodeKind kind);
  const Expr a, b;
};

struct Not : ExprNode {
  static constexpr IRNodeKind kKind = IRNodeKind::kNot;
  explicit Not(Expr x) : ExprNode(kKind, x.type()), a(std::move(x)) {}
  static Expr Make(Expr a);
  const Expr a;
};

struct Select : ExprNode {
  static constexpr IRNodeKind kKind = IRNodeKind::kSelect;
  Select(Type t, Expr c, Expr x, Expr y)
      : ExprNode(kKind, t),
        condition(std::move(c)),
        true_value(std::move(x)),
        false_value(std::move(y)) {}
  static Expr Make(Expr condition, Expr true_value, Expr false_value);
  const Expr condition, true_value, false_value;
};

struct Cast : ExprNode {
  static constexpr IRNodeKind kKind = IRNodeKind::kCast;
  Cast(Type t, Expr v) : ExprNode(kKind, t), value(std::move(v)) {}
  static Expr Make(Type type, Expr value);
  const Expr value;
};

// Loads element(s) `index` of fp32 buffer `buffer`. A vector index (Ramp or
// any vector) loads a vector.
struct Load : ExprNode {
  static constexpr IRNodeKind kKind = IRNodeKind::kLoad;
  Load(std::string buf, Expr idx)
      : ExprNode(kKind, Type::Float(idx.type().lanes)),
        buffer(std::move(buf)),
        index(std::move(idx)) {}
  static Expr Make(const std::string& buffer, Expr index);
  const std::string buffer;
  const Expr index;
};

// base, base + stride, ..., base + (lanes-1)*stride.
struct Ramp : ExprNode {
  static constexpr IRNodeKind kKind = IRNodeKind::kRamp;
  Ramp(Expr b, Expr s, int l)
      : ExprNode(kKind, b.type().WithLanes(l)),
        base(std::move(b)),
        stride(std::move(s)),
        lanes(l) {}
  static Expr Make(Expr base, Expr stride, int lanes);
  const Expr base, stride;
  const int lanes;
};

struct Broadcast : ExprNode {
  static constexpr IRNodeKind kKind = IRNodeKind::kBroadcast;
  Broadcast(Expr v, int l)
      : ExprNode(kKind, v.type().WithLanes(l)), value(std::move(v)), lanes(l) {}
  static Expr Make(Expr value, int lanes);
  const Expr value;
  const int lanes;
};

// e^x of an fp32 value (or vector): the code generator's own (the
// polynomial of common/exp_polynomials.h, no libm call, vectorised), what
// the sigmoid, SiLU, tanh and GELU an epilogue computes in a kernel's
// stores are made of (toolchain/passes/fuse_epilogue.h). CPU targets only.
struct Exp : ExprNode {
  static constexpr IRNodeKind kKind = IRNodeKind::kExp;
  explicit Exp(Expr x) : ExprNode(kKind, x.type()), value(std::move(x)) {}
  static Expr Make(Expr value);
  const Expr value;
};

// ---------------------------------------------------------------------------
// Statements.

enum class ForKind {
  kSerial,
  kParallel,    // iterations run on the loader's thread pool
  kVectorized,  // constant extent; becomes vector code (VectorizeLoops)
  kUnrolled,    // constant extent; body replicated (UnrollLoops)
  // GPU-bound (CUDA targets only): constant extent, min 0; the loop becomes
  // the block or thread index of that axis and the extent the launch's grid
  // or block size along it. Each kind may appear several times in a kernel,
  // always with the same extent.
  kBlockIdxX,
  kBlockIdxY,
  kBlockIdxZ,
  kThreadIdxX,
  kThreadIdxY,
  kThreadIdxZ,
};
const char* ForKindName(ForKind kind);
bool IsGpuBound(ForKind kind);
bool IsBlockBound(ForKind kind);   // blockIdx.{x,y,z}
bool IsThreadBound(ForKind kind);  // threadIdx.{x,y,z}
int GpuAxis(ForKind kind);         // 0, 1, 2 for x, y, z; -1 if not GPU-bound

struct For : StmtNode {
  static constexpr IRNodeKind kKind = IRNodeKind::kFor;
  For(std::string v, Expr mn, Expr ext, ForKind k, Stmt b)
      : StmtNode(kKind),
        var(std::move(v)),
        min(std::move(mn)),
        extent(std::move(ext)),
        for_kind(k),
        body(std::move(b)) {}
  static Stmt Make(const std::string& var, Expr min, Expr extent, ForKind kind, Stmt body);
  const std::string var;
  const Expr min, extent;
  const ForKind for_kind;
  const Stmt body;
};

struct Store : StmtNode {
  static constexpr IRNodeKind kKind = IRNodeKind::kStore;
  Store(std::string buf, Expr v, Expr idx)
      : StmtNode(kKind), buffer(std::move(buf)), value(std::move(v)), index(std::move(idx)) {}
  static Stmt Make(const std::string& buffer, Expr value, Expr index);
  const std::string buffer;
  const Expr value, index;
};

enum class MemoryScope {
  kGlobal,  // heap workspace from the runtime (large packed operands)
  kStack,   // function-local: register tiles and small per-thread panels
  kShared,  // GPU shared memory: one copy per thread block (CUDA targets only)
};

// A fp32 scratch buffer of `num_elements` (a constant) live within `body`.
struct Allocate : StmtNode {
  static constexpr IRNodeKind kKind = IRNodeKind::kAllocate;
  Allocate(std::string buf, int64_t n, MemoryScope s, Stmt b)
      : StmtNode(kKind), buffer(std::move(buf)), num_elements(n), scope(s), body(std::move(b)) {}
  static Stmt Make(const std::string& buffer, int64_t num_elements, MemoryScope scope, Stmt body);
  const std::string buffer;
  const int64_t num_elements;
  const MemoryScope scope;
  const Stmt body;
};

struct Block : StmtNode {
  static constexpr IRNodeKind kKind = IRNodeKind::kBlock;
  explicit Block(std::vector<Stmt> s) : StmtNode(kKind), stmts(std::move(s)) {}
  // Flattens nested blocks and drops undefined statements.
  static Stmt Make(std::vector<Stmt> stmts);
  const std::vector<Stmt> stmts;
};

struct IfThenElse : StmtNode {
  static constexpr IRNodeKind kKind = IRNodeKind::kIfThenElse;
  IfThenElse(Expr c, Stmt t, Stmt e)
      : StmtNode(kKind),
        condition(std::move(c)),
        then_case(std::move(t)),
        else_case(std::move(e)) {}
  static Stmt Make(Expr condition, Stmt then_case, Stmt else_case = Stmt());
  const Expr condition;
  const Stmt then_case, else_case;  // else_case may be undefined
};

struct LetStmt : StmtNode {
  static constexpr IRNodeKind kKind = IRNodeKind::kLetStmt;
  LetStmt(std::string v, Expr val, Stmt b)
      : StmtNode(kKind), var(std::move(v)), value(std::move(val)), body(std::move(b)) {}
  static Stmt Make(const std::string& var, Expr value, Stmt body);
  const std::string var;
  const Expr value;
  const Stmt body;
};

// All threads of a GPU thread block wait here until every one has arrived and
// their shared-memory writes are visible (CUDA's __syncthreads()).
struct Barrier : StmtNode {
  static constexpr IRNodeKind kKind = IRNodeKind::kBarrier;
  Barrier() : StmtNode(kKind) {}
  static Stmt Make();
};

// A hint that element `index` (a scalar) of `buffer` will be read soon: the
// cache line holding it is fetched into the nearest cache (llvm.prefetch,
// read, locality 3; x86 PREFETCHT0, AArch64 PRFM PLDL1KEEP). It reads
// nothing and cannot fault, so the index may point past the buffer (a
// prefetch distance running over the end of a panel). A no-op on GPUs.
struct Prefetch : StmtNode {
  static constexpr IRNodeKind kKind = IRNodeKind::kPrefetch;
  Prefetch(std::string buf, Expr idx)
      : StmtNode(kKind), buffer(std::move(buf)), index(std::move(idx)) {}
  static Stmt Make(const std::string& buffer, Expr index);
  const std::string buffer;
  const Expr index;
};

// Marks elements of output `buffer` final: `rows` runs of `cols` elements,
// the first at `offset`, each `row_stride` after the one before (scalars).
// A template places it where a region of its output is written for the
// last time, so a kernel compiled with an epilogue hook
// (LoweredFunc::epilogue_hook) applies its epilogue there, while the region
// is still in cache (common/kernel_abi.h: TfEpilogue). Without the hook it
// emits nothing.
struct OutputReady : StmtNode {
  static constexpr IRNodeKind kKind = IRNodeKind::kOutputReady;
  OutputReady(std::string buf, Expr o, Expr r, Expr c, Expr s)
      : StmtNode(kKind),
        buffer(std::move(buf)),
        offset(std::move(o)),
        rows(std::move(r)),
        cols(std::move(c)),
        row_stride(std::move(s)) {}
  static Stmt Make(const std::string& buffer, Expr offset, Expr rows, Expr cols, Expr row_stride);
  const std::string buffer;
  const Expr offset, rows, cols, row_stride;
};

// ---------------------------------------------------------------------------
// A complete kernel: what a template instantiates for one config.
struct BufferArg {
  std::string name;
  std::vector<int64_t> shape;
  bool is_output = false;
  int64_t NumElements() const;
};

// A buffer that persists across calls of a kernel, passed after the tensor
// arguments: what a kernel's untimed stages hand to its timed body (weights
// packed once, as a network compiled in a blocked layout packs them at
// compile time; activations already in the blocked layout, as the previous
// layer of such a network leaves them).
struct StagedBuffer {
  std::string name;
  int64_t num_elements = 0;
};

struct LoweredFunc {
  std::string name;             // exported entry symbol
  std::vector<BufferArg> args;  // inputs then outputs, the workload's order
  Stmt body;                    // the timed kernel
  // Optional untimed stages around the timed body (common/kernel_abi.h):
  // `prepare` runs once before the timed calls (reads the inputs, fills the
  // staged buffers), `finish` once after (reads staged buffers, writes the
  // outputs). Both undefined and `staged` empty for a self-contained kernel.
  std::vector<StagedBuffer> staged;
  Stmt prepare;
  Stmt finish;
  // When set, the kernel takes one more pointer after its staged buffers, a
  // TfEpilogue or NULL, and calls it at each OutputReady of
  // `epilogue_buffer` in its timed body (common/kernel_abi.h).
  bool epilogue_hook = false;
  std::string epilogue_buffer;
  // Buffers an epilogue computed in the kernel's stores reads (its bias,
  // its residual: toolchain/passes/fuse_epilogue.h), passed after the
  // epilogue hook's pointer, which such a kernel takes (and ignores) even
  // without a hook.
  std::vector<std::string> epilogue_inputs;
};

// ---------------------------------------------------------------------------
// Operators and helpers.
Expr operator+(Expr a, Expr b);
Expr operator-(Expr a, Expr b);
Expr operator*(Expr a, Expr b);
Expr operator/(Expr a, Expr b);
Expr operator%(Expr a, Expr b);
Expr operator<(Expr a, Expr b);
Expr operator<=(Expr a, Expr b);
Expr operator>(Expr a, Expr b);
Expr operator>=(Expr a, Expr b);
Expr operator&&(Expr a, Expr b);
Expr operator||(Expr a, Expr b);
Expr operator!(Expr a);
Expr EQ(Expr a, Expr b);
Expr NE(Expr a, Expr b);
Expr Min(Expr a, Expr b);
Expr Max(Expr a, Expr b);

// Constant value of an IntImm, or nullptr.
const int64_t* AsConstInt(const Expr& e);

}  // namespace tunefleet::ir

#endif  // TUNEFLEET_TUNER_CORE_IR_IR_H_
