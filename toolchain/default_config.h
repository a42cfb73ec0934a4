// The config a task gets with no measurement to go by (AutoTVM's fallback
// config, chosen per target rather than fixed): vectors as wide as the
// target's, channel blocks of one vector and register tiles of about 8
// output columns (two vectors by about 6 where the target has 16 vector
// registers; about 12 with one vector for group_conv2d_nchwc.x86, whose
// columns share no broadcast); a convolution's "reduce" order by its
// template and shape; for dense, the dot kernel for a few rows (the weights read
// in place) or the weights packed once, the tasks in the order that rereads
// less memory; every other knob its first choice;
// and one the builder would build for the target (the template instantiates
// it and its register tile fits the target's vector registers,
// register_fit.h). The compiler uses it for layers no record covers; local
// tuning measures it first in every task, so a task's records are never
// worse than what an untuned compile gets.
#ifndef TUNEFLEET_TOOLCHAIN_DEFAULT_CONFIG_H_
#define TUNEFLEET_TOOLCHAIN_DEFAULT_CONFIG_H_

#include "absl/status/statusor.h"
#include "toolchain/codegen/target.h"
#include "tuner_core/space/config_space.h"
#include "tuner_core/templates/task.h"

namespace tunefleet {

// The f32 lanes of the target's vectors (4 on NEON, 8 with AVX2, 16 with
// AVX-512).
int TargetVectorLanes(const TargetSpec& target);

// How a default convolution's register tile is chosen: kTarget by the
// target's vector registers (with 32, AVX-512's and NEON's, one vector of
// output channels by about 8 columns; with 16, AVX2's, two vectors by about
// 6, in channel blocks of two vectors), kOneVector one vector by about 8
// whatever the target: the narrower blocks a compiled model may prefer
// where its neighbours cannot take two vectors (compiler/layout_choice.h).
enum class DefaultTile { kTarget, kOneVector };

// Whether DefaultTile's two choices differ on `target` (only where it has
// 16 vector registers or fewer).
bool DefaultTilesDiffer(const TargetSpec& target);

// `lanes`: the f32 lanes of the target's vectors. InvalidArgument naming the
// task when no config of its space can be built for the target.
[[nodiscard]] absl::StatusOr<Config> DefaultConfig(const Task& task, int lanes,
                                                   DefaultTile tile = DefaultTile::kTarget);

}  // namespace tunefleet

#endif  // TUNEFLEET_TOOLCHAIN_DEFAULT_CONFIG_H_
