#include "tuner_core/cost_model/xgboost_api.h"

#include <cstdint>
#include <limits>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "xgboost/c_api.h"

namespace tunefleet {
namespace {

[[nodiscard]] absl::Status Check(int rc, const char* call) {
  if (rc == 0) return absl::OkStatus();
  return absl::InternalError(absl::StrCat("xgboost ", call, ": ", XGBGetLastError()));
}

// XGBoost logs warnings to stderr by default; the tuner reports its own.
void QuietOnce() {
  static const bool quiet = [] {
    XGBSetGlobalConfig("{\"verbosity\": 0}");
    return true;
  }();
  (void)quiet;
}

}  // namespace

absl::StatusOr<XgbMatrix> XgbMatrix::FromDense(const std::vector<float>& data, int64_t rows,
                                               int64_t cols) {
  if (rows <= 0 || cols <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("xgboost matrix needs rows and columns, got ", rows, "x", cols));
  }
  if (static_cast<int64_t>(data.size()) != rows * cols) {
    return absl::InvalidArgumentError(
        absl::StrCat("xgboost matrix ", rows, "x", cols, " given ", data.size(), " values"));
  }
  QuietOnce();
  DMatrixHandle handle = nullptr;
  const float kMissing = std::numeric_limits<float>::quiet_NaN();
  if (absl::Status s =
          Check(XGDMatrixCreateFromMat_omp(data.data(), rows, cols, kMissing, &handle, 1),
                "XGDMatrixCreateFromMat");
      !s.ok()) {
    return s;
  }
  return XgbMatrix(handle, rows, cols);
}

XgbMatrix::XgbMatrix(XgbMatrix&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)), rows_(other.rows_), cols_(other.cols_) {}

XgbMatrix& XgbMatrix::operator=(XgbMatrix&& other) noexcept {
  if (this != &other) {
    if (handle_ != nullptr) XGDMatrixFree(handle_);
    handle_ = std::exchange(other.handle_, nullptr);
    rows_ = other.rows_;
    cols_ = other.cols_;
  }
  return *this;
}

XgbMatrix::~XgbMatrix() {
  if (handle_ != nullptr) XGDMatrixFree(handle_);
}

absl::Status XgbMatrix::SetFloatInfo(const std::string& field, const std::vector<float>& values) {
  if (field != "label" && field != "weight" && field != "base_margin") {
    return absl::InvalidArgumentError(absl::StrCat("unknown xgboost float info \"", field, "\""));
  }
  if (static_cast<int64_t>(values.size()) != rows_) {
    return absl::InvalidArgumentError(
        absl::StrCat("xgboost ", field, ": ", values.size(), " values for ", rows_, " rows"));
  }
  return Check(XGDMatrixSetFloatInfo(handle_, field.c_str(), values.data(), values.size()),
               "XGDMatrixSetFloatInfo");
}

absl::Status XgbMatrix::SetGroups(const std::vector<unsigned>& group_sizes) {
  int64_t total = 0;
  for (unsigned g : group_sizes) total += g;
  if (total != rows_) {
    return absl::InvalidArgumentError(
        absl::StrCat("xgboost groups cover ", total, " rows, the matrix has ", rows_));
  }
  return Check(XGDMatrixSetUIntInfo(handle_, "group", group_sizes.data(), group_sizes.size()),
               "XGDMatrixSetUIntInfo(group)");
}

absl::StatusOr<XgbBooster> XgbBooster::Create(const std::vector<const XgbMatrix*>& cache) {
  QuietOnce();
  std::vector<DMatrixHandle> handles;
  for (const XgbMatrix* m : cache) handles.push_back(m->handle());
  BoosterHandle handle = nullptr;
  if (absl::Status s =
          Check(XGBoosterCreate(handles.data(), handles.size(), &handle), "XGBoosterCreate");
      !s.ok()) {
    return s;
  }
  return XgbBooster(handle);
}

XgbBooster::XgbBooster(XgbBooster&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)) {}

XgbBooster& XgbBooster::operator=(XgbBooster&& other) noexcept {
  if (this != &other) {
    if (handle_ != nullptr) XGBoosterFree(handle_);
    handle_ = std::exchange(other.handle_, nullptr);
  }
  return *this;
}

XgbBooster::~XgbBooster() {
  if (handle_ != nullptr) XGBoosterFree(handle_);
}

absl::Status XgbBooster::SetParam(const std::string& name, const std::string& value) {
  return Check(XGBoosterSetParam(handle_, name.c_str(), value.c_str()),
               absl::StrCat("XGBoosterSetParam(", name, "=", value, ")").c_str());
}

absl::Status XgbBooster::UpdateOneIter(int iteration, const XgbMatrix& train) {
  return Check(XGBoosterUpdateOneIter(handle_, iteration, train.handle()),
               "XGBoosterUpdateOneIter");
}

absl::StatusOr<std::vector<float>> XgbBooster::Predict(const XgbMatrix& data,
                                                       bool output_margin) const {
  bst_ulong length = 0;
  const float* values = nullptr;
  if (absl::Status s = Check(
          XGBoosterPredict(handle_, data.handle(), output_margin ? 1 : 0, 0, 0, &length, &values),
          "XGBoosterPredict");
      !s.ok()) {
    return s;
  }
  if (static_cast<int64_t>(length) != data.rows()) {
    return absl::InternalError(
        absl::StrCat("xgboost predicted ", length, " values for ", data.rows(), " rows"));
  }
  return std::vector<float>(values, values + length);
}

absl::StatusOr<std::vector<float>> XgbBooster::PredictDense(
    const std::vector<float>& data, int64_t rows, int64_t cols, bool output_margin,
    const std::vector<float>& base_margin) const {
  if (rows <= 0 || cols <= 0 || static_cast<int64_t>(data.size()) != rows * cols) {
    return absl::InvalidArgumentError(absl::StrCat("xgboost in-place prediction of ", rows, "x",
                                                   cols, " given ", data.size(), " values"));
  }
  if (!base_margin.empty() && static_cast<int64_t>(base_margin.size()) != rows) {
    return absl::InvalidArgumentError(
        absl::StrCat("xgboost base_margin: ", base_margin.size(), " values for ", rows, " rows"));
  }
  // numpy's __array_interface__, version 3: the address, read-only, and the shape.
  const std::string values = absl::StrCat("{\"data\": [", reinterpret_cast<uintptr_t>(data.data()),
                                          ", true], \"shape\": [", rows, ", ", cols,
                                          "], \"typestr\": \"<f4\", \"version\": 3}");
  const std::string config =
      absl::StrCat("{\"type\": ", output_margin ? 1 : 0,
                   ", \"training\": false, \"iteration_begin\": 0, \"iteration_end\": 0, "
                   "\"strict_shape\": false, \"cache_id\": 0, \"missing\": NaN}");
  // Meta info (the base margin) travels on a proxy DMatrix.
  DMatrixHandle proxy = nullptr;
  if (!base_margin.empty()) {
    if (absl::Status s = Check(XGProxyDMatrixCreate(&proxy), "XGProxyDMatrixCreate"); !s.ok())
      return s;
  }
  const std::unique_ptr<void, int (*)(DMatrixHandle)> proxy_owner(
      proxy, XGDMatrixFree);  // frees it on every path
  if (proxy != nullptr) {
    TF_RETURN_IF_ERROR(
        Check(XGDMatrixSetFloatInfo(proxy, "base_margin", base_margin.data(), base_margin.size()),
              "XGDMatrixSetFloatInfo(base_margin)"));
  }
  const bst_ulong* shape = nullptr;
  bst_ulong dims = 0;
  const float* out = nullptr;
  if (absl::Status s = Check(XGBoosterPredictFromDense(handle_, values.c_str(), config.c_str(),
                                                       proxy, &shape, &dims, &out),
                             "XGBoosterPredictFromDense");
      !s.ok()) {
    return s;
  }
  bst_ulong length = 1;
  for (bst_ulong d = 0; d < dims; ++d) length *= shape[d];
  if (static_cast<int64_t>(length) != rows) {
    return absl::InternalError(
        absl::StrCat("xgboost predicted ", length, " values for ", rows, " rows"));
  }
  return std::vector<float>(out, out + length);
}

absl::StatusOr<int> XgbBooster::BoostedRounds() const {
  int rounds = 0;
  if (absl::Status s = Check(XGBoosterBoostedRounds(handle_, &rounds), "XGBoosterBoostedRounds");
      !s.ok()) {
    return s;
  }
  return rounds;
}

absl::StatusOr<int64_t> XgbBooster::NumFeatures() const {
  bst_ulong features = 0;
  if (absl::Status s = Check(XGBoosterGetNumFeature(handle_, &features), "XGBoosterGetNumFeature");
      !s.ok()) {
    return s;
  }
  return static_cast<int64_t>(features);
}

absl::StatusOr<std::string> XgbBooster::SaveJson() const {
  bst_ulong length = 0;
  const char* bytes = nullptr;
  if (absl::Status s =
          Check(XGBoosterSaveModelToBuffer(handle_, "{\"format\": \"json\"}", &length, &bytes),
                "XGBoosterSaveModelToBuffer");
      !s.ok()) {
    return s;
  }
  return std::string(bytes, length);
}

absl::StatusOr<XgbBooster> XgbBooster::LoadJson(const std::string& json) {
  TF_ASSIGN_OR_RETURN(XgbBooster booster, Create({}));
  TF_RETURN_IF_ERROR(Check(XGBoosterLoadModelFromBuffer(booster.handle_, json.data(), json.size()),
                           "XGBoosterLoadModelFromBuffer"));
  return booster;
}

}  // namespace tunefleet
