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

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "target/target_string.h"  // IsCudaTargetString
#include "tuner_core/ir/ir.h"
#include "tuner_core/space/config_space.h"
#include "tuner_core/workloads/workload.h"

namespace tunefleet {

// What one config's register-blocked micro-kernel keeps in vector
// registers during one FMA step of its innermost loop, in vectors of the
// config's own width (`lanes` fp32 values), counted from the kernel code.
// The target turns that into physical registers (a 16-lane vector is one
// AVX-512 register but four NEON ones) and decides whether it fits
// (tuner_core/templates/register_fit.h).
struct RegisterDemand {
  int64_t lanes = 1;         // fp32 lanes of one vector of the tile
  int64_t accumulators = 0;  // vectors of the register tile, live throughout
  // Vector operands one step reads, each reused across the tile (a row of
  // B, a channel block of weights) or read once (an input vector).
  int64_t vector_operands = 0;
  // Scalars broadcast to every lane (a value of A, an input pixel): one
  // register each whatever the width.
  int64_t broadcast_operands = 0;
};

// A template is data: its names and two functions (three for a CPU template
// with a register tile). Each built-in template's file defines the functions
// and one accessor returning its Template (dense_pack_x86.h:
// `const Template& DensePackX86Template()`).
class Template {
 public:
  using DefineSpaceFn = absl::StatusOr<ConfigSpace> (*)(const Workload& workload);
  using InstantiateFn = absl::StatusOr<ir::LoweredFunc> (*)(const Workload& workload,
                                                            const Config& config);
  using RegisterDemandFn = absl::StatusOr<RegisterDemand> (*)(const Workload& workload,
                                                              const Config& config);

  struct Info {
    // Task name written into records, e.g. "dense_pack.x86".
    std::string name;
    // The workload this template computes, e.g. "dense".
    std::string workload_name;
    // One line for `tunefleet templates`.
    std::string description;
    // True for templates whose kernels run on a CUDA GPU (names end in
    // ".cuda"; they need a `cuda` target), false for CPU templates.
    bool is_gpu = false;
  };

  // The same, as a template's file declares them: constexpr, at the top.
  struct Names {
    const char* name;
    const char* workload_name;
    const char* description;
    bool is_gpu;
  };

  Template(const Names& names, DefineSpaceFn define_space, InstantiateFn instantiate,
           RegisterDemandFn register_demand = nullptr)
      : Template(Info{names.name, names.workload_name, names.description, names.is_gpu},
                 define_space, instantiate, register_demand) {}
  Template(Info info, DefineSpaceFn define_space, InstantiateFn instantiate,
           RegisterDemandFn register_demand = nullptr)
      : info_(std::move(info)),
        define_space_(define_space),
        instantiate_(instantiate),
        register_demand_(register_demand) {}
  Template(const Template&) = delete;
  Template& operator=(const Template&) = delete;

  const std::string& name() const { return info_.name; }
  const std::string& workload_name() const { return info_.workload_name; }
  const std::string& description() const { return info_.description; }
  bool is_gpu() const { return info_.is_gpu; }

  // The search space for this workload's shapes.
  [[nodiscard]] absl::StatusOr<ConfigSpace> DefineSpace(const Workload& workload) const {
    return define_space_(workload);
  }

  // The loop nest for one config. InvalidArgument when the config cannot be
  // applied (the builder reports that as INSTANTIATION_ERROR).
  [[nodiscard]] absl::StatusOr<ir::LoweredFunc> Instantiate(const Workload& workload,
                                                            const Config& config) const {
    return instantiate_(workload, config);
  }

  // Whether the template declares its register tile (the CPU templates do;
  // GPU and untiled ones do not, and nothing checks them).
  bool has_register_demand() const { return register_demand_ != nullptr; }

  // The vector registers one config's micro-kernel needs; InvalidArgument
  // when the config cannot be applied, FailedPrecondition for a template
  // without a register tile.
  [[nodiscard]] absl::StatusOr<RegisterDemand> RegisterDemandOf(const Workload& workload,
                                                                const Config& config) const {
    if (register_demand_ == nullptr) {
      return absl::FailedPreconditionError("template " + info_.name + " declares no register tile");
    }
    return register_demand_(workload, config);
  }

 private:
  const Info info_;
  const DefineSpaceFn define_space_;
  const InstantiateFn instantiate_;
  const RegisterDemandFn register_demand_;
};

// NotFound naming the known templates when `name` is not one.
[[nodiscard]] absl::StatusOr<const Template*> FindTemplate(const std::string& name);
// The built-in templates, then the registered ones.
std::vector<const Template*> AllTemplates();
// Adds `tmpl` (not owned; it must live as long as the process) to
// AllTemplates and FindTemplate, never to DefaultTemplate. For test-only
// templates, which register themselves from a static initializer when a
// test binary links them (tests/dense_fault_test_template.h); production
// binaries register nothing. Thread-safe.
void RegisterTemplate(const Template* tmpl);
// The template `tune` picks for a workload when none is named: the first GPU
// template for a `cuda ...` target, the first CPU template otherwise.
[[nodiscard]] absl::StatusOr<const Template*> DefaultTemplate(const std::string& workload_name,
                                                              const std::string& target = "");
// The template `tune` picks for `workload` when none is named: one made for
// part of the workload's shapes where its space takes this one
// (group_conv2d_nchwc.x86: grouped convolutions of few channels per group),
// else DefaultTemplate of its name.
[[nodiscard]] absl::StatusOr<const Template*> DefaultTemplateFor(const Workload& workload,
                                                                 const std::string& target = "");
// Whether a target names a CUDA GPU: IsCudaTargetString, target/target_string.h.

// Entry symbol every kernel of a template exports.
std::string KernelEntryName(const Template& tmpl);

// Kernel arguments in the workload's tensor order.
std::vector<ir::BufferArg> BufferArgsOf(const Workload& workload);

// The kernel a template instantiates for `workload`: its entry symbol
// (KernelEntryName), the workload's tensors as arguments (BufferArgsOf) and
// `body`. Staged kernels add their stages to it.
ir::LoweredFunc KernelFunc(const Template& tmpl, const Workload& workload, ir::Stmt body);

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_TEMPLATES_TEMPLATE_H_
