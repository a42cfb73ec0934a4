#include "tuner_core/templates/group_conv2d_nchwc_x86.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/status_macros.h"
#include "tuner_core/templates/direct_conv.h"
#include "tuner_core/templates/loop_builder.h"
#include "tuner_core/templates/nchwc_layout.h"
#include "tuner_core/workloads/conv2d.h"

namespace tunefleet {

constexpr Template::Names kNames = {
    "group_conv2d_nchwc.x86", "conv2d_nchw",
    "NCHW[x]c grouped conv2d with whole groups per channel block: ow x oc register tile with "
    "vector FMAs, each lane reading its own group's input, packed weights, parallel rows",
    /*is_gpu=*/false};
constexpr const char* kTemplateName = kNames.name;

// Output channels per group from which conv2d_nchwc.x86's blocks fill an
// AVX-512 vector within one group.
constexpr int64_t kFullVectorGroup = 16;
constexpr int64_t kMaxBlock = 64;

bool GroupConv2dNchwcApplies(const ConvArgs& conv) {
  if (conv.group <= 1) return false;
  const int64_t group_k = conv.k / conv.group, group_c = conv.c / conv.group;
  // The input channels of a 16-channel block's groups within two vectors:
  // the code generator's lane window (wider, each lane would be a load).
  return group_k < kFullVectorGroup && CeilDiv(kFullVectorGroup, group_k) * group_c <= 32;
}

namespace {

constexpr absl::string_view kInlinePad = "_inline_pad";

// A config's parameters and its plan's geometry (all but the closures).
struct PlanParts {
  DirectConvParams p;
  BlockedConvPlan plan;
};

[[nodiscard]] absl::StatusOr<PlanParts> PlanOf(const Conv2dWorkload& conv, const Config& config) {
  PlanParts parts;
  DirectConvParams& p = parts.p;
  static_cast<ConvArgs&>(p) = TiledConvShape(conv.conv_args());
  p.image_rows = conv.out_h();
  TF_ASSIGN_OR_RETURN(p.oc_bn, config.GetInt("tile_oc"));
  TF_ASSIGN_OR_RETURN(const int64_t tile_ow, config.GetInt("tile_ow"));
  TF_ASSIGN_OR_RETURN(const int64_t vec, config.GetInt("vec"));
  TF_ASSIGN_OR_RETURN(const std::string reduce, config.GetString("reduce"));
  const int64_t group_k = p.k / p.group, group_c = p.c / p.group;
  if (p.oc_bn % group_k != 0 || p.group % (p.oc_bn / group_k) != 0) {
    return absl::InvalidArgumentError(absl::StrCat("tile_oc ", p.oc_bn, " is not whole groups of ",
                                                   group_k, " channels (", p.group, " groups)"));
  }
  p.lane_groups = p.oc_bn / group_k;
  p.ic_bn = p.lane_groups * group_c;
  p.ICC = 1;
  p.OCC = p.k / p.oc_bn;
  absl::string_view order = reduce;
  p.inline_pad = absl::ConsumeSuffix(&order, kInlinePad);
  p.reduce = absl::StrCat("c_", order);  // one input block per group: c's loop runs once
  TF_ASSIGN_OR_RETURN(p.tile, TileOutputRows(p.out_w, tile_ow, p.oc_bn, vec));
  // Each lane finds its group's channels in any multiple of the block.
  parts.plan = DirectConvPlan(conv.conv_args(), &p, /*reads_blocks_within=*/p.c);
  return parts;
}

}  // namespace

[[nodiscard]] static absl::StatusOr<ConfigSpace> DefineTemplateSpace(const Workload& workload) {
  TF_ASSIGN_OR_RETURN(const Conv2dWorkload* conv, Conv2dWorkload::From(workload, kTemplateName));
  const ConvArgs& a = conv->conv_args();
  if (!GroupConv2dNchwcApplies(a)) {
    return absl::InvalidArgumentError(
        absl::StrCat(kTemplateName, " takes grouped convolutions of fewer than ", kFullVectorGroup,
                     " output channels per group whose input channels fit two vectors, not ",
                     a.group, " groups of ", a.k / a.group, " (", a.c / a.group, " inputs each)"));
  }
  const int64_t group_k = a.k / a.group;
  std::vector<int64_t> blocks;
  for (int64_t groups = 1; groups * group_k <= kMaxBlock; ++groups) {
    if (a.group % groups == 0) blocks.push_back(groups * group_k);
  }
  ConfigSpace space;
  TF_RETURN_IF_ERROR(space.DefineKnob("tile_oc", blocks));
  TF_RETURN_IF_ERROR(DefineRowTileKnob(&space, a,
                                       {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 14, 16, 28, 32},
                                       /*max_whole_row=*/32));
  TF_RETURN_IF_ERROR(space.DefineKnob("vec", std::vector<int64_t>{4, 8, 16}));
  const std::vector<std::string> orders = {"kh_kw_ic_inline_pad", "kh_ic_kw_inline_pad", "kh_kw_ic",
                                           "kh_ic_kw"};
  TF_RETURN_IF_ERROR(space.DefineKnob("reduce", orders));
  // One kernel column: kh_ic_kw is kh_kw_ic; no padding: "_inline_pad"
  // reads the input as the padded orders do.
  std::vector<int64_t> kernel_of;
  for (absl::string_view value : orders) {
    const bool inline_pad = absl::ConsumeSuffix(&value, kInlinePad);
    kernel_of.push_back((inline_pad && a.padded() ? 10 : 0) + (value == "kh_ic_kw" && a.s > 1));
  }
  TF_RETURN_IF_ERROR(space.DeclareSameKernelChoices("reduce", kernel_of));
  return space;
}

// The register tile: width x (tile_oc / lanes) accumulators; one step
// (input channel, tap) reads the tile's weight vectors, each reused by
// every pixel, and for each FMA the pixel's input vector, shuffled (one at
// a time).
[[nodiscard]] static absl::StatusOr<RegisterDemand> TemplateRegisterDemand(const Workload& workload,
                                                                           const Config& config) {
  TF_ASSIGN_OR_RETURN(const Conv2dWorkload* conv, Conv2dWorkload::From(workload, kTemplateName));
  TF_ASSIGN_OR_RETURN(RegisterDemand demand, ConvRowTileDemand(conv->conv_args(), config));
  demand.vector_operands += 1;
  return demand;
}

[[nodiscard]] static absl::StatusOr<ir::LoweredFunc> InstantiateTemplate(const Workload& workload,
                                                                         const Config& config) {
  TF_ASSIGN_OR_RETURN(const Conv2dWorkload* conv, Conv2dWorkload::From(workload, kTemplateName));
  if (!GroupConv2dNchwcApplies(conv->conv_args())) {
    return absl::InvalidArgumentError(absl::StrCat(kTemplateName, " takes grouped convolutions"));
  }
  TF_ASSIGN_OR_RETURN(PlanParts parts, PlanOf(*conv, config));
  const DirectConvParams& p = parts.p;
  parts.plan.pack_kernel = [&](const std::string& kernel_vec) {
    return DirectConvPackKernel(p, kernel_vec);
  };
  parts.plan.compute = [&](const std::string& data, int64_t block, const std::string& kernel_vec,
                           const std::string& out) {
    return DirectConvCompute(p, data, block, kernel_vec, out);
  };
  return AssembleBlockedConv(parts.plan, GroupConv2dNchwcX86Template(), workload);
}

[[nodiscard]] absl::StatusOr<bool> GroupConv2dNchwcCopiesInput(const Workload& workload,
                                                               const Config& config,
                                                               int64_t data_block) {
  TF_ASSIGN_OR_RETURN(const Conv2dWorkload* conv, Conv2dWorkload::From(workload, kTemplateName));
  TF_ASSIGN_OR_RETURN(const PlanParts parts, PlanOf(*conv, config));
  return BlockedConvCopiesInput(parts.plan, data_block);
}

const Template& GroupConv2dNchwcX86Template() {
  static const Template kTemplate(kNames, &DefineTemplateSpace, &InstantiateTemplate,
                                  &TemplateRegisterDemand);
  return kTemplate;
}

}  // namespace tunefleet
