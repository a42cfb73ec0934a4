#include "tuner_core/templates/template.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/cuda_target.h"
#include "tuner_core/templates/batch_matmul_pack_x86.h"
#include "tuner_core/templates/conv2d_direct_cuda.h"
#include "tuner_core/templates/conv2d_nchwc_x86.h"
#include "tuner_core/templates/dense_fault_test_template.h"
#include "tuner_core/templates/dense_gpu_cuda.h"
#include "tuner_core/templates/dense_pack_x86.h"
#include "tuner_core/templates/dense_tiled.h"
#include "tuner_core/templates/depthwise_conv2d_nchwc_x86.h"

namespace tunefleet {

std::vector<const Template*> AllTemplates() {
  static const DensePackX86Template dense_pack;
  static const DenseTiledTemplate dense_tiled;
  static const DenseFaultTestTemplate dense_fault_test;
  static const Conv2dNchwcX86Template conv2d_nchwc;
  static const DepthwiseConv2dNchwcX86Template depthwise_nchwc;
  static const BatchMatmulPackX86Template batch_matmul_pack;
  static const DenseGpuCudaTemplate dense_gpu;
  static const Conv2dDirectCudaTemplate conv2d_direct_gpu;
  std::vector<const Template*> all = {&dense_pack,        &dense_tiled, &conv2d_nchwc,
                                      &depthwise_nchwc,   &batch_matmul_pack,
                                      &dense_gpu,         &conv2d_direct_gpu};
  // Test-only templates: visible only while TUNEFLEET_ENABLE_TEST_TEMPLATES=1,
  // checked on every call so tests can setenv() before looking them up.
  if (TestTemplatesEnabled()) all.push_back(&dense_fault_test);
  return all;
}

absl::StatusOr<const Template*> FindTemplate(const std::string& name) {
  std::vector<std::string> names;
  for (const Template* t : AllTemplates()) {
    if (t->name() == name) return t;
    names.push_back(t->name());
  }
  return absl::NotFoundError(
      absl::StrCat("unknown template \"", name, "\" (known: ", absl::StrJoin(names, ", "), ")"));
}

bool IsCudaTargetString(const std::string& target) {
  return IsCudaTarget(target) || absl::StrContains(target, "-mtriple=nvptx64");
}

absl::StatusOr<const Template*> DefaultTemplate(const std::string& workload_name,
                                                const std::string& target) {
  const bool gpu = IsCudaTargetString(target);
  for (const Template* t : AllTemplates()) {
    if (t->name() == "dense_fault.test") continue;  // test-only, never a default
    if (t->is_gpu() != gpu) continue;
    if (t->workload_name() == workload_name) return t;  // the first listed is the best one
  }
  return absl::NotFoundError(absl::StrCat("no ", gpu ? "CUDA" : "CPU", " template for workload \"",
                                          workload_name, "\""));
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

}  // namespace tunefleet
