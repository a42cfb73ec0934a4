#include "tuner_core/workloads/workload.h"

#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/saturating_product.h"
#include "tuner_core/workloads/batch_matmul.h"
#include "tuner_core/workloads/conv2d.h"
#include "tuner_core/workloads/dense.h"
#include "tuner_core/workloads/depthwise_conv2d.h"

namespace tunefleet {
namespace {

// W::Make as a WorkloadKind's `make`.
template <typename W>
[[nodiscard]] absl::StatusOr<std::unique_ptr<Workload>> MakeAs(const nlohmann::json& args) {
  absl::StatusOr<std::unique_ptr<W>> made = W::Make(args);
  if (!made.ok()) return made.status();
  return std::unique_ptr<Workload>(std::move(made).value());
}

const WorkloadKind* FindKind(const std::string& name) {
  for (const WorkloadKind& kind : WorkloadKinds()) {
    if (kind.name == name) return &kind;
  }
  return nullptr;
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

const std::vector<WorkloadKind>& WorkloadKinds() {
  static const std::vector<WorkloadKind>* const kinds = new std::vector<WorkloadKind>{
      {"batch_matmul", &MakeAs<BatchMatmulWorkload>, {"B", "M", "N", "K"}},
      {"conv2d_nchw", &MakeAs<Conv2dWorkload>, {}},
      {"dense", &MakeAs<DenseWorkload>, {"M", "N", "K"}},
      {"depthwise_conv2d_nchw", &MakeAs<DepthwiseConv2dWorkload>, {}},
  };
  return *kinds;
}

[[nodiscard]] absl::StatusOr<std::unique_ptr<Workload>> MakeWorkload(const std::string& name,
                                                                     const nlohmann::json& args) {
  if (const WorkloadKind* kind = FindKind(name); kind != nullptr) return kind->make(args);
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown workload \"", name, "\" (known: ", absl::StrJoin(WorkloadNames(), ", "), ")"));
}

std::vector<std::string> WorkloadNames() {
  std::vector<std::string> names;
  for (const WorkloadKind& kind : WorkloadKinds()) names.push_back(kind.name);
  return names;
}

[[nodiscard]] absl::StatusOr<nlohmann::json> WorkloadArgsFromShape(const std::string& workload,
                                                                   const std::string& shape,
                                                                   const std::string& layout) {
  const WorkloadKind* kind = FindKind(workload);
  if (kind == nullptr) return MakeWorkload(workload, {}).status();  // names the known ones
  if (kind->shape_keys.empty()) {
    std::vector<std::string> shaped;
    for (const WorkloadKind& k : WorkloadKinds()) {
      if (!k.shape_keys.empty()) {
        shaped.push_back(absl::StrCat(k.name, " (", absl::StrJoin(k.shape_keys, ","), ")"));
      }
    }
    return absl::InvalidArgumentError(absl::StrCat("--shape is for ",
                                                   absl::StrJoin(shaped, " and "), "; give ",
                                                   workload, "'s arguments as JSON with --args"));
  }
  const std::string wanted = absl::StrJoin(kind->shape_keys, ",");
  std::vector<std::string> parts = absl::StrSplit(shape, ',');
  if (parts.size() != kind->shape_keys.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--shape \"", shape, "\": ", workload, " wants ", wanted));
  }
  nlohmann::json args = {{"layout", layout}};
  for (size_t i = 0; i < parts.size(); ++i) {
    int64_t v = 0;
    if (!absl::SimpleAtoi(parts[i], &v)) {
      return absl::InvalidArgumentError(absl::StrCat("--shape \"", shape, "\": \"", parts[i],
                                                     "\" is not an integer (", workload, " wants ",
                                                     wanted, ")"));
    }
    args[kind->shape_keys[i]] = v;
  }
  return args;
}

}  // namespace tunefleet
