// The fast CPU conv2d template, in the spirit of AutoTVM's x86
// conv2d_NCHWc: activations blocked by channels (NCHW[x]c), weights packed
// to [K/oc_bn][C/ic_bn][R][S][ic_bn][oc_bn], and a register tile of
// `tile_ow` output pixels x `tile_oc` output channels accumulated with vector
// FMAs (one input value broadcast against a vector of weights), inside a
// parallel loop over (batch, output-channel block, output row). A pointwise
// convolution (1x1, no padding) is tiled as one row of all its output
// pixels (TiledConvShape in nchwc_layout.h, as oneDNN's 1x1 kernels; a
// strided one reads the pixels a pass gathered first, at stride 1), and
// where the rows are too few for the cores, each row's tiles are split into
// parts (SplitRows).
//
// Knobs:
//   tile_ic   input-channel block (a divisor of C)
//   tile_oc   output-channel block (a divisor of K): the tile's vector width
//   tile_ow   at most this many output pixels per register tile; a row it
//             does not divide is cut into as few tiles as that allows, as
//             even as they can be (RowTiling in nchwc_layout.h); values
//             that cut alike are one kernel, measured once. Its values are
//             those of the image's row even where a pointwise convolution's
//             rows are joined (the joined row is what they cut)
//   vec       vector lanes (4 SSE/NEON, 8 AVX2, 16 AVX-512); the tile's
//             vectors are gcd(vec, tile_oc) lanes wide
//   reduce    reduction loop order: "c_kh_kw_ic" (input-channel blocks
//             outermost), "c_kh_ic_kw" (the same with the kernel-width loop
//             innermost and unrolled, AutoTVM's unroll_kw) or "kh_kw_c_ic"
//             (kernel taps outermost); each also with the suffix
//             "_inline_pad": the input is read unpadded, interior tiles run
//             unguarded and border tiles skip the taps that fall outside the
//             image, so the timed body makes no padded copy of the input
//             (appended choices of the last knob, so the indices of older
//             records stay valid); "icc_outer_kh_kw_ic" / "icc_outer_kh_ic_kw"
//             (padding inline too) parallelise over (batch, output-channel
//             block) only and loop the input-channel blocks outside the
//             rows, so one block's weights stay in L1 across the image while
//             the partial sums go through the output (for small images with
//             many channels, whose weights overflow L2);
//             "icc_outer_shared_kh_kw_ic" / "icc_outer_shared_kh_ic_kw"
//             (appended last) do the same with the output-channel blocks
//             in groups whose weights fit half of L2, each group reducing
//             one chunk of input channels (its weights within a quarter of
//             L1) for all its blocks in turn, so the input is read from
//             memory once per group instead of once per block (the
//             default of a pointwise convolution). Orders that
//             build one kernel are declared so (a 1x1 kernel has no taps
//             to order; without padding "_inline_pad" changes nothing).
//             For a 3x3, stride-1, undilated, ungrouped convolution also
//             "winograd_f2" and "winograd_f4": Winograd's F(2x2, 3x3) or
//             F(4x4, 3x3) (winograd.h), whose products over the tiles are
//             register-tiled by tile_ow tiles x tile_oc channels.
//
// What is timed follows the workload's `layout`:
//   "NCHW"   the kernel takes and returns NCHW tensors, so packing the input
//            and the weights and unpacking the output are all timed;
//   "NCHWc"  the network runs blocked end to end, as TVM compiles it after
//            alter_op_layout and as oneDNN runs with format_tag::any: the
//            input arrives blocked, the weights were packed when the model
//            was compiled, the output stays blocked. Those three transforms
//            move to the kernel's untimed prepare/finish stages
//            (common/kernel_abi.h); zero padding of the input stays timed.
//            The input arrives blocked by tile_ic channels, or by the
//            workload's in_block where it gives one (conv_args.h: a
//            compiled model's kernel reading what its producer wrote,
//            blocked otherwise): the pass that pads or subsamples it
//            converts it, and a reduction reading it unpadded reads any
//            multiple of tile_ic within a group's channels in place (its
//            values are broadcast one at a time); any other block is
//            copied into tile_ic's first.
#ifndef TUNEFLEET_TUNER_CORE_TEMPLATES_CONV2D_NCHWC_X86_H_
#define TUNEFLEET_TUNER_CORE_TEMPLATES_CONV2D_NCHWC_X86_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "tuner_core/templates/template.h"
#include "tuner_core/workloads/conv_args.h"

namespace tunefleet {

const Template& Conv2dNchwcX86Template();

// Whether the kernel of `config` for `workload` (NCHWc) copies its input
// before its reduction reads it, when the input arrives blocked by
// `data_block` channels: a padding or subsampling pass (Winograd's
// included), or a block its reduction cannot read in place (not a
// multiple of tile_ic, or holding channels of several groups).
// InvalidArgument for a config the template does not take or a block that
// does not divide C.
[[nodiscard]] absl::StatusOr<bool> Conv2dNchwcCopiesInput(const Workload& workload,
                                                          const Config& config, int64_t data_block);

// The "reduce" value a config of `conv` gets with no measurement to go by:
// Winograd where it pays (WinogradDefaultTile), "icc_outer_shared_kh_kw_ic"
// for a pointwise convolution (its input read once per group of output
// channel blocks, each chunk of its weights kept in L1: on a Zen 3 at 2
// threads at least as fast as the other orders on each of 11 1x1 layers
// of ResNet-50, DenseNet-121 and ResNeXt-50 measured, 1.1-1.4x on those
// whose input outgrows L2), "icc_outer_kh_ic_kw" for an ungrouped stride-1
// convolution where at least a tenth of the (pixel, tap) pairs read the
// zero padding (LiveTapShare below kUnpaddedBelowLiveTapShare: atrous
// rates near the map's size, 3x3 kernels on 7x7 maps), which then reads
// its input unpadded and skips the taps in the padding instead of copying
// the input into a padded buffer and multiplying zeros (on a Zen 5 at 2
// threads, AVX-512 code / AVX2 code: DeepLabV3's 2048-channel 3x3 at rates
// 12 and 24 on 28x28 3.8-4.4x / 3.1-3.3x and 13-17x / 12-17x faster, rate
// 4 1.2x / 1.06x, ResNet's 7x7 layers 1.2x / 1.15-1.25x), else
// "c_kh_kw_ic".
inline constexpr double kUnpaddedBelowLiveTapShare = 0.9;
std::string Conv2dNchwcDefaultReduce(const ConvArgs& conv);

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_TEMPLATES_CONV2D_NCHWC_X86_H_
