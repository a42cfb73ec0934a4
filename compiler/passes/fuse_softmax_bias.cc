#include "compiler/passes/fuse_softmax_bias.h"

#include <cstdint>
#include <vector>

#include "compiler/passes/buffer_use.h"
#include "tuner_core/graph/static_shapes.h"

namespace tunefleet {
namespace {

// Whether `strides` (with `offset`) read every element of `shape` once, in
// row-major order; axes of one element may have any stride.
bool RowMajor(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides,
              int64_t offset) {
  if (offset != 0 || strides.size() != shape.size()) return false;
  const std::vector<int64_t> row_major = RowMajorStrides(shape);
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] != 1 && strides[d] != row_major[d]) return false;
  }
  return true;
}

int64_t Elements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

}  // namespace

int FuseSoftmaxBias(ModelPlan* plan) {
  const BufferUse use = BufferUseOf(*plan);
  std::vector<int> views(plan->buffers.size(), 0);  // per buffer: the views in it
  for (const PlanBuffer& b : plan->buffers) {
    if (b.alias_of >= 0) ++views[b.alias_of];
  }
  LastWriters writer(*plan);
  std::vector<bool> dropped(plan->steps.size(), false);
  int fused = 0;
  for (size_t j = 0; j < plan->steps.size(); ++j) {
    PlanStep& softmax = plan->steps[j];
    if (softmax.op == StepOp::kSoftmax && softmax.inputs.size() == 1 &&
        softmax.in_shape.size() == 3 && softmax.in_shape[2] == 1) {
      const int in = softmax.inputs[0], sum = RootOf(*plan, in);
      const PlanBuffer& view = plan->buffers[in];
      // The sum read by the softmax alone: itself, or its one view of it all.
      const bool alone = in == sum ? use.readers[sum] == 1 && views[sum] == 0
                                   : use.readers[sum] == 0 && use.readers[in] == 1 &&
                                         views[sum] == 1 && view.alias_offset == 0 &&
                                         view.elements == plan->buffers[sum].elements;
      const int i = writer.Of(sum);
      if (alone && i >= 0 && !dropped[i] && !use.pinned[sum] && !use.pinned[in] &&
          use.writers[sum] == 1 && use.writers[in] <= 1) {
        const PlanStep& add = plan->steps[i];
        const bool fits = add.op == StepOp::kBroadcast && add.binary == BinaryFunc::kAdd &&
                          add.inputs.size() == 2 && add.outputs.size() == 1 &&
                          add.outputs[0] == sum && !add.out_shape.empty() &&
                          add.out_shape.back() == softmax.in_shape[1] &&
                          Elements(add.out_shape) == softmax.in_shape[0] * softmax.in_shape[1];
        // The scores row-major; the bias through its strides (no offset:
        // the softmax has none for it).
        int x = -1, bias = -1;
        std::vector<int64_t> bias_strides;
        if (fits && RowMajor(add.out_shape, add.a_strides, add.a_offset) &&
            add.b_strides.size() == add.out_shape.size()) {
          x = add.inputs[0], bias = add.inputs[1], bias_strides = add.b_strides;
        } else if (fits && RowMajor(add.out_shape, add.b_strides, 0) && add.a_offset == 0 &&
                   add.a_strides.size() == add.out_shape.size()) {
          x = add.inputs[1], bias = add.inputs[0], bias_strides = add.a_strides;
        }
        // Both are read at step j now: nothing may write them in between.
        if (x >= 0 && x != bias && writer.Of(x) < i && writer.Of(bias) < i) {
          softmax.inputs = {x, bias};
          softmax.out_shape = add.out_shape;
          softmax.b_strides = std::move(bias_strides);
          dropped[i] = true;
          ++fused;
        }
      }
    }
    writer.Wrote(static_cast<int>(j));
  }
  EraseSteps(plan, dropped);
  return fused;
}

}  // namespace tunefleet
