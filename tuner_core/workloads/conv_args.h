// What the NCHW 2-D convolution workloads (conv2d_nchw and
// depthwise_conv2d_nchw) share: parsing their arguments, working out the
// output size, and the inner loop of their references.
//
// Keys (JSON object):
//   N, C, H, W          batch, input channels, input height/width (1..2^20)
//   K                   output channels (1..2^20), conv2d only
//   R, S                kernel height/width (1..64)
//   stride_h, stride_w  default 1
//   pad_top, pad_left, pad_bottom, pad_right
//                       default 0; each less than the dilated kernel extent
//                       on its axis (dil*(kernel-1)+1), as TVM/PyTorch do
//   dil_h, dil_w        default 1
//   group               conv2d only: default 1; divides C and K (each output
//                       channel reads the C / group input channels of its
//                       group: ResNeXt, RegNet)
//   layout              "NCHW" (default) or "NCHWc": the tensors are NCHW
//                       either way. "NCHW" times the templates' packing to
//                       and from NCHW[x]c; "NCHWc" says the network runs
//                       blocked end to end (weights packed at compile time),
//                       so those transforms run untimed (see
//                       templates/conv2d_nchwc_x86.h).
//   in_block            conv2d with layout "NCHWc" only: the channel block
//                       the input arrives in (a divisor of C), where it is
//                       not the config's input-channel block: what a
//                       compiled model's kernel reading its producer's
//                       blocks as they are builds with. Absent: the
//                       config's. Templates that do not block their input
//                       refuse it.
// Input-only shorthands, expanded into the keys above (and never given
// together with them):
//   stride: s | [h, w]    dilation: d | [h, w]
//   padding: p | [h, w] | [top, left, bottom, right]
// Output size: out_h = (H + pad_top + pad_bottom - dil_h*(R-1) - 1)/stride_h + 1,
// likewise out_w; both must be at least 1.
#ifndef TUNEFLEET_TUNER_CORE_WORKLOADS_CONV_ARGS_H_
#define TUNEFLEET_TUNER_CORE_WORKLOADS_CONV_ARGS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace tunefleet {

inline constexpr int64_t kMaxConvKernelDim = 64;

struct ConvArgs {
  int64_t n = 1, c = 1, h = 1, w = 1;
  int64_t k = 1;  // output channels; c for depthwise
  int64_t r = 1, s = 1;
  int64_t stride_h = 1, stride_w = 1;
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  int64_t dil_h = 1, dil_w = 1;
  int64_t group = 1;  // conv2d's groups (depthwise: 1, its own kind)
  bool layout_nchwc = false;
  int64_t in_block = 0;  // 0: the config's input-channel block
  // Derived.
  int64_t out_h = 1, out_w = 1;

  // Whether any side is zero-padded.
  bool padded() const { return pad_top > 0 || pad_left > 0 || pad_bottom > 0 || pad_right > 0; }
};

// Whether "K" is an argument (conv2d) or the output channels are C
// (depthwise, channel multiplier 1).
enum class ConvOutChannels { kFromK, kSameAsC };

// Parses and checks `args` for workload `op`; InvalidArgument naming the key
// (or the shape, when the output would be empty) otherwise.
[[nodiscard]] absl::StatusOr<ConvArgs> ParseConvArgs(const std::string& op,
                                                     const nlohmann::json& args,
                                                     ConvOutChannels out_channels);

// The canonical args object: every explicit key, no shorthands.
nlohmann::json CanonicalConvArgs(const ConvArgs& a, ConvOutChannels out_channels);

// The share of (output pixel, tap) pairs whose tap reads inside the input
// rather than its zero padding: 1 unpadded, just under 1 for a 3x3 kernel
// padded by 1 on a large image, 0.18 for DeepLabV3's 3x3 taps at rate 24 on
// a 28x28 map (most of its taps read only padding for most pixels).
double LiveTapShare(const ConvArgs& a);

// Adds one input plane ([H, W]) convolved with one filter plane ([R, S])
// into one output row. The in-bounds output columns of each kernel column
// are worked out once here, so the innermost loop has no bounds checks and
// runs unit-stride over the output row.
class ConvRowAccumulator {
 public:
  explicit ConvRowAccumulator(const ConvArgs& a);

  // acc[ow] += sum_{r,s} in[ih, iw] * filter[r, s] over in-bounds taps,
  // ih = oh*stride_h - pad_top + r*dil_h, iw = ow*stride_w - pad_left + s*dil_w,
  // for every ow in [0, out_w).
  void Accumulate(const float* in, const float* filter, int64_t oh, double* acc) const;

 private:
  ConvArgs a_;
  // Per kernel column s: output columns [ow_begin, ow_end) read inside the
  // input row, and the input column offset of output column 0.
  std::vector<int64_t> ow_begin_, ow_end_, iw_offset_;
};

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_WORKLOADS_CONV_ARGS_H_
