#include "compiler/passes/alias_concats.h"

#include <algorithm>
#include <cstdint>
#include <set>
#include <vector>

#include "compiler/passes/buffer_use.h"

namespace tunefleet {
namespace {

struct Place {
  int root = -1;
  int64_t offset = 0;
  bool operator==(const Place& o) const { return root == o.root && offset == o.offset; }
};

}  // namespace

int AliasConcatInputs(ModelPlan* plan) {
  const int num_buffers = static_cast<int>(plan->buffers.size());
  // Buffers that may only stay where they are: model inputs and outputs,
  // and any buffer with more than one writer.
  BufferUse use = BufferUseOf(*plan);
  const std::vector<int>& writers = use.writers;
  std::vector<bool>& pinned = use.pinned;
  // Aliases the plan has already (views) stay, and so do their roots.
  std::vector<Place> place(num_buffers);
  for (int id = 0; id < num_buffers; ++id) {
    const PlanBuffer& b = plan->buffers[id];
    if (b.alias_of >= 0) {
      place[id] = {b.alias_of, b.alias_offset};
      pinned[b.alias_of] = true;
    }
  }
  auto movable = [&](int id) {
    const PlanBuffer& b = plan->buffers[id];
    return !b.is_constant() && !pinned[id] && writers[id] == 1 && place[id].root < 0;
  };

  std::vector<bool> drop(plan->steps.size(), false);
  int dropped = 0;
  // Last first: a concat read by a later concat is placed in that one's
  // output before its own inputs are placed, so every alias's root is a
  // buffer that is no alias itself.
  for (int s = static_cast<int>(plan->steps.size()) - 1; s >= 0; --s) {
    const PlanStep& step = plan->steps[s];
    if (step.op != StepOp::kConcat || step.outputs.size() != 1 || step.in_shape.size() < 2 ||
        step.in_shape[0] != 1 || step.in_shape.size() != step.inputs.size() + 2) {
      continue;
    }
    const int out = step.outputs[0];
    const int64_t inner = step.in_shape[1];
    std::vector<int64_t> starts;  // each input's first float within the output
    int64_t total = 0;
    for (size_t i = 0; i < step.inputs.size(); ++i) {
      starts.push_back(total);
      total += step.in_shape[i + 2] * inner;
    }
    if (plan->buffers[out].elements != total || plan->buffers[out].is_constant()) continue;
    const std::set<int> distinct(step.inputs.begin(), step.inputs.end());
    if (distinct.size() != step.inputs.size()) continue;

    // Where the output lies: in place already (a later concat reads it),
    // else as a view of the buffer its first input already lies in, else
    // its own buffer as the root.
    Place base{out, 0};
    bool output_becomes_view = false;
    if (place[out].root >= 0) {
      base = place[out];
    } else if (place[step.inputs[0]].root >= 0 && !pinned[out] && writers[out] == 1) {
      base = place[step.inputs[0]];
      output_becomes_view = true;
    }
    if (base.root != out && base.offset + total > plan->buffers[base.root].elements) continue;
    bool ok = true;
    for (size_t i = 0; i < step.inputs.size() && ok; ++i) {
      const int id = step.inputs[i];
      const Place want{base.root, base.offset + starts[i]};
      const bool placed_there = place[id] == want;
      ok = (placed_there || movable(id)) &&
           plan->buffers[id].elements == step.in_shape[i + 2] * inner &&
           want.offset % kAliasAlignFloats == 0;
    }
    if (!ok) continue;
    for (size_t i = 0; i < step.inputs.size(); ++i) {
      place[step.inputs[i]] = {base.root, base.offset + starts[i]};
    }
    if (output_becomes_view) place[out] = base;
    drop[s] = true;
    ++dropped;
  }
  for (int id = 0; id < num_buffers; ++id) {
    plan->buffers[id].alias_of = place[id].root;
    plan->buffers[id].alias_offset = place[id].root >= 0 ? place[id].offset : 0;
  }
  EraseSteps(plan, drop);
  return dropped;
}

}  // namespace tunefleet
