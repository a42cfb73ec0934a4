// Where a compiled model's time goes, from the runtime's per-step timing
// (CompiledModel::SetProfiling / step_seconds()): each plan step's kind
// (tuned kernels, layout changes, pooling, ...), and a table of every step
// with its node, the layouts it reads and writes and its time, for
// `tunefleet run --profile` and the compiled-model benchmark.
//
//   model->SetProfiling(true);
//   for (int i = 0; i < runs; ++i) TF_RETURN_IF_ERROR(model->Run(in, out));
//   std::cout << FormatStepProfile(model->plan(), model->step_seconds(), runs,
//                                  model->epilogue_seconds());
#ifndef TUNEFLEET_COMPILER_RUNTIME_STEP_PROFILE_H_
#define TUNEFLEET_COMPILER_RUNTIME_STEP_PROFILE_H_

#include <map>
#include <string>
#include <vector>

#include "compiler/runtime/plan.h"

namespace tunefleet {

// "tuned kernels" (blocked, only the timed entry runs), "tuned kernels
// (NCHW)" (the runtime runs prepare/entry/finish on plain tensors),
// "layout changes", "pooling", "other ops".
std::string StepKind(const PlanStep& step);

// A buffer's layout as text: "NCHW", "NCHW16c", "NCHW8c/row 16" (rows wider
// than the image), or "[1, 1000]" for one that is not 4-D.
std::string LayoutText(const PlanBuffer& buffer);

// Milliseconds per run by StepKind, from `step_seconds` summed over `runs`.
std::map<std::string, double> MsByKind(const ModelPlan& plan,
                                       const std::vector<double>& step_seconds, int runs);

// One line per step ("  12 kernel   node  NCHW16c -> NCHW8c  0.123 ms  tuned kernels"),
// then the per-kind totals; with `epilogue_seconds` (CompiledModel's, by
// step) also the part of each kernel step its epilogue took, and their sum;
// with `alone_seconds` (by step, summed over `runs` as step_seconds:
// CompiledModel::KernelSecondsAlone's) each kernel step's own time beside.
std::string FormatStepProfile(const ModelPlan& plan, const std::vector<double>& step_seconds,
                              int runs, const std::vector<double>& epilogue_seconds = {},
                              const std::vector<double>& alone_seconds = {});

}  // namespace tunefleet

#endif  // TUNEFLEET_COMPILER_RUNTIME_STEP_PROFILE_H_
