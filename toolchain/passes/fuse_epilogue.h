// FuseEpilogueIntoStores computes a compiled model's kernel epilogue,
// y = act(y + bias[c] + residual[i]), in the kernel's own final stores of
// its output (tuner_core/ir/final_store.h marks them), on the value still in
// a register: no pass over the output after the kernel, no call per region
// as an epilogue hook makes. It runs on the instantiated kernel, before
// lowering, so the bias and residual loads vectorise with the stores.
//
// It fuses only where every store to the output is a marked final store
// (at least one): a template or a path of one that does not mark its stores
// (Winograd's output transform, say) keeps the pass after the kernel. With
// no epilogue asked for, or where it does not fuse, it only removes the
// marks. The fused kernel reads the bias and the residual from pointers
// passed after its epilogue hook's (LoweredFunc::epilogue_inputs).
#ifndef TUNEFLEET_TOOLCHAIN_PASSES_FUSE_EPILOGUE_H_
#define TUNEFLEET_TOOLCHAIN_PASSES_FUSE_EPILOGUE_H_

#include <string>

#include "tuner_core/ir/ir.h"

namespace tunefleet {

// The activations a store computes: the cheap ones in a few vector
// instructions, the others from the code generator's exp (ir::Exp) with the
// runtime's formulas (compiler/runtime/exp_activations.cc).
enum class StoreActivation {
  kNone,
  kRelu,
  kClip,         // min(max(y, alpha), beta)
  kLeakyRelu,    // y < 0 ? alpha y : y
  kHardSigmoid,  // max(0, min(1, alpha y + beta))
  kHardSwish,    // y max(0, min(1, alpha y + beta))
  kExp,
  kSigmoid,   // 1 / (1 + e^-y)
  kSilu,      // y / (1 + e^-y)
  kTanh,      // 1 - 2 / (1 + e^2y)
  kGelu,      // y (1 + erf(y / sqrt 2)) / 2, erf as Abramowitz & Stegun 7.1.26
  kGeluTanh,  // y / (1 + e^-2u), u = sqrt(2 / pi) (y + 0.044715 y^3)
  kElu,       // y < 0 ? alpha (e^y - 1) : y
};
inline constexpr int kNumStoreActivations = 13;

struct StoreEpilogue {
  std::string buffer;     // the output whose final stores compute it
  bool bias = false;      // + bias[channel] (kEpilogueBiasArg)
  bool residual = false;  // + residual[index], laid out as the output (kEpilogueResidualArg)
  StoreActivation activation = StoreActivation::kNone;
  float alpha = 0, beta = 0;
};

inline constexpr char kEpilogueBiasArg[] = "epilogue_bias";
inline constexpr char kEpilogueResidualArg[] = "epilogue_residual";

// Removes every final-store mark of func->body and, given `epilogue`,
// rewrites the marked stores to epilogue->buffer to compute it, setting
// func->epilogue_inputs to the buffers it reads. Returns whether it fused.
bool FuseEpilogueIntoStores(ir::LoweredFunc* func, const StoreEpilogue* epilogue);

// `stmt` with every final-store mark removed (what lowering does first).
ir::Stmt RemoveFinalStoreMarks(const ir::Stmt& stmt);

}  // namespace tunefleet

#endif  // TUNEFLEET_TOOLCHAIN_PASSES_FUSE_EPILOGUE_H_
