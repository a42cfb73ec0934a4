#include "compiler/passes/fold_channel_scales.h"

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/passes/buffer_use.h"

namespace tunefleet {
namespace {

// The scale_weights step's in_shape {K/ob, C/ib, R*S, ib, ob} for the
// blocked kernel `conv` reading the channel Mul's product (`x`'s layout,
// channels; ib its weights' input-channel block), or empty where it is not
// an ungrouped blocked convolution whose weights are fewer floats than x.
std::vector<int64_t> PackedGeometry(const ModelPlan& plan, const PlanStep& conv, int product,
                                    int x) {
  if (conv.op != StepOp::kKernel || conv.staged.size() != 3 || conv.inputs.size() != 2 ||
      conv.inputs[0] != product || conv.staged[0] != product || conv.inputs[1] != conv.staged[1] ||
      conv.kernel_shape.size() != 3 ||
      // The product read again by the kernel's epilogue: it has to stay.
      conv.epilogue.residual == product || conv.epilogue.bias == product) {
    return {};
  }
  const PlanBuffer& in = plan.buffers[x];
  const PlanBuffer& weights = plan.buffers[conv.staged[1]];
  const PlanBuffer& out = plan.buffers[conv.staged[2]];
  if (!weights.is_constant() || !out.is_4d()) return {};
  const int64_t k = out.shape[1], c = in.shape[1];
  const int64_t taps = conv.kernel_shape[0] * conv.kernel_shape[1];
  // The weights' input-channel block, the kernel step's: x's may differ
  // (kernel_packing.h ReadsBlockAtNoCost).
  const int64_t ib = conv.kernel_shape[2], ob = out.block;
  // Ungrouped: every output channel has a weight for every input channel
  // (a grouped or depthwise kernel has fewer).
  if (ib <= 0 || ob <= 0 || taps <= 0 || c % ib != 0 || k % ob != 0 ||
      weights.elements != k * c * taps) {
    return {};
  }
  if (weights.elements >= in.elements) return {};  // scaling them would cost more than x
  return {k / ob, c / ib, taps, ib, ob};
}

}  // namespace

int FoldChannelScales(ModelPlan* plan) {
  const BufferUse use = BufferUseOf(*plan);
  int folded = 0;
  for (size_t i = 0; i < plan->steps.size(); ++i) {
    const PlanStep& mul = plan->steps[i];
    if (mul.op != StepOp::kChannelBinary || mul.binary != BinaryFunc::kMul ||
        mul.inputs.size() != 2 || mul.outputs.size() != 1 || mul.in_shape.size() != 2 ||
        mul.in_shape[0] != 1) {
      continue;
    }
    const int x = mul.inputs[0], s = mul.inputs[1], product = mul.outputs[0];
    const PlanBuffer& in = plan->buffers[x];
    const PlanBuffer& out = plan->buffers[product];
    // s: one float per channel, in order (the runtime checks there are C).
    if (product == x || !plan->buffers[s].is_plain() || !in.is_4d() || in.shape[0] != 1 ||
        use.pinned[product] || use.writers[product] != 1 || use.readers[product] != 1 ||
        out.alias_of >= 0 || use.view_root[product] || out.block != in.block ||
        out.RowWidth() != in.RowWidth() ||
        // x is read later than before: nothing may write it meanwhile.
        use.writers[x] != 1 || in.alias_of >= 0 || use.view_root[x]) {
      continue;
    }
    const int j = use.last_reader[product];
    if (j <= static_cast<int>(i)) continue;
    const std::vector<int64_t> geometry = PackedGeometry(*plan, plan->steps[j], product, x);
    if (geometry.empty()) continue;
    const int weights = plan->steps[j].staged[1];
    PlanBuffer scaled;
    scaled.tensor = plan->buffers[weights].tensor + ".scaled";
    scaled.elements = plan->buffers[weights].elements;
    scaled.shape = {scaled.elements};
    const int scaled_id = static_cast<int>(plan->buffers.size());
    plan->buffers.push_back(std::move(scaled));

    PlanStep scale;
    scale.op = StepOp::kScaleWeights;
    scale.node = plan->steps[i].node;
    scale.inputs = {weights, s};
    scale.outputs = {scaled_id};
    scale.in_shape = geometry;
    plan->steps[i] = std::move(scale);
    PlanStep& conv = plan->steps[j];
    conv.inputs = {x, scaled_id};
    conv.staged = {x, scaled_id, conv.staged[2]};
    ++folded;
  }
  return folded;
}

}  // namespace tunefleet
