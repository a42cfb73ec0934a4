#include "tuner_core/workloads/workload.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tuner_core/workloads/dense.h"

namespace tunefleet {

int64_t TensorArg::NumElements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string Workload::Describe() const {
  std::vector<std::string> parts;
  for (auto it = args().begin(); it != args().end(); ++it) {
    parts.push_back(absl::StrCat(it.key(), "=",
                                 it->is_string() ? it->get<std::string>() : it->dump()));
  }
  return absl::StrCat(name(), "(", absl::StrJoin(parts, ","), ")");
}

absl::StatusOr<std::unique_ptr<Workload>> MakeWorkload(const std::string& name,
                                                       const nlohmann::json& args) {
  if (name == "dense") {
    auto dense = DenseWorkload::Make(args);
    if (!dense.ok()) return dense.status();
    return std::unique_ptr<Workload>(std::move(dense).value());
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown workload \"", name, "\" (known: ", absl::StrJoin(WorkloadNames(), ", "), ")"));
}

std::vector<std::string> WorkloadNames() { return {"dense"}; }

}  // namespace tunefleet
