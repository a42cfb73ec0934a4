// LoopNestAnalysis: what every loop of a kernel's loop nest does to memory,
// the raw material of the `itervar` and `curve` features (AutoTVM's touch
// extractor). One walk over the IR that a template instantiated for a config
// gives, per loop: its extent (an upper bound when the extent depends on outer
// loops), its kind, how often it runs, and for each buffer accessed beneath
// it the accesses, the distinct bytes touched, the reuse and the stride.
//
//   TF_ASSIGN_OR_RETURN(ir::LoweredFunc func, tmpl.Instantiate(workload, config));
//   TF_ASSIGN_OR_RETURN(LoopNestAnalysis nest, AnalyzeLoopNest(func));
//
// Index expressions are read as linear forms in the enclosing loop variables
// (Min/Max/Select take their first value, Div and Mod by constants scale and
// keep the coefficient), which is exact for the affine indices templates
// write and a close estimate for the guarded edge code. Both branches of a
// conditional are counted. Cost is linear in the IR size times the nest depth.
#ifndef TUNEFLEET_TUNER_CORE_FEATURES_LOOP_NEST_ANALYSIS_H_
#define TUNEFLEET_TUNER_CORE_FEATURES_LOOP_NEST_ANALYSIS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tuner_core/ir/ir.h"

namespace tunefleet::features {

// Loops nested deeper than this are rejected (InvalidArgument).
inline constexpr int kMaxLoopDepth = 32;

// What one execution of a loop (all its iterations) does to one buffer.
struct BufferTouch {
  int buffer = 0;       // index into LoopNestAnalysis::buffers
  double accesses = 0;  // loads + stores executed
  double bytes = 0;     // distinct bytes touched (estimate)
  double stride = 0;    // elements between consecutive iterations; 0: not indexed by this loop
  double Reuse() const { return bytes > 0 ? accesses * 4.0 / bytes : 0; }
};

struct LoopInfo {
  std::string var;     // the loop variable's name
  int depth = 0;       // 0 for an outermost loop
  int parent = -1;     // index of the enclosing loop in LoopNestAnalysis::loops; -1: none
  int64_t extent = 0;  // constant, or an upper bound
  ir::ForKind kind = ir::ForKind::kSerial;
  double iterations = 0;  // product of the extents from the outermost loop down to this one
  std::vector<BufferTouch> touches;  // in first-touch order
};

struct LoopNestAnalysis {
  std::vector<std::string> buffers;  // names, in first-touch order
  std::vector<LoopInfo> loops;       // pre-order (outer before inner, program order)
};

// InvalidArgument for a function without a body or a nest deeper than
// kMaxLoopDepth.
[[nodiscard]] absl::StatusOr<LoopNestAnalysis> AnalyzeLoopNest(const ir::LoweredFunc& func);

}  // namespace tunefleet::features

#endif  // TUNEFLEET_TUNER_CORE_FEATURES_LOOP_NEST_ANALYSIS_H_
