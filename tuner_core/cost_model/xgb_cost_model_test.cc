#include "tuner_core/cost_model/xgb_cost_model.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "gtest/gtest.h"

namespace tunefleet {
namespace {

constexpr int kFeatures = 6;

// A synthetic "throughput": peaks where x0 ~ 0.7 and x1 ~ 0.3, x2 scales
// it, the rest are noise features; `shift` moves the peak (another shape).
double Throughput(const float* x, double shift = 0) {
  const double a = x[0] - 0.7 - shift, b = x[1] - 0.3;
  return 100.0 * std::exp(-8 * (a * a + b * b)) * (0.5 + x[2]);
}

FeatureMatrix RandomRows(int n, uint64_t seed) {
  std::mt19937_64 engine(seed);
  std::uniform_real_distribution<float> uniform(0, 1);
  FeatureMatrix rows;
  rows.num_features = kFeatures;
  for (int i = 0; i < n * kFeatures; ++i) rows.values.push_back(uniform(engine));
  return rows;
}

std::vector<double> Throughputs(const FeatureMatrix& rows, double shift = 0) {
  std::vector<double> y;
  for (int64_t i = 0; i < rows.num_rows(); ++i)
    y.push_back(Throughput(&rows.values[i * kFeatures], shift));
  return y;
}

double Spearman(const std::vector<float>& predicted, const std::vector<double>& truth) {
  return RankCorrelation(std::vector<double>(predicted.begin(), predicted.end()), truth);
}

std::vector<float> AsFloats(const std::vector<double>& v) {
  return std::vector<float>(v.begin(), v.end());
}

TEST(XgbCostModelTest, RanksASyntheticCostFunctionWellWithBothLosses) {
  const FeatureMatrix train = RandomRows(300, 1), test = RandomRows(300, 2);
  for (const std::string loss : {"reg", "rank"}) {
    XgbCostModelOptions options;
    options.loss = loss;
    auto model = XgbCostModel::Create(options);
    ASSERT_TRUE(model.ok());
    ASSERT_TRUE((*model)->Fit(train, Throughputs(train)).ok());
    EXPECT_GT((*model)->rounds(), 0);
    auto predicted = (*model)->Predict(test);
    ASSERT_TRUE(predicted.ok()) << predicted.status();
    const std::vector<double> truth = Throughputs(test);
    EXPECT_GT(Spearman(*predicted, truth), 0.85) << loss;
    EXPECT_GE(TopKRecall(*predicted, AsFloats(truth), 30), 0.5) << loss;
  }
}

TEST(XgbCostModelTest, RegressionPredictsTheFractionOfTheBest) {
  const FeatureMatrix train = RandomRows(400, 3);
  auto model = XgbCostModel::Create({});
  ASSERT_TRUE((*model)->Fit(train, Throughputs(train)).ok());
  auto predicted = (*model)->Predict(train);
  ASSERT_TRUE(predicted.ok());
  EXPECT_NEAR(*std::max_element(predicted->begin(), predicted->end()), 1.0, 0.2);
  EXPECT_NEAR(*std::min_element(predicted->begin(), predicted->end()), 0.0, 0.2);
}

TEST(XgbCostModelTest, SameSeedAndDataGiveTheSamePredictions) {
  const FeatureMatrix train = RandomRows(200, 4), test = RandomRows(50, 5);
  XgbCostModelOptions options;
  options.seed = 7;
  auto a = XgbCostModel::Create(options), b = XgbCostModel::Create(options);
  ASSERT_TRUE((*a)->Fit(train, Throughputs(train)).ok());
  ASSERT_TRUE((*b)->Fit(train, Throughputs(train)).ok());
  EXPECT_EQ(*(*a)->Predict(test), *(*b)->Predict(test));
}

TEST(XgbCostModelTest, BaseModelHelpsWhenFewOwnMeasurementsExist) {
  // History: 500 rows of a neighbouring shape; now: 12 rows of this one.
  const FeatureMatrix history = RandomRows(500, 6), few = RandomRows(12, 7),
                      test = RandomRows(300, 8);
  auto base = XgbCostModel::Create({});
  ASSERT_TRUE((*base)->Fit(history, Throughputs(history, 0.05)).ok());
  std::shared_ptr<const XgbCostModel> shared_base = std::move(*base);

  auto cold = XgbCostModel::Create({});
  ASSERT_TRUE((*cold)->Fit(few, Throughputs(few)).ok());
  auto warm = XgbCostModel::Create({});
  (*warm)->SetBaseModel(shared_base, 1.0);
  EXPECT_EQ((*warm)->base_weight(), 1.0);
  // Before its own fit, the warm model already predicts from the history.
  auto history_only = (*warm)->Predict(test);
  ASSERT_TRUE(history_only.ok()) << history_only.status();
  ASSERT_TRUE((*warm)->Fit(few, Throughputs(few)).ok());

  const std::vector<double> truth = Throughputs(test);
  const double cold_rho = Spearman(*(*cold)->Predict(test), truth);
  const double warm_rho = Spearman(*(*warm)->Predict(test), truth);
  EXPECT_GT(Spearman(*history_only, truth), 0.7);
  EXPECT_GT(warm_rho, cold_rho + 0.1) << "cold " << cold_rho << " warm " << warm_rho;

  (*warm)->SetBaseModel(shared_base, 0.0);
  EXPECT_EQ((*warm)->base_weight(), 0.0);
}

TEST(XgbCostModelTest, SeveralBasesAddTheirWeightedMargins) {
  const FeatureMatrix a_rows = RandomRows(200, 10), b_rows = RandomRows(200, 11),
                      test = RandomRows(40, 12);
  auto a = XgbCostModel::Create({}), b = XgbCostModel::Create({});
  ASSERT_TRUE((*a)->Fit(a_rows, Throughputs(a_rows)).ok());
  ASSERT_TRUE((*b)->Fit(b_rows, Throughputs(b_rows, 0.5)).ok());
  const std::vector<float> pa = *(*a)->Predict(test), pb = *(*b)->Predict(test);
  std::shared_ptr<const XgbCostModel> shared_a = std::move(*a), shared_b = std::move(*b);

  auto mixed = XgbCostModel::Create({});
  (*mixed)->SetBaseModels({{shared_a, 0.75}, {shared_b, 0.25}, {nullptr, 1.0}, {shared_b, 0.0}});
  EXPECT_DOUBLE_EQ((*mixed)->base_weight(), 1.0);  // the null and zero-weight bases are dropped
  auto predicted = (*mixed)->Predict(test);
  ASSERT_TRUE(predicted.ok()) << predicted.status();
  for (size_t i = 0; i < pa.size(); ++i)
    EXPECT_NEAR((*predicted)[i], 0.75 * pa[i] + 0.25 * pb[i], 1e-5);

  (*mixed)->SetBaseModels({});
  EXPECT_EQ((*mixed)->base_weight(), 0.0);
  EXPECT_EQ((*mixed)->Predict(test).status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(XgbCostModelTest, GroupsNormaliseEachWorkloadToItsOwnBest) {
  // Two groups whose raw throughputs differ 100x rank the same way.
  FeatureMatrix rows = RandomRows(200, 9);
  std::vector<double> y = Throughputs(rows);
  for (int i = 100; i < 200; ++i) y[i] *= 100;
  auto model = XgbCostModel::Create({});
  ASSERT_TRUE((*model)->Fit(rows, y, {100, 100}).ok());
  auto predicted = (*model)->Predict(rows);
  ASSERT_TRUE(predicted.ok());
  EXPECT_LT(*std::max_element(predicted->begin(), predicted->end()), 1.5);
  EXPECT_EQ((*model)->Fit(rows, y, {100, 50}).code(), absl::StatusCode::kInvalidArgument);
}

TEST(XgbCostModelTest, BadInputsAreErrors) {
  XgbCostModelOptions bad;
  bad.loss = "hinge";
  EXPECT_EQ(XgbCostModel::Create(bad).status().code(), absl::StatusCode::kInvalidArgument);
  bad = {};
  bad.max_depth = 0;
  EXPECT_EQ(XgbCostModel::Create(bad).status().code(), absl::StatusCode::kInvalidArgument);

  auto model = XgbCostModel::Create({});
  const FeatureMatrix rows = RandomRows(10, 10);
  EXPECT_EQ((*model)->Predict(rows).status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ((*model)->Fit(FeatureMatrix{kFeatures, {}}, {}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*model)->Fit(rows, {1.0, 2.0}).code(), absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE((*model)->Fit(rows, Throughputs(rows)).ok());
  FeatureMatrix narrow{kFeatures - 1, std::vector<float>(kFeatures - 1, 0.5f)};
  EXPECT_EQ((*model)->Predict(narrow).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(XgbCostModelTest, ASavedModelLoadsAndPredictsTheSame) {
  const FeatureMatrix rows = RandomRows(300, 13), test = RandomRows(50, 14);
  auto model = XgbCostModel::Create({});
  EXPECT_EQ((*model)->SaveJson().status().code(), absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE((*model)->Fit(rows, Throughputs(rows)).ok());
  absl::StatusOr<std::string> json = (*model)->SaveJson();
  ASSERT_TRUE(json.ok()) << json.status();
  absl::StatusOr<std::unique_ptr<XgbCostModel>> loaded = XgbCostModel::LoadJson({}, *json);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ((*loaded)->num_features(), kFeatures);
  EXPECT_EQ((*loaded)->rounds(), (*model)->rounds());
  const std::vector<float> before = *(*model)->Predict(test), after = *(*loaded)->Predict(test);
  ASSERT_EQ(before.size(), after.size());
  for (size_t i = 0; i < before.size(); ++i) EXPECT_FLOAT_EQ(before[i], after[i]);

  // A residual over a base is not a model on its own; text that is no model
  // is an error, not an empty model.
  std::shared_ptr<const XgbCostModel> base = std::move(*loaded);
  auto residual = XgbCostModel::Create({});
  (*residual)->SetBaseModel(base, 1.0);
  ASSERT_TRUE((*residual)->Fit(rows, Throughputs(rows, 0.1)).ok());
  EXPECT_EQ((*residual)->SaveJson().status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_FALSE(XgbCostModel::LoadJson({}, "{\"learner\": 3}").ok());
  EXPECT_FALSE(XgbCostModel::LoadJson({}, "not json").ok());
}

TEST(XgbCostModelTest, RankCorrelationIsOneForOneOrderAndMinusOneForItsReverse) {
  EXPECT_DOUBLE_EQ(RankCorrelation({1, 5, 3, 9}, {10, 50, 30, 90}), 1.0);
  EXPECT_DOUBLE_EQ(RankCorrelation({1, 5, 3, 9}, {4, 2, 3, 1}), -1.0);
  EXPECT_DOUBLE_EQ(RankCorrelation({1, 2, 3}, {1, 3, 2}), 0.5);
}

TEST(XgbCostModelTest, TopKRecallCountsTheOverlapOfTheTopSets) {
  EXPECT_DOUBLE_EQ(TopKRecall({0.9f, 0.1f, 0.8f, 0.2f}, {1, 0, 1, 0}, 2), 1.0);
  EXPECT_DOUBLE_EQ(TopKRecall({0.9f, 0.8f, 0.1f, 0.2f}, {1, 0, 1, 0}, 2), 0.5);
  EXPECT_DOUBLE_EQ(TopKRecall({}, {}, 3), 1.0);
}

}  // namespace
}  // namespace tunefleet
