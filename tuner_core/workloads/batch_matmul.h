// The batch_matmul workload, fp32, one independent matrix multiply per batch:
//   layout "NK" (default, TVM's batch_matmul; B holds each batch transposed):
//       C[b, m, n] = sum_k A[b, m, k] * B[b, n, k]
//   layout "KN":
//       C[b, m, n] = sum_k A[b, m, k] * B[b, k, n]
// Args: {"B": int, "M": int, "N": int, "K": int, "layout": "NK" | "KN"};
// sizes 1..2^20, each tensor at most 2^40 elements.
// Tensors: "A" [B, M, K], "B" [B, N, K] (NK) or [B, K, N] (KN), "C" [B, M, N].
#ifndef TUNEFLEET_TUNER_CORE_WORKLOADS_BATCH_MATMUL_H_
#define TUNEFLEET_TUNER_CORE_WORKLOADS_BATCH_MATMUL_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tuner_core/workloads/workload.h"

namespace tunefleet {

class BatchMatmulWorkload final : public Workload {
 public:
  enum class Layout { kNK, kKN };

  [[nodiscard]] static absl::StatusOr<std::unique_ptr<BatchMatmulWorkload>> Make(
      const nlohmann::json& args);
  // `workload` as a batch_matmul one; InvalidArgument naming `user` when it
  // is not.
  [[nodiscard]] static absl::StatusOr<const BatchMatmulWorkload*> From(const Workload& workload,
                                                                       const std::string& user);

  const std::string& name() const override { return name_; }
  const nlohmann::json& args() const override { return args_; }
  const std::vector<TensorArg>& tensors() const override { return tensors_; }
  double flops() const override { return 2.0 * batch_ * m_ * n_ * k_; }
  void ComputeReference(const std::vector<float*>& buffers) const override;
  int64_t ReductionLength() const override { return k_; }

  int64_t batch() const { return batch_; }
  int64_t m() const { return m_; }
  int64_t n() const { return n_; }
  int64_t k() const { return k_; }
  Layout layout() const { return layout_; }

 private:
  BatchMatmulWorkload(int64_t batch, int64_t m, int64_t n, int64_t k, Layout layout);

  std::string name_ = "batch_matmul";
  int64_t batch_, m_, n_, k_;
  Layout layout_;
  nlohmann::json args_;
  std::vector<TensorArg> tensors_;
};

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_WORKLOADS_BATCH_MATMUL_H_
