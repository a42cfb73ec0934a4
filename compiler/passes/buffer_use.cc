#include "compiler/passes/buffer_use.h"

#include <algorithm>
#include <set>
#include <utility>
#include <vector>

namespace tunefleet {

BufferUse BufferUseOf(const ModelPlan& plan) {
  const size_t num_buffers = plan.buffers.size();
  BufferUse use{std::vector<int>(num_buffers, 0), std::vector<int>(num_buffers, 0),
                std::vector<int>(num_buffers, -1), std::vector<bool>(num_buffers, false),
                std::vector<bool>(num_buffers, false)};
  for (const PlanBuffer& b : plan.buffers) {
    if (b.alias_of >= 0) use.view_root[b.alias_of] = true;
  }
  for (const PlanTensor& t : plan.inputs) use.pinned[t.buffer] = true;
  for (const PlanTensor& t : plan.outputs) use.pinned[t.buffer] = true;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const PlanStep& step = plan.steps[i];
    std::set<int> written(step.outputs.begin(), step.outputs.end());
    for (int id : step.staged) {
      if (std::find(step.inputs.begin(), step.inputs.end(), id) == step.inputs.end()) {
        written.insert(id);
      }
    }
    for (int id : written) ++use.writers[id];
    std::set<int> read(step.inputs.begin(), step.inputs.end());
    if (step.epilogue.bias >= 0) read.insert(step.epilogue.bias);
    if (step.epilogue.residual >= 0) read.insert(step.epilogue.residual);
    for (int id : read) {
      ++use.readers[id];
      use.last_reader[id] = static_cast<int>(i);
    }
  }
  return use;
}

int RootOf(const ModelPlan& plan, int id) {
  return plan.buffers[id].alias_of >= 0 ? plan.buffers[id].alias_of : id;
}

void LastWriters::Wrote(int j) {
  const PlanStep& step = plan_.steps[j];
  for (int id : step.outputs) writer_[RootOf(plan_, id)] = j;
  for (int id : step.staged) writer_[RootOf(plan_, id)] = j;
}

void EraseSteps(ModelPlan* plan, const std::vector<bool>& drop) {
  std::vector<PlanStep> kept;
  for (size_t s = 0; s < plan->steps.size(); ++s) {
    if (s >= drop.size() || !drop[s]) kept.push_back(std::move(plan->steps[s]));
  }
  plan->steps = std::move(kept);
}

}  // namespace tunefleet
