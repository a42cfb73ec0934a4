// The depthwise_conv2d_nchw workload, fp32, channel multiplier 1: each
// channel is convolved with its own filter.
//   output[n, c, oh, ow] = sum_{r, s} data[n, c, ih, iw] * kernel[c, 0, r, s]
//   ih = oh*stride_h - pad_top + r*dil_h,  iw = ow*stride_w - pad_left + s*dil_w
// with taps outside the input reading zero. Keys, shorthands and the output
// size are those of conv2d_nchw (conv_args.h) without K.
// Tensors: "data" [N, C, H, W], "kernel" [C, 1, R, S], "output" [N, C, OH, OW].
// The accessors, FLOP count and reference are ConvWorkload's (conv_workload.h).
#ifndef TUNEFLEET_TUNER_CORE_WORKLOADS_DEPTHWISE_CONV2D_H_
#define TUNEFLEET_TUNER_CORE_WORKLOADS_DEPTHWISE_CONV2D_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "tuner_core/workloads/conv_args.h"
#include "tuner_core/workloads/conv_workload.h"

namespace tunefleet {

class DepthwiseConv2dWorkload final : public ConvWorkload {
 public:
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<DepthwiseConv2dWorkload>> Make(
      const nlohmann::json& args);
  // `workload` as a depthwise_conv2d_nchw one; InvalidArgument naming `user`
  // when it is not.
  [[nodiscard]] static absl::StatusOr<const DepthwiseConv2dWorkload*> From(const Workload& workload,
                                                                           const std::string& user);

 private:
  explicit DepthwiseConv2dWorkload(const ConvArgs& a);
};

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_WORKLOADS_DEPTHWISE_CONV2D_H_
