// ConvWorkload: what the NCHW 2-D convolution workloads (conv2d_nchw and
// depthwise_conv2d_nchw) share as workloads. Both are grouped convolutions:
// conv2d has one group (every output channel reads all C input channels),
// depthwise has C groups of one channel (output channel k reads channel k
// alone). The arguments, tensors, FLOP count and reference are worked out
// here once from the parsed ConvArgs and that choice (ConvOutChannels);
// conv2d.h and depthwise_conv2d.h add Make(), From() and what is theirs.
//   output[n, k, oh, ow] = sum_{g, r, s} data[n, c0(k) + g, ih, iw] * kernel[k, g, r, s]
//   ih = oh*stride_h - pad_top + r*dil_h,  iw = ow*stride_w - pad_left + s*dil_w
// with taps outside the input reading zero.
// Tensors: "data" [N, C, H, W], "kernel" [K, C or 1, R, S], "output" [N, K, OH, OW].
#ifndef TUNEFLEET_TUNER_CORE_WORKLOADS_CONV_WORKLOAD_H_
#define TUNEFLEET_TUNER_CORE_WORKLOADS_CONV_WORKLOAD_H_

#include <cstdint>
#include <string>
#include <vector>

#include "tuner_core/workloads/conv_args.h"
#include "tuner_core/workloads/workload.h"

namespace tunefleet {

class ConvWorkload : public Workload {
 public:
  const std::string& name() const override { return name_; }
  const nlohmann::json& args() const override { return args_; }
  const std::vector<TensorArg>& tensors() const override { return tensors_; }
  // Every tap counts, padding included (as TVM and oneDNN count).
  double flops() const override;
  void ComputeReference(const std::vector<float*>& buffers) const override;
  int64_t ReductionLength() const override { return group_channels() * a_.r * a_.s; }

  int64_t n() const { return a_.n; }
  int64_t c() const { return a_.c; }
  int64_t h() const { return a_.h; }
  int64_t w() const { return a_.w; }
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

 protected:
  // `a` as parsed by ParseConvArgs(name, ..., out_channels).
  ConvWorkload(std::string name, const ConvArgs& a, ConvOutChannels out_channels);

 private:
  // Input channels each output channel reads: C / group, or 1 for depthwise.
  int64_t group_channels() const {
    return out_channels_ == ConvOutChannels::kFromK ? a_.c / a_.group : 1;
  }

  std::string name_;
  ConvArgs a_;
  ConvOutChannels out_channels_;
  nlohmann::json args_;
  std::vector<TensorArg> tensors_;
};

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_WORKLOADS_CONV_WORKLOAD_H_
