// The CPU template of grouped convolutions with few channels per group
// (1 < group, K/group below 16: ResNeXt's 4 and 8, RegNet's 8, a depthwise
// convolution exported as a grouped one): conv2d_nchwc.x86's blocks lie
// within one group, so 4 output channels per group are a quarter of an
// AVX-512 vector and the input arrives in blocks no other layer writes.
// Here a channel block holds `tile_oc / (K/group)` whole groups: a vector
// of output channels spans several groups, each lane reducing over its own
// group's input channels (the block of the same groups' inputs, loaded once
// per tap and input channel and shuffled so that every lane sees its own
// group's channel; the code generator's lane window), with the direct
// convolution's register tile, loop orders and unpadded border handling
// (direct_conv.h). Weights are packed [K/tile_oc][R][S][C/group][tile_oc];
// the blocks are those of the layers around it (16 channels and 4 groups
// of 4 on AVX-512), so a compiled model changes no layout around it.
//
// Knobs:
//   tile_oc   output channels per block: whole groups (a multiple of
//             K/group whose group count divides the groups), up to 64;
//             the input block holds the same groups' input channels
//   tile_ow   at most this many output pixels per register tile
//             (conv2d_nchwc.x86's)
//   vec       vector lanes (4, 8, 16)
//   reduce    "kh_kw_ic" or "kh_ic_kw" (the kernel-width loop innermost and
//             unrolled), each with "_inline_pad": the input read unpadded,
//             border tiles skipping the taps in the padding
//
// Layouts as conv2d_nchwc.x86's (NCHW: every transform timed; NCHWc: the
// input arrives blocked by the input block or the workload's in_block, any
// multiple of which an unpadded reduction reads in place).
#ifndef TUNEFLEET_TUNER_CORE_TEMPLATES_GROUP_CONV2D_NCHWC_X86_H_
#define TUNEFLEET_TUNER_CORE_TEMPLATES_GROUP_CONV2D_NCHWC_X86_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "tuner_core/templates/template.h"
#include "tuner_core/workloads/conv_args.h"

namespace tunefleet {

const Template& GroupConv2dNchwcX86Template();

// Whether the template takes `conv`: grouped, fewer than 16 output
// channels per group (conv2d_nchwc.x86 fills a vector within one group
// from there), and the input channels of the groups of 16 output channels
// at most 32 (two vectors: the window one load covers).
bool GroupConv2dNchwcApplies(const ConvArgs& conv);

// What a config gets with no measurement to go by (toolchain/default_config):
// the kernel-width loop innermost and unrolled, the input read unpadded
// (each of the 10 grouped tasks of ResNeXt-50 and RegNet-Y-400MF, tuned
// with 30 trials on a Zen 5, was fastest so), and with one vector of
// output channels per column about 12 columns (10 of 10 tuned best at
// 12-16 with 16-lane vectors and 14 with 8: each column needs its
// accumulator and its input's shuffle, no broadcast register shared).
inline constexpr const char* kGroupConv2dNchwcDefaultReduce = "kh_ic_kw_inline_pad";
inline constexpr int kGroupConv2dNchwcDefaultColumns = 12;

// Conv2dNchwcCopiesInput's question for this template's kernels: whether
// `config`'s kernel copies its input (a padding or subsampling pass, or a
// block that is no multiple of its input block) when it arrives blocked by
// `data_block` channels.
[[nodiscard]] absl::StatusOr<bool> GroupConv2dNchwcCopiesInput(const Workload& workload,
                                                               const Config& config,
                                                               int64_t data_block);

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_TEMPLATES_GROUP_CONV2D_NCHWC_X86_H_
