// Pieces the CUDA templates share: the thread-tile split knob and the
// cooperative load that fills a shared-memory panel with every thread of a
// block.
#ifndef TUNEFLEET_TUNER_CORE_TEMPLATES_GPU_SCHEDULE_H_
#define TUNEFLEET_TUNER_CORE_TEMPLATES_GPU_SCHEDULE_H_

#include <array>
#include <cstdint>
#include <functional>
#include <string>

#include "tuner_core/ir/ir.h"
#include "tuner_core/space/config_space.h"

namespace tunefleet {

// A split into [blocks, threads, per-thread] ("factors": exact divisors) with
// at most `max_threads` threads and `max_inner` elements per thread.
SplitOptions GpuThreadSplit(int64_t max_threads, int64_t max_inner);

struct GpuBlockShape {
  std::array<int64_t, 3> threads = {1, 1, 1};  // threadIdx.x, .y, .z extents
  int64_t count() const { return threads[0] * threads[1] * threads[2]; }
};

// Every thread of the block runs body(e) for e = l * count + t, l = 0, 1, ...,
// covering [0, total) once (the last round guarded when count does not divide
// total). `t` is the linear thread id. Rounds are unrolled up to 8.
ir::Stmt CooperativeLoad(const GpuBlockShape& shape, const std::string& name, int64_t total,
                         const ir::Expr& t, const std::function<ir::Stmt(ir::Expr)>& body);

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_TEMPLATES_GPU_SCHEDULE_H_
