#include "tuner_core/workloads/workload.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/saturating_product.h"
#include "tuner_core/workloads/batch_matmul.h"
#include "tuner_core/workloads/conv2d.h"
#include "tuner_core/workloads/dense.h"
#include "tuner_core/workloads/depthwise_conv2d.h"

namespace tunefleet {
namespace {

template <typename T>
[[nodiscard]] absl::StatusOr<std::unique_ptr<Workload>> AsWorkload(
    absl::StatusOr<std::unique_ptr<T>> made) {
  if (!made.ok()) return made.status();
  return std::unique_ptr<Workload>(std::move(made).value());
}

}  // namespace

int64_t TensorArg::NumElements() const { return SaturatingProduct(shape); }

std::string Workload::Describe() const {
  std::vector<std::string> parts;
  for (auto it = args().begin(); it != args().end(); ++it) {
    parts.push_back(
        absl::StrCat(it.key(), "=", it->is_string() ? it->get<std::string>() : it->dump()));
  }
  return absl::StrCat(name(), "(", absl::StrJoin(parts, ","), ")");
}

[[nodiscard]] absl::StatusOr<std::unique_ptr<Workload>> MakeWorkload(const std::string& name,
                                                                     const nlohmann::json& args) {
  if (name == "dense") return AsWorkload(DenseWorkload::Make(args));
  if (name == "conv2d_nchw") return AsWorkload(Conv2dWorkload::Make(args));
  if (name == "depthwise_conv2d_nchw") return AsWorkload(DepthwiseConv2dWorkload::Make(args));
  if (name == "batch_matmul") return AsWorkload(BatchMatmulWorkload::Make(args));
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown workload \"", name, "\" (known: ", absl::StrJoin(WorkloadNames(), ", "), ")"));
}

std::vector<std::string> WorkloadNames() {
  return {"batch_matmul", "conv2d_nchw", "dense", "depthwise_conv2d_nchw"};
}

}  // namespace tunefleet
