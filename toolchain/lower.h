// The ordered list of IR passes between a template's loop nest and code
// generation (Halide's Lower.cpp): final-store marks removed (an epilogue
// fused into them by the builder first: passes/fuse_epilogue.h), vectorize,
// then unroll. Each pass is one
// file under passes/.
#ifndef TUNEFLEET_TOOLCHAIN_LOWER_H_
#define TUNEFLEET_TOOLCHAIN_LOWER_H_

#include "absl/status/statusor.h"
#include "tuner_core/ir/ir.h"

namespace tunefleet {

[[nodiscard]] absl::StatusOr<ir::LoweredFunc> Lower(const ir::LoweredFunc& func);

}  // namespace tunefleet

#endif  // TUNEFLEET_TOOLCHAIN_LOWER_H_
