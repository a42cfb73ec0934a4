// The direct convolution of the NCHW[x]c CPU templates (conv2d_nchwc.x86
// and group_conv2d_nchwc.x86): a register tile of output pixels x output
// channels accumulated with vector FMAs over the packed weights, inside a
// parallel loop over (batch, output-channel block, output row). The
// templates choose the blocks, the tile and the loop order (their knobs);
// this builds the loops.
//
// Blocks lie within one convolution group, each input value broadcast
// against a vector of weights; or, with lane groups, a block holds the
// channels of `lane_groups` whole groups (group_conv2d_nchwc.x86: ResNeXt's
// 4 channels per group fill a 16-lane vector with 4 groups), and each lane
// reads its own group's input channel, a vector load and a shuffle per FMA.
#ifndef TUNEFLEET_TUNER_CORE_TEMPLATES_DIRECT_CONV_H_
#define TUNEFLEET_TUNER_CORE_TEMPLATES_DIRECT_CONV_H_

#include <cstdint>
#include <string>

#include "tuner_core/ir/ir.h"
#include "tuner_core/templates/nchwc_layout.h"
#include "tuner_core/workloads/conv_args.h"

namespace tunefleet {

// The shape as the compute tiles it (TiledConvShape) and the config's
// choices.
struct DirectConvParams : ConvArgs {
  // ic_bn / oc_bn: the input / output channel blocks. ICC: the input-channel
  // blocks one output channel reduces over (its group's; 1 with lane
  // groups); OCC: all output-channel blocks; OCC_group: those of a group.
  int64_t ic_bn = 1, oc_bn = 1, ICC = 1, OCC = 1, OCC_group = 1;
  // Groups whose channels share one block: oc_bn = lane_groups * K/group
  // and ic_bn = lane_groups * C/group. 1: blocks lie within a group.
  int64_t lane_groups = 1;
  RowTiling tile;
  Padding pad;
  std::string reduce;  // loop order: "c_kh_kw_ic", "c_kh_ic_kw" or "kh_kw_c_ic"
  // The input is read unpadded: interior tiles unguarded, border tiles
  // skip the taps in the padding.
  bool inline_pad = false;
  bool icc_outer = false;  // input-channel blocks outside the rows
  // With icc_outer: the output-channel blocks one work item computes and
  // the input-channel blocks each of its passes over the rows reduces.
  int64_t oc_share = 1, icc_chunk = 1;
  // The workload's output rows (out_h is 1 where TiledConvShape joined them).
  int64_t image_rows = 1;
};

// The input channels of one block a reduction steps over: ic_bn, or with
// lane groups one group's, C/group.
int64_t ReduceLanes(const DirectConvParams& p);

// The plan around a direct convolution of `p`'s blocks over the workload
// `conv` (BlockedConvGeometry), p->pad set here (ConvInputPadding): the
// input read unpadded where p->inline_pad, any multiple of its block read in
// place within `reads_blocks_within` channels (a group's, or all of them
// with lane groups), the packed weights' size.
BlockedConvPlan DirectConvPlan(const ConvArgs& conv, DirectConvParams* p,
                               int64_t reads_blocks_within);

// kernel [K][C/group][R][S] -> `dst` [K/oc_bn][ICC][R][S][ReduceLanes][oc_bn].
ir::Stmt DirectConvPackKernel(const DirectConvParams& p, const std::string& dst);

// `data` (blocked by `data_block` channels, a multiple of ic_bn; padded
// unless p.inline_pad) convolved with the packed `kernel_vec` into blocked
// `out`, each part of the output marked ready (OutputReady) once final.
ir::Stmt DirectConvCompute(const DirectConvParams& p, const std::string& data, int64_t data_block,
                           const std::string& kernel_vec, const std::string& out);

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_TEMPLATES_DIRECT_CONV_H_
