#include "tuner_core/workloads/depthwise_conv2d.h"

#include "common/status_macros.h"
#include "tuner_core/workloads/json_args.h"

namespace tunefleet {
namespace {

constexpr char kName[] = "depthwise_conv2d_nchw";

}  // namespace

absl::StatusOr<std::unique_ptr<DepthwiseConv2dWorkload>> DepthwiseConv2dWorkload::Make(
    const nlohmann::json& args) {
  TF_ASSIGN_OR_RETURN(ConvArgs a, ParseConvArgs(kName, args, ConvOutChannels::kSameAsC));
  std::unique_ptr<DepthwiseConv2dWorkload> conv(new DepthwiseConv2dWorkload(a));
  TF_RETURN_IF_ERROR(json_args::CheckTensorSizes(kName, conv->tensors()));
  return conv;
}

absl::StatusOr<const DepthwiseConv2dWorkload*> DepthwiseConv2dWorkload::From(
    const Workload& workload, const std::string& user) {
  return WorkloadAs<DepthwiseConv2dWorkload>(workload, user, kName);
}

DepthwiseConv2dWorkload::DepthwiseConv2dWorkload(const ConvArgs& a)
    : ConvWorkload(kName, a, ConvOutChannels::kSameAsC) {}

}  // namespace tunefleet
