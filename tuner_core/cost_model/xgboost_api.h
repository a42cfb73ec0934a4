// The XGBoost C API (xgboost/c_api.h, libxgboost 1.6/1.7), wrapped once:
// RAII owners of DMatrix and Booster handles, and every return code turned
// into an absl::Status carrying XGBGetLastError()'s text. Nothing else in the
// tree includes c_api.h.
//
//   TF_ASSIGN_OR_RETURN(XgbMatrix train, XgbMatrix::FromDense(rows, num_rows, num_cols));
//   TF_RETURN_IF_ERROR(train.SetFloatInfo("label", labels));
//   TF_ASSIGN_OR_RETURN(XgbBooster booster, XgbBooster::Create({&train}));
//   TF_RETURN_IF_ERROR(booster.SetParam("max_depth", "3"));
//   for (int i = 0; i < rounds; ++i) TF_RETURN_IF_ERROR(booster.UpdateOneIter(i, train));
//   TF_ASSIGN_OR_RETURN(std::vector<float> predictions, booster.Predict(train));
//
// Errors: InvalidArgument for inputs we can check ourselves (sizes), Internal
// with XGBoost's message for a failing XGBoost call. Handles are used from
// one thread at a time.
#ifndef TUNEFLEET_TUNER_CORE_COST_MODEL_XGBOOST_API_H_
#define TUNEFLEET_TUNER_CORE_COST_MODEL_XGBOOST_API_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tunefleet {

// A dense float matrix in XGBoost's memory (a DMatrix), with its meta info.
class XgbMatrix {
 public:
  // `data` is rows x cols, row-major; NaN marks a missing value.
  // InvalidArgument when rows or cols is 0 or data.size() != rows * cols.
  [[nodiscard]] static absl::StatusOr<XgbMatrix> FromDense(const std::vector<float>& data,
                                                           int64_t rows, int64_t cols);
  XgbMatrix(XgbMatrix&& other) noexcept;
  XgbMatrix& operator=(XgbMatrix&& other) noexcept;
  XgbMatrix(const XgbMatrix&) = delete;
  XgbMatrix& operator=(const XgbMatrix&) = delete;
  ~XgbMatrix();

  // "label", "weight" or "base_margin": one value per row (InvalidArgument otherwise).
  [[nodiscard]] absl::Status SetFloatInfo(const std::string& field,
                                          const std::vector<float>& values);
  // Sizes of consecutive query groups (ranking objectives); they must sum to rows().
  [[nodiscard]] absl::Status SetGroups(const std::vector<unsigned>& group_sizes);

  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }
  void* handle() const { return handle_; }

 private:
  XgbMatrix(void* handle, int64_t rows, int64_t cols) : handle_(handle), rows_(rows), cols_(cols) {}

  void* handle_ = nullptr;
  int64_t rows_ = 0, cols_ = 0;
};

class XgbBooster {
 public:
  // A booster that caches predictions for `cache` (pass the training matrix).
  [[nodiscard]] static absl::StatusOr<XgbBooster> Create(
      const std::vector<const XgbMatrix*>& cache);
  XgbBooster(XgbBooster&& other) noexcept;
  XgbBooster& operator=(XgbBooster&& other) noexcept;
  XgbBooster(const XgbBooster&) = delete;
  XgbBooster& operator=(const XgbBooster&) = delete;
  ~XgbBooster();

  [[nodiscard]] absl::Status SetParam(const std::string& name, const std::string& value);
  // One boosting round on `train`.
  [[nodiscard]] absl::Status UpdateOneIter(int iteration, const XgbMatrix& train);
  // One value per row: the transformed prediction, or the raw margin.
  [[nodiscard]] absl::StatusOr<std::vector<float>> Predict(const XgbMatrix& data,
                                                           bool output_margin = false) const;
  // The same for `data` (rows x cols, row-major) read in place, without
  // building a DMatrix (XGBoosterPredictFromDense): much cheaper for the
  // many small batches of a search. `base_margin` (one value per row, or
  // empty) replaces the model's base score, as it does on a DMatrix.
  [[nodiscard]] absl::StatusOr<std::vector<float>> PredictDense(
      const std::vector<float>& data, int64_t rows, int64_t cols, bool output_margin = false,
      const std::vector<float>& base_margin = {}) const;
  [[nodiscard]] absl::StatusOr<int> BoostedRounds() const;
  // Features the model was trained on.
  [[nodiscard]] absl::StatusOr<int64_t> NumFeatures() const;

  // The model as XGBoost's JSON document (trees and learner parameters, no
  // training data), and a booster made from one. Load: Internal with
  // XGBoost's message for text that is not such a model.
  [[nodiscard]] absl::StatusOr<std::string> SaveJson() const;
  [[nodiscard]] static absl::StatusOr<XgbBooster> LoadJson(const std::string& json);

 private:
  explicit XgbBooster(void* handle) : handle_(handle) {}

  void* handle_ = nullptr;
};

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_COST_MODEL_XGBOOST_API_H_
