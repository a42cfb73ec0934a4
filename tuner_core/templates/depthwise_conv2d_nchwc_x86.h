// The CPU depthwise conv2d template (channel multiplier 1), blocked like
// conv2d_nchwc.x86: channels in blocks of `tile_c` (NCHW[x]c), so one vector
// holds `vec` channels of one pixel; a register tile of at most `tile_ow` output
// pixels x `tile_c` channels accumulates the R x S taps with vector FMAs
// (input and weights both contiguous vectors), inside a parallel loop over
// (batch, channel block, output row); a 1x1 unpadded layer's rows are
// joined into one (TiledConvShape; a strided one's pixels gathered first),
// whose tiles are split into at least as many parallel parts as the rows
// were. Borders are handled in the loop nest (interior tiles unguarded,
// border tiles skipping the taps that fall into the padding), so the input
// is never copied into a padded buffer.
//
// Knobs: tile_c (a divisor of C), tile_ow (at most so many output pixels per
// tile, rows cut as in conv2d_nchwc.x86), vec
// (lanes, gcd with tile_c), unroll_kw (unroll the kernel-width loop).
// Timing follows the workload's layout as in conv2d_nchwc.x86, except that
// there is no padding pass to time.
#ifndef TUNEFLEET_TUNER_CORE_TEMPLATES_DEPTHWISE_CONV2D_NCHWC_X86_H_
#define TUNEFLEET_TUNER_CORE_TEMPLATES_DEPTHWISE_CONV2D_NCHWC_X86_H_

#include "tuner_core/templates/template.h"

namespace tunefleet {

const Template& DepthwiseConv2dNchwcX86Template();

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_TEMPLATES_DEPTHWISE_CONV2D_NCHWC_X86_H_
