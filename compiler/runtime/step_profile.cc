#include "compiler/runtime/step_profile.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace tunefleet {

std::string StepKind(const PlanStep& step) {
  switch (step.op) {
    case StepOp::kKernel:
      return step.staged.empty() ? "tuned kernels (NCHW)" : "tuned kernels";
    case StepOp::kRelayout:
      return "layout changes";
    case StepOp::kMaxPool:
    case StepOp::kAvgPool:
    case StepOp::kGlobalAvgPool:
      return "pooling";
    default:
      break;
  }
  return "other ops";
}

std::string LayoutText(const PlanBuffer& buffer) {
  if (!buffer.is_4d()) return absl::StrCat("[", absl::StrJoin(buffer.shape, ", "), "]");
  std::string text = buffer.block == 1 ? "NCHW" : absl::StrCat("NCHW", buffer.block, "c");
  if (buffer.RowWidth() != buffer.shape[3]) absl::StrAppend(&text, "/row ", buffer.RowWidth());
  return text;
}

std::map<std::string, double> MsByKind(const ModelPlan& plan,
                                       const std::vector<double>& step_seconds, int runs) {
  std::map<std::string, double> by_kind;
  for (size_t i = 0; i < plan.steps.size() && i < step_seconds.size(); ++i) {
    by_kind[StepKind(plan.steps[i])] += step_seconds[i] * 1e3 / std::max(runs, 1);
  }
  return by_kind;
}

std::string FormatStepProfile(const ModelPlan& plan, const std::vector<double>& step_seconds,
                              int runs, const std::vector<double>& epilogue_seconds,
                              const std::vector<double>& alone_seconds) {
  std::string text;
  double total = 0, epilogues = 0;
  for (size_t i = 0; i < plan.steps.size() && i < step_seconds.size(); ++i) {
    const PlanStep& step = plan.steps[i];
    const double ms = step_seconds[i] * 1e3 / std::max(runs, 1);
    total += ms;
    const std::string in = step.inputs.empty() ? "-" : LayoutText(plan.buffers[step.inputs[0]]);
    const std::string out = step.outputs.empty() ? "-" : LayoutText(plan.buffers[step.outputs[0]]);
    std::string shape;
    if (!step.outputs.empty()) {
      shape = absl::StrCat("[", absl::StrJoin(plan.buffers[step.outputs[0]].shape, ","), "]");
    }
    std::string notes;
    if (i < epilogue_seconds.size() && epilogue_seconds[i] > 0) {
      const double epilogue_ms = epilogue_seconds[i] * 1e3 / std::max(runs, 1);
      epilogues += epilogue_ms;
      notes = absl::StrFormat(" (epilogue %.3f)", epilogue_ms);
    } else if (step.epilogue.in_stores && !step.epilogue.empty()) {
      notes = " (epilogue in its stores)";
    } else if (step.epilogue.in_kernel && !step.epilogue.empty()) {
      notes = " (epilogue through its hook)";
    }
    if (i < alone_seconds.size() && alone_seconds[i] > 0) {
      absl::StrAppendFormat(&notes, " (alone %.3f)", alone_seconds[i] * 1e3 / std::max(runs, 1));
    }
    absl::StrAppendFormat(&text, "%4d %-15s %-28s %-16s -> %-16s %-16s %8.3f ms  %s%s\n",
                          static_cast<int>(i), StepOpName(step.op), step.node, in, out, shape, ms,
                          StepKind(step), notes);
  }
  for (const auto& [kind, ms] : MsByKind(plan, step_seconds, runs)) {
    absl::StrAppendFormat(&text, "%-22s %8.3f ms\n", kind, ms);
  }
  if (!epilogue_seconds.empty()) {
    absl::StrAppendFormat(&text,
                          "%-22s %8.3f ms (of the kernel steps above; those fused into a "
                          "kernel's stores are its own time)\n",
                          "kernel epilogues", epilogues);
  }
  absl::StrAppendFormat(&text, "%-22s %8.3f ms over %d steps\n", "total", total,
                        static_cast<int>(plan.steps.size()));
  return text;
}

}  // namespace tunefleet
