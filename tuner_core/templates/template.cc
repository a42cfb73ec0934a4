#include "tuner_core/templates/template.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "tuner_core/templates/batch_matmul_pack_x86.h"
#include "tuner_core/templates/conv2d_direct_cuda.h"
#include "tuner_core/templates/conv2d_igemm_cuda.h"
#include "tuner_core/templates/conv2d_nchwc_x86.h"
#include "tuner_core/templates/dense_gemm_x86.h"
#include "tuner_core/templates/dense_gpu_cuda.h"
#include "tuner_core/templates/dense_pack_x86.h"
#include "tuner_core/templates/dense_tiled.h"
#include "tuner_core/templates/depthwise_conv2d_nchwc_x86.h"
#include "tuner_core/templates/group_conv2d_nchwc_x86.h"

namespace tunefleet {
namespace {

// Templates added by RegisterTemplate (test binaries), after the built-in ones.
struct RegisteredTemplates {
  absl::Mutex mu;
  std::vector<const Template*> templates ABSL_GUARDED_BY(mu);
};

RegisteredTemplates& Registered() {
  static RegisteredTemplates* registered = new RegisteredTemplates();
  return *registered;
}

// The templates every binary has, best first per workload: dense_gemm.x86
// spans dense_pack.x86's space and adds weights packed once and the dot
// kernel (small M), so it is the dense default; conv2d_igemm.cuda beat
// conv2d_direct.cuda on every ResNet-18 layer on an H200.
std::vector<const Template*> BuiltInTemplates() {
  return {&DenseGemmX86Template(),        &DensePackX86Template(),
          &DenseTiledTemplate(),          &Conv2dNchwcX86Template(),
          &GroupConv2dNchwcX86Template(), &DepthwiseConv2dNchwcX86Template(),
          &BatchMatmulPackX86Template(),  &DenseGpuCudaTemplate(),
          &Conv2dIgemmCudaTemplate(),     &Conv2dDirectCudaTemplate()};
}

}  // namespace

void RegisterTemplate(const Template* tmpl) {
  RegisteredTemplates& registered = Registered();
  absl::MutexLock lock(&registered.mu);
  registered.templates.push_back(tmpl);
}

std::vector<const Template*> AllTemplates() {
  std::vector<const Template*> all = BuiltInTemplates();
  RegisteredTemplates& registered = Registered();
  absl::MutexLock lock(&registered.mu);
  all.insert(all.end(), registered.templates.begin(), registered.templates.end());
  return all;
}

[[nodiscard]] absl::StatusOr<const Template*> FindTemplate(const std::string& name) {
  std::vector<std::string> names;
  for (const Template* t : AllTemplates()) {
    if (t->name() == name) return t;
    names.push_back(t->name());
  }
  return absl::NotFoundError(
      absl::StrCat("unknown template \"", name, "\" (known: ", absl::StrJoin(names, ", "), ")"));
}

[[nodiscard]] absl::StatusOr<const Template*> DefaultTemplate(const std::string& workload_name,
                                                              const std::string& target) {
  const bool gpu = IsCudaTargetString(target);
  for (const Template* t : BuiltInTemplates()) {  // a registered one is never a default
    if (t->is_gpu() != gpu) continue;
    if (t->workload_name() == workload_name) return t;  // the first listed is the best one
  }
  return absl::NotFoundError(
      absl::StrCat("no ", gpu ? "CUDA" : "CPU", " template for workload \"", workload_name, "\""));
}

[[nodiscard]] absl::StatusOr<const Template*> DefaultTemplateFor(const Workload& workload,
                                                                 const std::string& target) {
  // Templates for part of a workload's shapes, each before its workload's
  // default where its space takes the shape.
  static const std::vector<const Template*> kSpecialised = {&GroupConv2dNchwcX86Template()};
  const bool gpu = IsCudaTargetString(target);
  for (const Template* t : kSpecialised) {
    if (t->is_gpu() == gpu && t->workload_name() == workload.name() &&
        t->DefineSpace(workload).ok()) {
      return t;
    }
  }
  return DefaultTemplate(workload.name(), target);
}

std::string KernelEntryName(const Template& tmpl) {
  std::string name = absl::StrCat("tf_", tmpl.name());
  std::replace(name.begin(), name.end(), '.', '_');
  return name;
}

std::vector<ir::BufferArg> BufferArgsOf(const Workload& workload) {
  std::vector<ir::BufferArg> args;
  for (const TensorArg& t : workload.tensors()) args.push_back({t.name, t.shape, t.is_output});
  return args;
}

ir::LoweredFunc KernelFunc(const Template& tmpl, const Workload& workload, ir::Stmt body) {
  ir::LoweredFunc func;
  func.name = KernelEntryName(tmpl);
  func.args = BufferArgsOf(workload);
  func.body = std::move(body);
  return func;
}

}  // namespace tunefleet
