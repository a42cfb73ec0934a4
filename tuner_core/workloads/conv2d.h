// The conv2d_nchw workload, fp32, NCHW data and KCRS (OIHW) kernel:
//   output[n, k, oh, ow] = sum_{c, r, s} data[n, c, ih, iw] * kernel[k, c, r, s]
//   ih = oh*stride_h - pad_top + r*dil_h,  iw = ow*stride_w - pad_left + s*dil_w
// with taps outside the input reading zero. Keys, shorthands and the output
// size are documented in conv_args.h; K is the number of output channels.
// Tensors: "data" [N, C, H, W], "kernel" [K, C, R, S], "output" [N, K, OH, OW].
// The accessors, FLOP count and reference are ConvWorkload's (conv_workload.h).
#ifndef TUNEFLEET_TUNER_CORE_WORKLOADS_CONV2D_H_
#define TUNEFLEET_TUNER_CORE_WORKLOADS_CONV2D_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "tuner_core/workloads/conv_args.h"
#include "tuner_core/workloads/conv_workload.h"

namespace tunefleet {

class Conv2dWorkload final : public ConvWorkload {
 public:
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<Conv2dWorkload>> Make(
      const nlohmann::json& args);
  // `workload` as a conv2d_nchw one; InvalidArgument naming `user` when it is not.
  [[nodiscard]] static absl::StatusOr<const Conv2dWorkload*> From(const Workload& workload,
                                                                  const std::string& user);

  // Output channels.
  int64_t k() const { return conv_args().k; }

 private:
  explicit Conv2dWorkload(const ConvArgs& a);
};

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_WORKLOADS_CONV2D_H_
