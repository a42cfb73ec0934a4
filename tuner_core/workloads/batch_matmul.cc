#include "tuner_core/workloads/batch_matmul.h"

#include <algorithm>
#include <vector>

#include "common/status_macros.h"
#include "tuner_core/workloads/json_args.h"

namespace tunefleet {
namespace {

constexpr char kName[] = "batch_matmul";

}  // namespace

absl::StatusOr<std::unique_ptr<BatchMatmulWorkload>> BatchMatmulWorkload::Make(
    const nlohmann::json& args) {
  using json_args::kMaxDim;
  TF_RETURN_IF_ERROR(json_args::CheckObjectWithKeys(kName, args, {"B", "M", "N", "K", "layout"}));
  TF_ASSIGN_OR_RETURN(int64_t batch, json_args::ReadInt(kName, args, "B", 1, kMaxDim));
  TF_ASSIGN_OR_RETURN(int64_t m, json_args::ReadInt(kName, args, "M", 1, kMaxDim));
  TF_ASSIGN_OR_RETURN(int64_t n, json_args::ReadInt(kName, args, "N", 1, kMaxDim));
  TF_ASSIGN_OR_RETURN(int64_t k, json_args::ReadInt(kName, args, "K", 1, kMaxDim));
  TF_ASSIGN_OR_RETURN(std::string layout,
                      json_args::ReadChoice(kName, args, "layout", "NK", {"NK", "KN"}));
  std::unique_ptr<BatchMatmulWorkload> bmm(
      new BatchMatmulWorkload(batch, m, n, k, layout == "KN" ? Layout::kKN : Layout::kNK));
  TF_RETURN_IF_ERROR(json_args::CheckTensorSizes(kName, bmm->tensors_));
  return bmm;
}

absl::StatusOr<const BatchMatmulWorkload*> BatchMatmulWorkload::From(const Workload& workload,
                                                                     const std::string& user) {
  return WorkloadAs<BatchMatmulWorkload>(workload, user, kName);
}

BatchMatmulWorkload::BatchMatmulWorkload(int64_t batch, int64_t m, int64_t n, int64_t k,
                                         Layout layout)
    : batch_(batch), m_(m), n_(n), k_(k), layout_(layout) {
  args_ = {
      {"B", batch}, {"M", m}, {"N", n}, {"K", k}, {"layout", layout == Layout::kNK ? "NK" : "KN"}};
  tensors_.push_back({"A", {batch, m, k}, false});
  if (layout == Layout::kNK) {
    tensors_.push_back({"B", {batch, n, k}, false});
  } else {
    tensors_.push_back({"B", {batch, k, n}, false});
  }
  tensors_.push_back({"C", {batch, m, n}, true});
}

void BatchMatmulWorkload::ComputeReference(const std::vector<float*>& buffers) const {
  const float* a = buffers[0];
  const float* b = buffers[1];
  float* c = buffers[2];
  // Per batch: i-k-j over a [K, N] view of B, each row of C summed in double,
  // so the inner loop is unit-stride whatever the layout.
  std::vector<float> b_kn(layout_ == Layout::kNK ? static_cast<size_t>(k_) * n_ : 0);
  std::vector<double> row(n_);
  for (int64_t bi = 0; bi < batch_; ++bi) {
    const float* a_b = a + bi * m_ * k_;
    const float* b_b = b + bi * k_ * n_;
    float* c_b = c + bi * m_ * n_;
    if (layout_ == Layout::kNK) {
      for (int64_t j = 0; j < n_; ++j) {
        for (int64_t kk = 0; kk < k_; ++kk) b_kn[kk * n_ + j] = b_b[j * k_ + kk];
      }
      b_b = b_kn.data();
    }
    for (int64_t i = 0; i < m_; ++i) {
      std::fill(row.begin(), row.end(), 0.0);
      for (int64_t kk = 0; kk < k_; ++kk) {
        const double a_ik = a_b[i * k_ + kk];
        const float* b_row = b_b + kk * n_;
        for (int64_t j = 0; j < n_; ++j) row[j] += a_ik * b_row[j];
      }
      for (int64_t j = 0; j < n_; ++j) c_b[i * n_ + j] = static_cast<float>(row[j]);
    }
  }
}

}  // namespace tunefleet
