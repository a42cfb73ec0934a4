#include "compiler/passes/prune_steps.h"

#include <algorithm>
#include <set>
#include <vector>

namespace tunefleet {

void DropUnreadChannelGathers(ModelPlan* plan) {
  for (bool dropped = true; dropped;) {
    std::set<int> read;
    for (const PlanTensor& t : plan->outputs) read.insert(t.buffer);
    for (const PlanStep& step : plan->steps) {
      read.insert(step.inputs.begin(), step.inputs.end());
      read.insert(step.staged.begin(), step.staged.end());
      read.insert(step.epilogue.bias);
      read.insert(step.epilogue.residual);
    }
    std::vector<PlanStep>& steps = plan->steps;
    const size_t before = steps.size();
    steps.erase(std::remove_if(steps.begin(), steps.end(),
                               [&](const PlanStep& step) {
                                 return step.op == StepOp::kChannelGather &&
                                        !step.outputs.empty() && !read.count(step.outputs[0]);
                               }),
                steps.end());
    dropped = steps.size() != before;
  }
}

}  // namespace tunefleet
