#include "tuner_core/cost_model/xgb_cost_model.h"

#include <algorithm>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace tunefleet {
namespace {

std::vector<int> TopK(const std::vector<float>& values, int k) {
  std::vector<int> order(values.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return values[a] > values[b]; });
  order.resize(std::min<size_t>(order.size(), static_cast<size_t>(k)));
  std::sort(order.begin(), order.end());
  return order;
}

}  // namespace

double TopKRecall(const std::vector<float>& scores, const std::vector<float>& labels, int k) {
  k = std::min<int>(k, static_cast<int>(labels.size()));
  if (k <= 0) return 1.0;
  const std::vector<int> predicted = TopK(scores, k), truth = TopK(labels, k);
  std::vector<int> both;
  std::set_intersection(predicted.begin(), predicted.end(), truth.begin(), truth.end(),
                        std::back_inserter(both));
  return static_cast<double>(both.size()) / k;
}

double RankCorrelation(const std::vector<double>& a, const std::vector<double>& b) {
  auto ranks = [](const std::vector<double>& v) {
    std::vector<size_t> order(v.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return v[x] < v[y]; });
    std::vector<double> rank(v.size());
    for (size_t i = 0; i < order.size(); ++i) rank[order[i]] = static_cast<double>(i);
    return rank;
  };
  const std::vector<double> ra = ranks(a), rb = ranks(b);
  const double n = static_cast<double>(a.size());
  double d2 = 0;
  for (size_t i = 0; i < ra.size(); ++i) d2 += (ra[i] - rb[i]) * (ra[i] - rb[i]);
  return 1 - 6 * d2 / (n * (n * n - 1));
}

absl::Status XgbCostModelOptions::Validate() const {
  if (loss != "reg" && loss != "rank") {
    return absl::InvalidArgumentError(
        absl::StrCat("cost model loss \"", loss, "\" (known: reg, rank)"));
  }
  if (max_depth < 1) return absl::InvalidArgumentError("cost model max_depth must be >= 1");
  if (!(eta > 0)) return absl::InvalidArgumentError("cost model eta must be > 0");
  if (gamma < 0 || min_child_weight < 0) {
    return absl::InvalidArgumentError("cost model gamma and min_child_weight must be >= 0");
  }
  if (max_rounds < 1) return absl::InvalidArgumentError("cost model max_rounds must be >= 1");
  if (early_stopping_rounds < 1)
    return absl::InvalidArgumentError("cost model early_stopping_rounds must be >= 1");
  if (recall_k < 1) return absl::InvalidArgumentError("cost model recall_k must be >= 1");
  if (nthread < 1) return absl::InvalidArgumentError("cost model nthread must be >= 1");
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<XgbCostModel>> XgbCostModel::Create(
    const XgbCostModelOptions& options) {
  TF_RETURN_IF_ERROR(options.Validate());
  return std::unique_ptr<XgbCostModel>(new XgbCostModel(options));
}

void XgbCostModel::SetBaseModel(std::shared_ptr<const XgbCostModel> base, double weight) {
  SetBaseModels({WeightedModel{std::move(base), weight}});
}

void XgbCostModel::SetBaseModels(std::vector<WeightedModel> bases) {
  bases_.clear();
  for (WeightedModel& base : bases) {
    if (base.model != nullptr && base.weight > 0) bases_.push_back(std::move(base));
  }
}

double XgbCostModel::base_weight() const {
  double total = 0;
  for (const WeightedModel& base : bases_) total += base.weight;
  return total;
}

absl::StatusOr<XgbMatrix> XgbCostModel::MakeMatrix(const FeatureMatrix& rows) const {
  if (rows.num_features <= 0 || rows.values.size() % rows.num_features != 0) {
    return absl::InvalidArgumentError(absl::StrCat("feature rows of width ", rows.num_features,
                                                   " hold ", rows.values.size(), " values"));
  }
  return XgbMatrix::FromDense(rows.values, rows.num_rows(), rows.num_features);
}

absl::StatusOr<std::vector<float>> XgbCostModel::BaseMargin(const FeatureMatrix& rows) const {
  if (bases_.empty()) return std::vector<float>();
  std::vector<float> sum(static_cast<size_t>(rows.num_rows()), 0.0f);
  for (const WeightedModel& base : bases_) {
    if (base.model->num_features() != rows.num_features) {
      return absl::InvalidArgumentError(absl::StrCat("base model has ", base.model->num_features(),
                                                     " features, the rows ", rows.num_features));
    }
    TF_ASSIGN_OR_RETURN(std::vector<float> margin, base.model->PredictMargin(rows));
    if (margin.size() != sum.size()) {
      return absl::InternalError(
          absl::StrCat("base model gave ", margin.size(), " margins for ", sum.size(), " rows"));
    }
    for (size_t i = 0; i < sum.size(); ++i) sum[i] += static_cast<float>(margin[i] * base.weight);
  }
  return sum;
}

absl::Status XgbCostModel::Fit(const FeatureMatrix& rows, const std::vector<double>& throughputs,
                               const std::vector<unsigned>& group_sizes) {
  const int64_t n = rows.num_rows();
  if (n == 0) return absl::InvalidArgumentError("cost model: no training rows");
  if (static_cast<int64_t>(throughputs.size()) != n) {
    return absl::InvalidArgumentError(
        absl::StrCat("cost model: ", throughputs.size(), " throughputs for ", n, " rows"));
  }
  std::vector<unsigned> groups = group_sizes;
  if (groups.empty()) groups.push_back(static_cast<unsigned>(n));
  // Normalise per group: each workload's best is 1.
  std::vector<float> labels(n, 0.0f);
  int64_t begin = 0;
  for (unsigned size : groups) {
    const int64_t end = std::min<int64_t>(n, begin + size);
    double best = 0;
    for (int64_t i = begin; i < end; ++i) best = std::max(best, throughputs[i]);
    for (int64_t i = begin; i < end; ++i) {
      labels[i] = best > 0 && throughputs[i] > 0 ? static_cast<float>(throughputs[i] / best) : 0.0f;
    }
    begin = end;
  }

  TF_ASSIGN_OR_RETURN(XgbMatrix train, MakeMatrix(rows));
  TF_RETURN_IF_ERROR(train.SetGroups(groups));  // checks that the groups cover the rows
  TF_RETURN_IF_ERROR(train.SetFloatInfo("label", labels));
  TF_ASSIGN_OR_RETURN(std::vector<float> base_margin, BaseMargin(rows));
  if (!base_margin.empty()) TF_RETURN_IF_ERROR(train.SetFloatInfo("base_margin", base_margin));

  TF_ASSIGN_OR_RETURN(XgbBooster booster, XgbBooster::Create({&train}));
  const std::pair<const char*, std::string> params[] = {
      {"objective", options_.loss == "rank" ? "rank:pairwise" : "reg:squarederror"},
      {"max_depth", absl::StrCat(options_.max_depth)},
      {"eta", absl::StrCat(options_.eta)},
      {"gamma", absl::StrCat(options_.gamma)},
      {"min_child_weight", absl::StrCat(options_.min_child_weight)},
      {"subsample", "1"},
      {"lambda", "1"},
      {"alpha", "0"},
      {"tree_method", "exact"},
      {"seed", absl::StrCat(options_.seed)},
      {"nthread", absl::StrCat(options_.nthread)},
      {"verbosity", "0"},
  };
  for (const auto& [name, value] : params) TF_RETURN_IF_ERROR(booster.SetParam(name, value));

  // With few rows every row is in the top k and recall says nothing: judge
  // on the better half then.
  const int k = std::max<int>(1, std::min<int64_t>(options_.recall_k, n / 2));
  double best_recall = -1;
  int best_round = 0, round = 0;
  for (; round < options_.max_rounds; ++round) {
    TF_RETURN_IF_ERROR(booster.UpdateOneIter(round, train));
    TF_ASSIGN_OR_RETURN(std::vector<float> predicted,
                        booster.Predict(train, /*output_margin=*/true));
    const double recall = TopKRecall(predicted, labels, k);
    if (recall > best_recall) {
      best_recall = recall;
      best_round = round;
    } else if (round - best_round >= options_.early_stopping_rounds) {
      ++round;
      break;
    }
  }
  num_features_ = rows.num_features;
  rounds_ = round;
  fit_on_bases_ = !base_margin.empty();
  booster_.reset();
  train_ = std::move(train);
  booster_ = std::move(booster);
  return absl::OkStatus();
}

absl::StatusOr<std::string> XgbCostModel::SaveJson() const {
  if (!booster_.has_value()) return absl::FailedPreconditionError("cost model: save before a fit");
  if (fit_on_bases_) {
    return absl::FailedPreconditionError(
        "cost model: fitted over base models, it is only a residual without them");
  }
  return booster_->SaveJson();
}

absl::StatusOr<std::unique_ptr<XgbCostModel>> XgbCostModel::LoadJson(
    const XgbCostModelOptions& options, const std::string& json) {
  TF_ASSIGN_OR_RETURN(std::unique_ptr<XgbCostModel> model, Create(options));
  TF_ASSIGN_OR_RETURN(XgbBooster booster, XgbBooster::LoadJson(json));
  TF_ASSIGN_OR_RETURN(int64_t features, booster.NumFeatures());
  if (features <= 0)
    return absl::InvalidArgumentError("cost model: the saved model has no features");
  TF_ASSIGN_OR_RETURN(model->rounds_, booster.BoostedRounds());
  model->num_features_ = static_cast<int>(features);
  model->booster_ = std::move(booster);
  return model;
}

absl::StatusOr<std::vector<float>> XgbCostModel::PredictMargin(const FeatureMatrix& rows) const {
  if (!booster_.has_value()) {
    if (bases_.empty())
      return absl::FailedPreconditionError("cost model: predict before the first fit");
    return BaseMargin(rows);
  }
  if (rows.num_features != num_features_) {
    return absl::InvalidArgumentError(absl::StrCat("cost model trained on ", num_features_,
                                                   " features, asked about rows of ",
                                                   rows.num_features));
  }
  if (rows.num_rows() == 0) return std::vector<float>();
  TF_ASSIGN_OR_RETURN(std::vector<float> base_margin, BaseMargin(rows));
  // PredictDense rejects values that are not whole rows (InvalidArgument).
  return booster_->PredictDense(rows.values, rows.num_rows(), rows.num_features,
                                /*output_margin=*/true, base_margin);
}

absl::StatusOr<std::vector<float>> XgbCostModel::Predict(const FeatureMatrix& rows) const {
  // Both objectives are identity-linked on the margin (squared error, and
  // pairwise ranking scores), so the margin is the prediction.
  return PredictMargin(rows);
}

}  // namespace tunefleet
