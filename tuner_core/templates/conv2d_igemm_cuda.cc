#include "tuner_core/templates/conv2d_igemm_cuda.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "tuner_core/templates/gemm_cuda.h"
#include "tuner_core/workloads/conv2d.h"

namespace tunefleet {

constexpr Template::Names kNames = {
    "conv2d_igemm.cuda", "conv2d_nchw",
    "CUDA implicit-GEMM conv2d: filters x pixels block tile over C*R*S, the im2col panel "
    "gathered from the input window as it is staged in shared memory",
    /*is_gpu=*/true};
constexpr const char* kTemplateName = kNames.name;

using namespace ir;  // NOLINT

[[nodiscard]] static absl::StatusOr<GpuGemmSpec> ConvGemm(const Workload& workload) {
  TF_ASSIGN_OR_RETURN(const Conv2dWorkload* conv, Conv2dWorkload::From(workload, kTemplateName));
  const ConvArgs a = conv->conv_args();
  if (a.in_block != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        kTemplateName, " reads NCHW tensors: in_block=", a.in_block, " is for blocked templates"));
  }
  if (a.group != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(kTemplateName, " computes ungrouped convolutions only (group=", a.group, ")"));
  }
  const int64_t RS = a.r * a.s, CRS = a.c * RS, pixels = a.out_h * a.out_w;
  GpuGemmSpec spec{.m = a.k, .n = pixels, .k = CRS, .batch = a.n};
  spec.a.element = [CRS](Expr, Expr f, Expr k) { return Load::Make("kernel", f * CRS + k); };
  spec.a.vectorizable = CRS % 4 == 0;
  // im2col(k = (c, r, s), p = (y, x)) = data[b][c][y*sh - pt + r*dh][x*sw - pl + s*dw], 0
  // outside the input. The load's index is clamped into the image, so it is
  // always in bounds whichever side the select takes.
  spec.b.element = [a, RS](Expr b, Expr p, Expr k) {
    Expr c = k / RS, r = (k % RS) / a.s, s = k % a.s;
    Expr ih = (p / a.out_w) * a.stride_h - a.pad_top + r * a.dil_h;
    Expr iw = (p % a.out_w) * a.stride_w - a.pad_left + s * a.dil_w;
    Expr inside = ih >= 0 && ih < a.h && iw >= 0 && iw < a.w;
    Expr ihc = Max(Min(ih, IntImm::Make(a.h - 1)), IntImm::Make(0));
    Expr iwc = Max(Min(iw, IntImm::Make(a.w - 1)), IntImm::Make(0));
    return Select::Make(inside, Load::Make("data", ((b * a.c + c) * a.h + ihc) * a.w + iwc),
                        FloatImm::Make(0.0));
  };
  spec.b.k_contiguous = false;  // neighbouring pixels: neighbouring input columns
  spec.b.vectorizable = false;
  spec.store = [a, pixels](Expr b, Expr f, Expr p, Expr value) {
    return Store::Make("output", value, (b * a.k + f) * pixels + p);
  };
  spec.store_vectorizable = pixels % 4 == 0;
  return spec;
}

[[nodiscard]] static absl::StatusOr<ConfigSpace> DefineTemplateSpace(const Workload& workload) {
  TF_ASSIGN_OR_RETURN(GpuGemmSpec spec, ConvGemm(workload));
  ConfigSpace space;
  TF_RETURN_IF_ERROR(DefineGpuGemmSpace(spec, space));
  return space;
}

[[nodiscard]] static absl::StatusOr<LoweredFunc> InstantiateTemplate(const Workload& workload,
                                                                     const Config& config) {
  TF_ASSIGN_OR_RETURN(GpuGemmSpec spec, ConvGemm(workload));
  TF_ASSIGN_OR_RETURN(Stmt nest, GpuGemmNest(spec, config, kTemplateName));
  return KernelFunc(Conv2dIgemmCudaTemplate(), workload, nest);
}

const Template& Conv2dIgemmCudaTemplate() {
  static const Template kTemplate(kNames, &DefineTemplateSpace, &InstantiateTemplate);
  return kTemplate;
}

}  // namespace tunefleet
