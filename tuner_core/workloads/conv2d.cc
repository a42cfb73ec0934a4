#include "tuner_core/workloads/conv2d.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "tuner_core/workloads/json_args.h"

namespace tunefleet {

absl::StatusOr<std::unique_ptr<Conv2dWorkload>> Conv2dWorkload::Make(const nlohmann::json& args) {
  TF_ASSIGN_OR_RETURN(ConvArgs a, ParseConvArgs("conv2d_nchw", args, ConvOutChannels::kFromK));
  std::unique_ptr<Conv2dWorkload> conv(new Conv2dWorkload(a));
  TF_RETURN_IF_ERROR(json_args::CheckTensorSizes(conv->name_, conv->tensors_));
  return conv;
}

absl::StatusOr<const Conv2dWorkload*> Conv2dWorkload::From(const Workload& workload,
                                                           const std::string& user) {
  const auto* conv = dynamic_cast<const Conv2dWorkload*>(&workload);
  if (conv == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(user, ": workload ", workload.name(), " is not conv2d_nchw"));
  }
  return conv;
}

Conv2dWorkload::Conv2dWorkload(const ConvArgs& a)
    : a_(a), args_(CanonicalConvArgs(a, ConvOutChannels::kFromK)) {
  tensors_.push_back({"data", {a.n, a.c, a.h, a.w}, false});
  tensors_.push_back({"kernel", {a.k, a.c, a.r, a.s}, false});
  tensors_.push_back({"output", {a.n, a.k, a.out_h, a.out_w}, true});
}

double Conv2dWorkload::flops() const {
  return 2.0 * a_.n * a_.k * a_.out_h * a_.out_w * a_.c * a_.r * a_.s;
}

void Conv2dWorkload::ComputeReference(const std::vector<float*>& buffers) const {
  const float* data = buffers[0];
  const float* kernel = buffers[1];
  float* output = buffers[2];
  const ConvRowAccumulator rows(a_);
  const int64_t plane = a_.h * a_.w;
  const int64_t filter = a_.r * a_.s;
  // One output row at a time, summed in double over every input channel:
  // the row and the filters of one output channel stay in cache.
  std::vector<double> acc(a_.out_w);
  for (int64_t n = 0; n < a_.n; ++n) {
    const float* data_n = data + n * a_.c * plane;
    for (int64_t k = 0; k < a_.k; ++k) {
      const float* kernel_k = kernel + k * a_.c * filter;
      float* out = output + ((n * a_.k + k) * a_.out_h) * a_.out_w;
      for (int64_t oh = 0; oh < a_.out_h; ++oh) {
        std::fill(acc.begin(), acc.end(), 0.0);
        for (int64_t c = 0; c < a_.c; ++c) {
          rows.Accumulate(data_n + c * plane, kernel_k + c * filter, oh, acc.data());
        }
        for (int64_t ow = 0; ow < a_.out_w; ++ow) {
          out[oh * a_.out_w + ow] = static_cast<float>(acc[ow]);
        }
      }
    }
  }
}

}  // namespace tunefleet
