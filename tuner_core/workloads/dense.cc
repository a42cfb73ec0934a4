#include "tuner_core/workloads/dense.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "tuner_core/workloads/json_args.h"

namespace tunefleet {
namespace {

constexpr int64_t kMaxDim = int64_t{1} << 20;

[[nodiscard]] absl::StatusOr<int64_t> ReadDim(const nlohmann::json& args, const char* key) {
  auto it = args.find(key);
  if (it == args.end()) {
    return absl::InvalidArgumentError(absl::StrCat("dense: missing argument \"", key, "\""));
  }
  if (!it->is_number_integer()) {
    return absl::InvalidArgumentError(
        absl::StrCat("dense: argument \"", key, "\" must be an integer, got ", it->dump()));
  }
  int64_t value = it->get<int64_t>();
  if (value < 1 || value > kMaxDim) {
    return absl::InvalidArgumentError(
        absl::StrCat("dense: argument \"", key, "\" = ", value, " is outside [1, ", kMaxDim, "]"));
  }
  return value;
}

}  // namespace

absl::StatusOr<std::unique_ptr<DenseWorkload>> DenseWorkload::Make(const nlohmann::json& args) {
  if (!args.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat("dense: arguments must be a JSON object, got ", args.dump()));
  }
  for (auto it = args.begin(); it != args.end(); ++it) {
    const std::string& key = it.key();
    if (key != "M" && key != "N" && key != "K" && key != "layout") {
      return absl::InvalidArgumentError(
          absl::StrCat("dense: unknown argument \"", key, "\" (expected M, N, K, layout)"));
    }
  }
  auto m = ReadDim(args, "M");
  if (!m.ok()) return m.status();
  auto n = ReadDim(args, "N");
  if (!n.ok()) return n.status();
  auto k = ReadDim(args, "K");
  if (!k.ok()) return k.status();
  Layout layout = Layout::kNK;
  if (auto it = args.find("layout"); it != args.end()) {
    if (!it->is_string() || (*it != "NK" && *it != "KN")) {
      return absl::InvalidArgumentError(
          absl::StrCat("dense: layout must be \"NK\" or \"KN\", got ", it->dump()));
    }
    layout = (*it == "KN") ? Layout::kKN : Layout::kNK;
  }
  std::unique_ptr<DenseWorkload> dense(new DenseWorkload(*m, *n, *k, layout));
  TF_RETURN_IF_ERROR(json_args::CheckTensorSizes("dense", dense->tensors()));
  return dense;
}

absl::StatusOr<const DenseWorkload*> DenseWorkload::From(const Workload& workload,
                                                         const std::string& user) {
  return WorkloadAs<DenseWorkload>(workload, user, "dense");
}

DenseWorkload::DenseWorkload(int64_t m, int64_t n, int64_t k, Layout layout)
    : m_(m), n_(n), k_(k), layout_(layout) {
  args_ = {{"M", m}, {"N", n}, {"K", k}, {"layout", layout == Layout::kNK ? "NK" : "KN"}};
  tensors_.push_back({"A", {m, k}, false});
  if (layout == Layout::kNK) {
    tensors_.push_back({"B", {n, k}, false});
  } else {
    tensors_.push_back({"B", {k, n}, false});
  }
  tensors_.push_back({"C", {m, n}, true});
}

void DenseWorkload::ComputeReference(const std::vector<float*>& buffers) const {
  const float* a = buffers[0];
  const float* b = buffers[1];
  float* c = buffers[2];
  // i-k-j order over a [K, N] copy of B, accumulating each row of C in
  // double: exact enough to judge fp32 kernels, and unit-stride (so it
  // vectorises) whatever the layout.
  std::vector<float> b_kn;
  if (layout_ == Layout::kNK) {
    b_kn.resize(static_cast<size_t>(k_) * n_);
    for (int64_t j = 0; j < n_; ++j) {
      for (int64_t kk = 0; kk < k_; ++kk) b_kn[kk * n_ + j] = b[j * k_ + kk];
    }
    b = b_kn.data();
  }
  std::vector<double> row(n_);
  for (int64_t i = 0; i < m_; ++i) {
    std::fill(row.begin(), row.end(), 0.0);
    for (int64_t kk = 0; kk < k_; ++kk) {
      const double a_ik = a[i * k_ + kk];
      const float* b_row = b + kk * n_;
      for (int64_t j = 0; j < n_; ++j) row[j] += a_ik * b_row[j];
    }
    for (int64_t j = 0; j < n_; ++j) c[i * n_ + j] = static_cast<float>(row[j]);
  }
}

}  // namespace tunefleet
