// A template's last store of an output element, marked so that a compiled
// model can compute its kernel's epilogue (y = act(y + bias[c] + residual))
// in that store, on the value still in a register, instead of in a pass
// over the output after the kernel (toolchain/passes/fuse_epilogue.h).
//
//   Stmt s = FinalStore("out", Load::Make("acc", i), out_index, occ * oc_bn + o);
//
// The mark is two LetStmts around the Store, binding kFinalStoreChannel to
// the element's output channel and, for a store that is final only on some
// iterations (a reduction split into passes that leave partial sums in the
// output), kFinalStoreWhen to the condition under which it is. Nothing
// reads the variables: the builder removes the marks before lowering
// (FuseEpilogueIntoStores), rewriting the marked stores where it fuses an
// epilogue, so a kernel built for measurement is what it was unmarked.
#ifndef TUNEFLEET_TUNER_CORE_IR_FINAL_STORE_H_
#define TUNEFLEET_TUNER_CORE_IR_FINAL_STORE_H_

#include <optional>
#include <string>

#include "tuner_core/ir/ir.h"

namespace tunefleet {
namespace ir {

inline constexpr char kFinalStoreChannel[] = "final_store.channel";
inline constexpr char kFinalStoreWhen[] = "final_store.when";

// Store(buffer, value, index), marked final for the output channel
// `channel`; with `when` defined, final only where `when` holds (a bool).
Stmt FinalStore(const std::string& buffer, Expr value, Expr index, Expr channel,
                Expr when = Expr());

// The parts of a marked store (its outer LetStmt); nullopt when `let` is
// not one (or null).
struct FinalStoreParts {
  const Store* store = nullptr;
  Expr channel;
  Expr when;  // undefined: final always
};
std::optional<FinalStoreParts> MatchFinalStore(const LetStmt* let);

}  // namespace ir
}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_IR_FINAL_STORE_H_
