#include "tuner_core/templates/conv2d_nchwc_x86.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/status_macros.h"
#include "tuner_core/templates/direct_conv.h"
#include "tuner_core/templates/loop_builder.h"
#include "tuner_core/templates/nchwc_layout.h"
#include "tuner_core/templates/winograd.h"
#include "tuner_core/workloads/conv2d.h"

namespace tunefleet {

constexpr Template::Names kNames = {"conv2d_nchwc.x86", "conv2d_nchw",
                                    "NCHW[x]c blocked conv2d: ow x oc register tile with vector "
                                    "FMAs, packed weights, parallel rows; Winograd F(2x2|4x4, "
                                    "3x3) for 3x3 stride-1 convolutions",
                                    /*is_gpu=*/false};
constexpr const char* kTemplateName = kNames.name;
namespace {

using namespace ir;  // NOLINT

// A "reduce" knob value: its loop order ("c_kh_kw_ic", "c_kh_ic_kw" or
// "kh_kw_c_ic"), whether the input is read unpadded (the "_inline_pad"
// suffix) and whether the input-channel blocks go outside the rows (the
// "icc_outer_" prefix, whose order is the rest after "c_"; unpadded too;
// "icc_outer_shared_": with OcShare's groups and IccChunk's chunks).
// Or, "winograd_f<m>", Winograd's F(m x m, 3 x 3) (winograd.h) in place of
// the direct reduction.
struct ReduceChoice {
  std::string order;
  bool inline_pad = false;
  bool icc_outer = false;
  bool shared = false;   // "icc_outer_shared_": OcShare and IccChunk
  int64_t winograd = 0;  // the output tile's side, or 0: direct
};
ReduceChoice ParseReduce(absl::string_view value) {
  constexpr absl::string_view kInlinePad = "_inline_pad";
  constexpr absl::string_view kIccOuter = "icc_outer_";
  constexpr absl::string_view kShared = "shared_";
  ReduceChoice choice;
  choice.winograd = WinogradTileOf(value);
  if (choice.winograd > 0) return choice;
  if (absl::ConsumePrefix(&value, kIccOuter)) {
    choice.icc_outer = true;
    choice.shared = absl::ConsumePrefix(&value, kShared);
    choice.inline_pad = true;
    choice.order = absl::StrCat("c_", value);
  } else {
    choice.inline_pad = absl::ConsumeSuffix(&value, kInlinePad);
    choice.order = std::string(value);
  }
  return choice;
}

// What an "icc_outer_shared_" work item keeps in cache: the weights of one
// output-channel block's input chunk in L1 (a quarter of the 32 KiB L1
// data cache x86 cores have had since Haswell) and those of its group of
// output-channel blocks in L2 (half of the 512 KiB of Zen 2-3's, the
// smallest of the x86 cores served).
constexpr int64_t kChunkWeightBytes = 8 * 1024;
constexpr int64_t kShareWeightBytes = 256 * 1024;

// The most of `blocks` blocks of `block_bytes` each (a divisor of
// `blocks`) that fit in `budget`, at least one.
int64_t MostBlocksWithin(int64_t blocks, int64_t block_bytes, int64_t budget) {
  int64_t most = 1;
  for (int64_t d = 1; d <= blocks; ++d) {
    if (blocks % d == 0 && d * block_bytes <= budget) most = d;
  }
  return most;
}

// The output-channel blocks of one "icc_outer_shared_" work item: the most
// (a divisor of a convolution group's blocks) whose weights fit in
// kShareWeightBytes, at least one. The item reduces each input chunk for
// all of them while the chunk is in cache, so the input comes from memory
// once per group rather than once per output-channel block: where it is
// larger than the caches (DenseNet's and ResNet's 1x1 layers on 56x56 with
// 256-512 channels: 3-6 MiB, read once per 16 output channels) that
// traffic is what the kernel waits on.
int64_t OcShare(const DirectConvParams& p) {
  return MostBlocksWithin(p.OCC_group, p.ICC * p.ic_bn * p.oc_bn * p.r * p.s * 4,
                          kShareWeightBytes);
}

// The input-channel blocks one "icc_outer_shared_" pass over the rows
// reduces: the most (a divisor of ICC) whose weights for one output-channel
// block fit in kChunkWeightBytes, at least one; the partial sums then go
// through the output once per chunk rather than once per block.
int64_t IccChunk(const DirectConvParams& p) {
  return MostBlocksWithin(p.ICC, p.ic_bn * p.oc_bn * p.r * p.s * 4, kChunkWeightBytes);
}

// A config's parameters and its plan's geometry (all but the closures):
// what InstantiateTemplate assembles and Conv2dNchwcCopiesInput asks.
struct PlanParts {
  DirectConvParams p;
  ReduceChoice choice;
  int64_t tile_ow = 1, vec = 1;
  BlockedConvPlan plan;
};

[[nodiscard]] absl::StatusOr<PlanParts> PlanOf(const Conv2dWorkload& conv, const Config& config) {
  PlanParts parts;
  DirectConvParams& p = parts.p;
  // The compute tiles the joined shape; the plan's layout transforms keep
  // the workload's.
  static_cast<ConvArgs&>(p) = TiledConvShape(conv.conv_args());
  p.image_rows = conv.out_h();
  TF_ASSIGN_OR_RETURN(p.ic_bn, config.GetInt("tile_ic"));
  TF_ASSIGN_OR_RETURN(p.oc_bn, config.GetInt("tile_oc"));
  TF_ASSIGN_OR_RETURN(parts.tile_ow, config.GetInt("tile_ow"));
  TF_ASSIGN_OR_RETURN(parts.vec, config.GetInt("vec"));
  TF_ASSIGN_OR_RETURN(const std::string reduce, config.GetString("reduce"));
  parts.choice = ParseReduce(reduce);
  p.reduce = parts.choice.order;
  p.inline_pad = parts.choice.inline_pad;
  p.icc_outer = parts.choice.icc_outer;
  if ((p.c / p.group) % p.ic_bn != 0 || (p.k / p.group) % p.oc_bn != 0) {
    return absl::InvalidArgumentError(absl::StrCat("channel blocks ", p.ic_bn, "/", p.oc_bn,
                                                   " do not divide a group's C=", p.c / p.group,
                                                   "/K=", p.k / p.group));
  }
  p.ICC = p.c / p.group / p.ic_bn;
  p.OCC = p.k / p.oc_bn;
  p.OCC_group = p.k / p.group / p.oc_bn;
  if (parts.choice.shared) {
    p.oc_share = OcShare(p);
    p.icc_chunk = IccChunk(p);
  }
  TF_ASSIGN_OR_RETURN(p.tile, TileOutputRows(p.out_w, parts.tile_ow, p.oc_bn, parts.vec));

  if (parts.choice.winograd > 0) {
    if (!WinogradApplies(conv.conv_args())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "reduce \"", reduce, "\" needs a 3x3, stride-1, undilated, ungrouped convolution"));
    }
    parts.plan = BlockedConvGeometry(conv.conv_args(), p.ic_bn, p.oc_bn);
    parts.plan.pad = WinogradInputPadding(conv.conv_args(), parts.choice.winograd);
    parts.plan.kernel_elems = WinogradKernelElements(conv.conv_args(), parts.choice.winograd);
    return parts;
  }
  parts.plan = DirectConvPlan(conv.conv_args(), &p, /*reads_blocks_within=*/p.c / p.group);
  return parts;
}

}  // namespace

[[nodiscard]] static absl::StatusOr<ConfigSpace> DefineTemplateSpace(const Workload& workload) {
  TF_ASSIGN_OR_RETURN(const Conv2dWorkload* conv, Conv2dWorkload::From(workload, kTemplateName));
  const ConvArgs& a = conv->conv_args();
  ConfigSpace space;
  // Channel blocks within a group (the whole tensor when ungrouped).
  TF_RETURN_IF_ERROR(space.DefineKnob("tile_ic", Divisors(a.c / a.group, 64)));
  TF_RETURN_IF_ERROR(space.DefineKnob("tile_oc", Divisors(a.k / a.group, 64)));
  // Small counts, plus the row itself when it fits.
  TF_RETURN_IF_ERROR(DefineRowTileKnob(&space, a,
                                       {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 14, 16, 28, 32},
                                       /*max_whole_row=*/32));
  TF_RETURN_IF_ERROR(space.DefineKnob("vec", std::vector<int64_t>{4, 8, 16}));
  std::vector<std::string> orders = {"c_kh_kw_ic",
                                     "c_kh_ic_kw",
                                     "kh_kw_c_ic",
                                     "c_kh_kw_ic_inline_pad",
                                     "c_kh_ic_kw_inline_pad",
                                     "kh_kw_c_ic_inline_pad",
                                     "icc_outer_kh_kw_ic",
                                     "icc_outer_kh_ic_kw"};
  if (WinogradApplies(a)) {
    for (int64_t m : kWinogradTiles) orders.push_back(WinogradReduceValue(m));
  }
  orders.push_back("icc_outer_shared_kh_kw_ic");
  orders.push_back("icc_outer_shared_kh_ic_kw");
  TF_RETURN_IF_ERROR(space.DefineKnob("reduce", orders));
  // Orders that build one kernel: the taps' loops are empty for a 1x1
  // kernel (all orders alike) and kw's for one column (c_kh_ic_kw is
  // c_kh_kw_ic); without padding, border tiles never occur and the
  // "_inline_pad" orders read the input as the others do (in the NCHW
  // layout its blocking pass differs from theirs only in loop names).
  std::vector<int64_t> kernel_of;
  for (const std::string& value : orders) {
    const ReduceChoice r = ParseReduce(value);
    if (r.winograd > 0) {
      kernel_of.push_back(1000 + r.winograd);
      continue;
    }
    int64_t loops = 0;  // c_kh_kw_ic
    if (r.order == "kh_kw_c_ic" && a.r * a.s > 1) loops = 2;
    if (r.order == "c_kh_ic_kw" && a.s > 1) loops = 1;
    kernel_of.push_back((r.icc_outer ? 100 : 0) + (r.shared ? 100 : 0) +
                        (r.inline_pad && a.padded() ? 10 : 0) + loops);
  }
  TF_RETURN_IF_ERROR(space.DeclareSameKernelChoices("reduce", kernel_of));
  return space;
}

// Compute's register tile: width x (tile_oc / lanes) accumulators (width:
// the widest tile tile_ow cuts the row into); one step (input channel, tap)
// reads the tile_oc / lanes weight vectors of its input channel, each reused
// by every pixel of the tile, and one input value per pixel, broadcast (one
// register at a time).
[[nodiscard]] static absl::StatusOr<RegisterDemand> TemplateRegisterDemand(const Workload& workload,
                                                                           const Config& config) {
  TF_ASSIGN_OR_RETURN(const Conv2dWorkload* conv, Conv2dWorkload::From(workload, kTemplateName));
  TF_ASSIGN_OR_RETURN(const std::string reduce, config.GetString("reduce"));
  // Winograd's products tile the tiles as the direct kernel tiles a row
  // (WinogradCompute: at most as many as there are).
  const int64_t m = WinogradTileOf(reduce);
  TF_ASSIGN_OR_RETURN(
      RegisterDemand demand,
      m > 0 ? ConvRowTileDemand(conv->conv_args(), config, WinogradTiles(conv->conv_args(), m))
            : ConvRowTileDemand(conv->conv_args(), config));
  demand.broadcast_operands = 1;
  return demand;
}

[[nodiscard]] static absl::StatusOr<LoweredFunc> InstantiateTemplate(const Workload& workload,
                                                                     const Config& config) {
  TF_ASSIGN_OR_RETURN(const Conv2dWorkload* conv, Conv2dWorkload::From(workload, kTemplateName));
  TF_ASSIGN_OR_RETURN(PlanParts parts, PlanOf(*conv, config));
  const DirectConvParams& p = parts.p;
  BlockedConvPlan& plan = parts.plan;
  if (parts.choice.winograd > 0) {
    const WinogradConv w{conv->conv_args(),
                         parts.choice.winograd,
                         p.ic_bn,
                         p.oc_bn,
                         ConvTileWidth(conv->conv_args(), parts.tile_ow),
                         parts.vec};
    plan.pack_kernel = [&](const std::string& vec) { return WinogradPackKernel(w, vec); };
    plan.compute = [&](const std::string& data, int64_t, const std::string& kernel_vec,
                       const std::string& out) {
      return WinogradCompute(w, data, kernel_vec, out);
    };
    return AssembleBlockedConv(plan, Conv2dNchwcX86Template(), workload);
  }
  plan.pack_kernel = [&](const std::string& kernel_vec) {
    return DirectConvPackKernel(p, kernel_vec);
  };
  plan.compute = [&](const std::string& data, int64_t block, const std::string& vec,
                     const std::string& out) {
    return DirectConvCompute(p, data, block, vec, out);
  };
  return AssembleBlockedConv(plan, Conv2dNchwcX86Template(), workload);
}

[[nodiscard]] absl::StatusOr<bool> Conv2dNchwcCopiesInput(const Workload& workload,
                                                          const Config& config,
                                                          int64_t data_block) {
  TF_ASSIGN_OR_RETURN(const Conv2dWorkload* conv, Conv2dWorkload::From(workload, kTemplateName));
  TF_ASSIGN_OR_RETURN(const PlanParts parts, PlanOf(*conv, config));
  return BlockedConvCopiesInput(parts.plan, data_block);
}

std::string Conv2dNchwcDefaultReduce(const ConvArgs& conv) {
  if (const int64_t m = WinogradDefaultTile(conv); m > 0) return WinogradReduceValue(m);
  if (PointwiseConv(conv)) return "icc_outer_shared_kh_kw_ic";
  if (conv.stride_h == 1 && conv.stride_w == 1 && conv.group == 1 &&
      LiveTapShare(conv) < kUnpaddedBelowLiveTapShare) {
    return "icc_outer_kh_ic_kw";
  }
  return "c_kh_kw_ic";
}

const Template& Conv2dNchwcX86Template() {
  static const Template kTemplate(kNames, &DefineTemplateSpace, &InstantiateTemplate,
                                  &TemplateRegisterDemand);
  return kTemplate;
}

}  // namespace tunefleet
