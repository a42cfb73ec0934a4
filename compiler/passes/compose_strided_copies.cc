#include "compiler/passes/compose_strided_copies.h"

#include <cstdint>
#include <vector>

#include "compiler/passes/buffer_use.h"
#include "tuner_core/graph/static_shapes.h"

namespace tunefleet {
namespace {

// `second` reading the output of `first` (row-major over first.out_shape)
// as its first operand rewritten to read first's input there: its strides
// and offset, or false where an axis of `second` does not move along one
// axis of first's output without carrying.
bool Compose(const PlanStep& first, PlanStep* second) {
  const std::vector<int64_t>& mid = first.out_shape;
  const int64_t rank = static_cast<int64_t>(mid.size());
  if (rank == 0 || first.a_strides.size() != mid.size() ||
      second->a_strides.size() != second->out_shape.size()) {
    return false;
  }
  const std::vector<int64_t> mid_strides = RowMajorStrides(mid);
  // Where the second copy starts, in the intermediate's coordinates.
  std::vector<int64_t> reach(rank, 0);
  int64_t rest = second->a_offset;
  if (rest < 0 || rest >= mid_strides[0] * mid[0]) return false;
  for (int64_t e = 0; e < rank; ++e) {
    reach[e] = rest / mid_strides[e];
    rest %= mid_strides[e];
  }
  int64_t offset = first.a_offset;
  for (int64_t e = 0; e < rank; ++e) offset += reach[e] * first.a_strides[e];
  std::vector<int64_t> strides(second->a_strides.size(), 0);
  for (size_t d = 0; d < strides.size(); ++d) {
    const int64_t s = second->a_strides[d], n = second->out_shape[d];
    if (n == 1 || s == 0) continue;  // stays put: no stride needed
    if (s < 0 || n < 1) return false;
    int64_t e = 0;  // the outermost axis whose step fits in s
    while (e < rank && mid_strides[e] > s) ++e;
    if (e == rank || s % mid_strides[e] != 0) return false;
    const int64_t k = s / mid_strides[e];
    reach[e] += k * (n - 1);
    strides[d] = k * first.a_strides[e];
  }
  for (int64_t e = 0; e < rank; ++e) {
    if (reach[e] >= mid[e]) return false;  // it would carry into the next axis
  }
  second->a_strides = std::move(strides);
  second->a_offset = offset;
  second->inputs[0] = first.inputs[0];
  return true;
}

}  // namespace

int ComposeStridedCopies(ModelPlan* plan) {
  const BufferUse use = BufferUseOf(*plan);
  LastWriters writer(*plan);
  std::vector<bool> dropped(plan->steps.size(), false);
  int composed = 0;
  for (size_t j = 0; j < plan->steps.size(); ++j) {
    PlanStep& second = plan->steps[j];
    // A copy, or an element-wise step's first operand (the attention's
    // q / sqrt(d) on q's heads), read through strides.
    const bool reads_strided = (second.op == StepOp::kStridedCopy && second.inputs.size() == 1) ||
                               (second.op == StepOp::kBroadcast && second.inputs.size() == 2 &&
                                second.inputs[1] != second.inputs[0]);
    if (reads_strided) {
      const int mid = second.inputs[0];
      const PlanBuffer& buffer = plan->buffers[mid];
      const int i = writer.Of(mid);
      if (i >= 0 && !dropped[i] && !use.pinned[mid] && use.writers[mid] == 1 &&
          use.readers[mid] == 1 && buffer.alias_of < 0 && !use.view_root[mid] &&
          buffer.is_plain()) {
        const PlanStep& first = plan->steps[i];
        const bool copy = first.op == StepOp::kStridedCopy && first.inputs.size() == 1 &&
                          first.outputs.size() == 1;
        // first's input is read at step j now: nothing may write it (or
        // its root, through another view) in between.
        const bool input_kept = copy && writer.Of(first.inputs[0]) < i;
        int64_t elements = 1;
        for (int64_t d : first.out_shape) elements *= d;
        if (input_kept && elements == buffer.elements && Compose(first, &second)) {
          dropped[i] = true;
          ++composed;
        }
      }
    }
    writer.Wrote(static_cast<int>(j));
  }
  EraseSteps(plan, dropped);
  return composed;
}

}  // namespace tunefleet
