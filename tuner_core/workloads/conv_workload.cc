#include "tuner_core/workloads/conv_workload.h"

#include <algorithm>
#include <utility>

namespace tunefleet {

ConvWorkload::ConvWorkload(std::string name, const ConvArgs& a, ConvOutChannels out_channels)
    : name_(std::move(name)),
      a_(a),
      out_channels_(out_channels),
      args_(CanonicalConvArgs(a, out_channels)) {
  tensors_.push_back({"data", {a.n, a.c, a.h, a.w}, false});
  tensors_.push_back({"kernel", {a.k, group_channels(), a.r, a.s}, false});
  tensors_.push_back({"output", {a.n, a.k, a.out_h, a.out_w}, true});
}

double ConvWorkload::flops() const {
  return 2.0 * a_.n * a_.k * a_.out_h * a_.out_w * group_channels() * a_.r * a_.s;
}

void ConvWorkload::ComputeReference(const std::vector<float*>& buffers) const {
  const float* data = buffers[0];
  const float* kernel = buffers[1];
  float* output = buffers[2];
  const ConvRowAccumulator rows(a_);
  const int64_t plane = a_.h * a_.w;
  const int64_t filter = a_.r * a_.s;
  const int64_t group = group_channels();
  const bool depthwise = out_channels_ == ConvOutChannels::kSameAsC;
  // One output row at a time, summed in double over the group's input
  // channels: the row and the filters of one output channel stay in cache.
  std::vector<double> acc(a_.out_w);
  for (int64_t n = 0; n < a_.n; ++n) {
    const float* data_n = data + n * a_.c * plane;
    for (int64_t k = 0; k < a_.k; ++k) {
      // The input channels output channel k reads start at its group's.
      const int64_t first_channel = depthwise ? k : (k / (a_.k / a_.group)) * group;
      const float* data_group = data_n + first_channel * plane;
      const float* kernel_k = kernel + k * group * filter;
      float* out = output + ((n * a_.k + k) * a_.out_h) * a_.out_w;
      for (int64_t oh = 0; oh < a_.out_h; ++oh) {
        std::fill(acc.begin(), acc.end(), 0.0);
        for (int64_t g = 0; g < group; ++g) {
          rows.Accumulate(data_group + g * plane, kernel_k + g * filter, oh, acc.data());
        }
        for (int64_t ow = 0; ow < a_.out_w; ++ow) {
          out[oh * a_.out_w + ow] = static_cast<float>(acc[ow]);
        }
      }
    }
  }
}

}  // namespace tunefleet
