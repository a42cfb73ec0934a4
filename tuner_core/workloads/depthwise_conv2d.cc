#include "tuner_core/workloads/depthwise_conv2d.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "tuner_core/workloads/json_args.h"

namespace tunefleet {

absl::StatusOr<std::unique_ptr<DepthwiseConv2dWorkload>> DepthwiseConv2dWorkload::Make(
    const nlohmann::json& args) {
  TF_ASSIGN_OR_RETURN(ConvArgs a,
                      ParseConvArgs("depthwise_conv2d_nchw", args, ConvOutChannels::kSameAsC));
  std::unique_ptr<DepthwiseConv2dWorkload> conv(new DepthwiseConv2dWorkload(a));
  TF_RETURN_IF_ERROR(json_args::CheckTensorSizes(conv->name_, conv->tensors_));
  return conv;
}

absl::StatusOr<const DepthwiseConv2dWorkload*> DepthwiseConv2dWorkload::From(
    const Workload& workload, const std::string& user) {
  const auto* conv = dynamic_cast<const DepthwiseConv2dWorkload*>(&workload);
  if (conv == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(user, ": workload ", workload.name(), " is not depthwise_conv2d_nchw"));
  }
  return conv;
}

DepthwiseConv2dWorkload::DepthwiseConv2dWorkload(const ConvArgs& a)
    : a_(a), args_(CanonicalConvArgs(a, ConvOutChannels::kSameAsC)) {
  tensors_.push_back({"data", {a.n, a.c, a.h, a.w}, false});
  tensors_.push_back({"kernel", {a.c, 1, a.r, a.s}, false});
  tensors_.push_back({"output", {a.n, a.c, a.out_h, a.out_w}, true});
}

double DepthwiseConv2dWorkload::flops() const {
  return 2.0 * a_.n * a_.c * a_.out_h * a_.out_w * a_.r * a_.s;
}

void DepthwiseConv2dWorkload::ComputeReference(const std::vector<float*>& buffers) const {
  const float* data = buffers[0];
  const float* kernel = buffers[1];
  float* output = buffers[2];
  const ConvRowAccumulator rows(a_);
  const int64_t plane = a_.h * a_.w;
  std::vector<double> acc(a_.out_w);
  for (int64_t n = 0; n < a_.n; ++n) {
    for (int64_t c = 0; c < a_.c; ++c) {
      const float* in = data + (n * a_.c + c) * plane;
      const float* filter = kernel + c * a_.r * a_.s;
      float* out = output + ((n * a_.c + c) * a_.out_h) * a_.out_w;
      for (int64_t oh = 0; oh < a_.out_h; ++oh) {
        std::fill(acc.begin(), acc.end(), 0.0);
        rows.Accumulate(in, filter, oh, acc.data());
        for (int64_t ow = 0; ow < a_.out_w; ++ow) {
          out[oh * a_.out_w + ow] = static_cast<float>(acc[ow]);
        }
      }
    }
  }
}

}  // namespace tunefleet
