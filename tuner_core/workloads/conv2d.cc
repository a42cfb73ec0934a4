#include "tuner_core/workloads/conv2d.h"

#include "common/status_macros.h"
#include "tuner_core/workloads/json_args.h"

namespace tunefleet {
namespace {

constexpr char kName[] = "conv2d_nchw";

}  // namespace

absl::StatusOr<std::unique_ptr<Conv2dWorkload>> Conv2dWorkload::Make(const nlohmann::json& args) {
  TF_ASSIGN_OR_RETURN(ConvArgs a, ParseConvArgs(kName, args, ConvOutChannels::kFromK));
  std::unique_ptr<Conv2dWorkload> conv(new Conv2dWorkload(a));
  TF_RETURN_IF_ERROR(json_args::CheckTensorSizes(kName, conv->tensors()));
  return conv;
}

absl::StatusOr<const Conv2dWorkload*> Conv2dWorkload::From(const Workload& workload,
                                                           const std::string& user) {
  return WorkloadAs<Conv2dWorkload>(workload, user, kName);
}

Conv2dWorkload::Conv2dWorkload(const ConvArgs& a)
    : ConvWorkload(kName, a, ConvOutChannels::kFromK) {}

}  // namespace tunefleet
