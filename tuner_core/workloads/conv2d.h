// The conv2d_nchw workload, fp32, NCHW data and KCRS (OIHW) kernel:
//   output[n, k, oh, ow] = sum_{c, r, s} data[n, c, ih, iw] * kernel[k, c, r, s]
//   ih = oh*stride_h - pad_top + r*dil_h,  iw = ow*stride_w - pad_left + s*dil_w
// with taps outside the input reading zero. Keys, shorthands and the output
// size are documented in conv_args.h; K is the number of output channels.
// Tensors: "data" [N, C, H, W], "kernel" [K, C, R, S], "output" [N, K, OH, OW].
#ifndef TUNEFLEET_TUNER_CORE_WORKLOADS_CONV2D_H_
#define TUNEFLEET_TUNER_CORE_WORKLOADS_CONV2D_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tuner_core/workloads/conv_args.h"
#include "tuner_core/workloads/workload.h"

namespace tunefleet {

class Conv2dWorkload final : public Workload {
 public:
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<Conv2dWorkload>> Make(
      const nlohmann::json& args);
  // `workload` as a conv2d_nchw one; InvalidArgument naming `user` when it is not.
  [[nodiscard]] static absl::StatusOr<const Conv2dWorkload*> From(const Workload& workload,
                                                                  const std::string& user);

  const std::string& name() const override { return name_; }
  const nlohmann::json& args() const override { return args_; }
  const std::vector<TensorArg>& tensors() const override { return tensors_; }
  // Every tap counts, padding included (as TVM and oneDNN count).
  double flops() const override;
  void ComputeReference(const std::vector<float*>& buffers) const override;
  int64_t ReductionLength() const override { return a_.c * a_.r * a_.s; }

  int64_t n() const { return a_.n; }
  int64_t c() const { return a_.c; }
  int64_t h() const { return a_.h; }
  int64_t w() const { return a_.w; }
  int64_t k() const { return a_.k; }
  int64_t r() const { return a_.r; }
  int64_t s() const { return a_.s; }
  int64_t stride_h() const { return a_.stride_h; }
  int64_t stride_w() const { return a_.stride_w; }
  int64_t pad_top() const { return a_.pad_top; }
  int64_t pad_left() const { return a_.pad_left; }
  int64_t pad_bottom() const { return a_.pad_bottom; }
  int64_t pad_right() const { return a_.pad_right; }
  int64_t dil_h() const { return a_.dil_h; }
  int64_t dil_w() const { return a_.dil_w; }
  int64_t out_h() const { return a_.out_h; }
  int64_t out_w() const { return a_.out_w; }
  // Whether the network runs blocked end to end, so templates leave the
  // NCHW <-> NCHW[x]c transforms out of the timed kernel.
  bool layout_nchwc() const { return a_.layout_nchwc; }
  // Every argument, parsed, with the output size.
  const ConvArgs& conv_args() const { return a_; }

 private:
  explicit Conv2dWorkload(const ConvArgs& a);

  std::string name_ = "conv2d_nchw";
  ConvArgs a_;
  nlohmann::json args_;
  std::vector<TensorArg> tensors_;
};

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_WORKLOADS_CONV2D_H_
