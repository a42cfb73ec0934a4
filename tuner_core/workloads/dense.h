// The dense (matrix multiply) workload, fp32:
//   layout "NK" (default, like TVM's dense / a linear layer's weight):
//       C[m, n] = sum_k A[m, k] * B[n, k]
//   layout "KN":
//       C[m, n] = sum_k A[m, k] * B[k, n]
// Args: {"M": int, "N": int, "K": int, "layout": "NK" | "KN"}; any positive
// sizes up to 2^20 each (sizes that do not divide any tile are fine).
#ifndef TUNEFLEET_TUNER_CORE_WORKLOADS_DENSE_H_
#define TUNEFLEET_TUNER_CORE_WORKLOADS_DENSE_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "tuner_core/workloads/workload.h"

namespace tunefleet {

class DenseWorkload final : public Workload {
 public:
  enum class Layout { kNK, kKN };

  [[nodiscard]] static absl::StatusOr<std::unique_ptr<DenseWorkload>> Make(
      const nlohmann::json& args);
  // `workload` as a dense one; InvalidArgument naming `user` when it is not.
  [[nodiscard]] static absl::StatusOr<const DenseWorkload*> From(const Workload& workload,
                                                                 const std::string& user);

  const std::string& name() const override { return name_; }
  const nlohmann::json& args() const override { return args_; }
  const std::vector<TensorArg>& tensors() const override { return tensors_; }
  double flops() const override { return 2.0 * m_ * n_ * k_; }
  void ComputeReference(const std::vector<float*>& buffers) const override;
  int64_t ReductionLength() const override { return k_; }

  int64_t m() const { return m_; }
  int64_t n() const { return n_; }
  int64_t k() const { return k_; }
  Layout layout() const { return layout_; }

 private:
  DenseWorkload(int64_t m, int64_t n, int64_t k, Layout layout);

  std::string name_ = "dense";
  int64_t m_, n_, k_;
  Layout layout_;
  nlohmann::json args_;
  std::vector<TensorArg> tensors_;
};

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_WORKLOADS_DENSE_H_
