#include "compiler/passes/alias_slices.h"

#include <cstdint>
#include <vector>

#include "compiler/passes/buffer_use.h"

namespace tunefleet {
namespace {

// Where the gather's output lies inside its input, in floats; -1 when it is
// not a run of whole blocks of the same layout at batch 1.
int64_t SliceOffset(const PlanStep& step, const PlanBuffer& in, const PlanBuffer& out) {
  if (!in.is_4d() || !out.is_4d() || in.shape[0] != 1 || out.shape[0] != 1) return -1;
  if (in.block != out.block || in.RowWidth() != out.RowWidth() || in.shape[2] != out.shape[2] ||
      in.shape[3] != out.shape[3]) {
    return -1;
  }
  const int64_t channels = out.shape[1];
  if (static_cast<int64_t>(step.indices.size()) != channels || channels == 0) return -1;
  const int64_t first = step.indices[0];
  for (int64_t c = 1; c < channels; ++c) {
    if (step.indices[c] != first + c) return -1;
  }
  const int64_t block = in.block;
  if (first % block != 0 || channels % block != 0 || first + channels > in.shape[1]) return -1;
  const int64_t block_floats = in.shape[2] * in.RowWidth() * block;
  if (out.elements != channels / block * block_floats) return -1;
  return first / block * block_floats;
}

// Where a strided copy's output lies inside its input, in floats: its
// output is one run of the input's floats when each axis it spans steps
// by the row-major stride of the output's shape (a Gather of one index or
// a Slice of the outer axes: attention's q, k and v taken from one
// tensor); -1 otherwise.
int64_t RunOffset(const PlanStep& step, const PlanBuffer& in, const PlanBuffer& out) {
  if (!in.is_plain() || !out.is_plain() || step.a_strides.size() != step.out_shape.size()) {
    return -1;
  }
  int64_t stride = 1;
  for (size_t d = step.out_shape.size(); d-- > 0;) {
    if (step.out_shape[d] != 1 && step.a_strides[d] != stride) return -1;
    stride *= step.out_shape[d];
  }
  if (stride != out.elements || step.a_offset < 0 || step.a_offset + stride > in.elements) {
    return -1;
  }
  return step.a_offset;
}

}  // namespace

int AliasChannelSlices(ModelPlan* plan) {
  const BufferUse use = BufferUseOf(*plan);
  const std::vector<int>& writers = use.writers;
  const std::vector<bool>& pinned = use.pinned;
  // Buffers something already lies in (a root of views): they stay whole.
  std::vector<bool> is_root = use.view_root;

  std::vector<bool> drop(plan->steps.size(), false);
  int dropped = 0;
  for (size_t s = 0; s < plan->steps.size(); ++s) {
    const PlanStep& step = plan->steps[s];
    if ((step.op != StepOp::kChannelGather && step.op != StepOp::kStridedCopy) ||
        step.inputs.size() != 1 || step.outputs.size() != 1) {
      continue;
    }
    const int in = step.inputs[0], out = step.outputs[0];
    PlanBuffer& view = plan->buffers[out];
    const PlanBuffer& source = plan->buffers[in];
    if (in == out || view.is_constant() || source.is_constant() || pinned[out] || pinned[in] ||
        writers[out] != 1 || writers[in] > 1 || view.alias_of >= 0 || is_root[out]) {
      continue;
    }
    const int64_t offset = step.op == StepOp::kChannelGather ? SliceOffset(step, source, view)
                                                             : RunOffset(step, source, view);
    if (offset < 0) continue;
    const int root = source.alias_of >= 0 ? source.alias_of : in;
    const int64_t at = (source.alias_of >= 0 ? source.alias_offset : 0) + offset;
    if (at % kAliasAlignFloats != 0) continue;
    view.alias_of = root;
    view.alias_offset = at;
    is_root[root] = true;
    drop[s] = true;
    ++dropped;
  }
  EraseSteps(plan, drop);
  return dropped;
}

}  // namespace tunefleet
