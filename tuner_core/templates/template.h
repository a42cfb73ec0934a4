// A template turns one configuration of its search space into a loop nest
// for one workload (AutoTVM's template function: define the space, then
// apply the config as a schedule). Templates are stateless singletons found
// by name; the registry lists which templates serve which workload.
//
//   TF_ASSIGN_OR_RETURN(const Template* t, FindTemplate("dense_pack.x86"));
//   TF_ASSIGN_OR_RETURN(ConfigSpace space, t->DefineSpace(workload));
//   TF_ASSIGN_OR_RETURN(ir::LoweredFunc f, t->Instantiate(workload, config));
#ifndef TUNEFLEET_TUNER_CORE_TEMPLATES_TEMPLATE_H_
#define TUNEFLEET_TUNER_CORE_TEMPLATES_TEMPLATE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tuner_core/ir/ir.h"
#include "tuner_core/space/config_space.h"
#include "tuner_core/workloads/workload.h"

namespace tunefleet {

class Template {
 public:
  virtual ~Template() = default;

  // Task name written into records, e.g. "dense_pack.x86".
  virtual const std::string& name() const = 0;
  // The workload this template computes, e.g. "dense".
  virtual const std::string& workload_name() const = 0;
  // One line for `tunefleet templates`.
  virtual const std::string& description() const = 0;
  // True for templates whose kernels run on a CUDA GPU (names end in
  // ".cuda"; they need a `cuda` target), false for CPU templates.
  virtual bool is_gpu() const { return false; }

  // The search space for this workload's shapes.
  virtual absl::StatusOr<ConfigSpace> DefineSpace(const Workload& workload) const = 0;

  // The loop nest for one config. InvalidArgument when the config cannot be
  // applied (the builder reports that as INSTANTIATION_ERROR).
  virtual absl::StatusOr<ir::LoweredFunc> Instantiate(const Workload& workload,
                                                      const Config& config) const = 0;
};

// NotFound naming the known templates when `name` is not one.
absl::StatusOr<const Template*> FindTemplate(const std::string& name);
std::vector<const Template*> AllTemplates();
// The template `tune` picks for a workload when none is named: the first GPU
// template for a `cuda ...` target, the first CPU template otherwise.
absl::StatusOr<const Template*> DefaultTemplate(const std::string& workload_name,
                                                const std::string& target = "");
// Whether `target` names a CUDA GPU ("cuda ..." or "llvm -mtriple=nvptx64-..."),
// without parsing it fully.
bool IsCudaTargetString(const std::string& target);

// Entry symbol every kernel of a template exports.
std::string KernelEntryName(const Template& tmpl);

// Kernel arguments in the workload's tensor order.
std::vector<ir::BufferArg> BufferArgsOf(const Workload& workload);

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_TEMPLATES_TEMPLATE_H_
