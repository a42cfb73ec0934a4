#include "tuner_core/cost_model/xgboost_api.h"

#include <cmath>

#include "gtest/gtest.h"

namespace tunefleet {
namespace {

// y = 2 * x0 over 50 rows of 2 features.
struct Data {
  std::vector<float> x, y;
};
Data Linear() {
  Data d;
  for (int i = 0; i < 50; ++i) {
    d.x.push_back(i / 50.0f);
    d.x.push_back(static_cast<float>((i * 7) % 5));
    d.y.push_back(2.0f * i / 50.0f);
  }
  return d;
}

TEST(XgboostApiTest, TrainsAndPredictsThroughTheWrappers) {
  Data d = Linear();
  auto train = XgbMatrix::FromDense(d.x, 50, 2);
  ASSERT_TRUE(train.ok()) << train.status();
  ASSERT_TRUE(train->SetFloatInfo("label", d.y).ok());
  auto booster = XgbBooster::Create({&*train});
  ASSERT_TRUE(booster.ok()) << booster.status();
  ASSERT_TRUE(booster->SetParam("max_depth", "3").ok());
  ASSERT_TRUE(booster->SetParam("nthread", "1").ok());
  for (int i = 0; i < 30; ++i) ASSERT_TRUE(booster->UpdateOneIter(i, *train).ok());
  EXPECT_EQ(*booster->BoostedRounds(), 30);
  auto predicted = booster->Predict(*train);
  ASSERT_TRUE(predicted.ok()) << predicted.status();
  ASSERT_EQ(predicted->size(), 50u);
  EXPECT_NEAR((*predicted)[0], 0.0, 0.1);
  EXPECT_NEAR((*predicted)[49], 1.96, 0.1);
}

TEST(XgboostApiTest, InPlacePredictionEqualsDMatrixPredictionWithAndWithoutBaseMargin) {
  Data d = Linear();
  auto train = XgbMatrix::FromDense(d.x, 50, 2);
  ASSERT_TRUE(train.ok());
  ASSERT_TRUE(train->SetFloatInfo("label", d.y).ok());
  auto booster = XgbBooster::Create({&*train});
  ASSERT_TRUE(booster.ok());
  ASSERT_TRUE(booster->SetParam("max_depth", "3").ok());
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(booster->UpdateOneIter(i, *train).ok());
  std::vector<float> margin(50);
  for (int i = 0; i < 50; ++i) margin[i] = 0.25f * (i % 4);
  for (bool output_margin : {false, true}) {
    for (bool with_margin : {false, true}) {
      auto matrix = XgbMatrix::FromDense(d.x, 50, 2);
      ASSERT_TRUE(matrix.ok());
      if (with_margin) {
        ASSERT_TRUE(matrix->SetFloatInfo("base_margin", margin).ok());
      }
      auto expected = booster->Predict(*matrix, output_margin);
      auto in_place = booster->PredictDense(d.x, 50, 2, output_margin,
                                            with_margin ? margin : std::vector<float>());
      ASSERT_TRUE(expected.ok()) << expected.status();
      ASSERT_TRUE(in_place.ok()) << in_place.status();
      ASSERT_EQ(in_place->size(), 50u);
      for (int i = 0; i < 50; ++i) EXPECT_FLOAT_EQ((*in_place)[i], (*expected)[i]) << i;
    }
  }
  EXPECT_EQ(booster->PredictDense({1, 2, 3}, 2, 2).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(booster->PredictDense(d.x, 50, 2, true, {1.0f}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(XgboostApiTest, SizeMismatchesAreInvalidArgument) {
  EXPECT_EQ(XgbMatrix::FromDense({1, 2, 3}, 2, 2).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(XgbMatrix::FromDense({}, 0, 2).status().code(), absl::StatusCode::kInvalidArgument);
  auto m = XgbMatrix::FromDense({1, 2, 3, 4}, 2, 2);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->SetFloatInfo("label", {1}).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(m->SetFloatInfo("labels", {1, 2}).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(m->SetGroups({1, 2}).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(m->SetGroups({1, 1}).ok());
}

TEST(XgboostApiTest, XgboostFailuresBecomeInternalWithItsMessage) {
  Data d = Linear();
  auto train = XgbMatrix::FromDense(d.x, 50, 2);
  ASSERT_TRUE(train->SetFloatInfo("label", d.y).ok());
  auto booster = XgbBooster::Create({&*train});
  ASSERT_TRUE(booster.ok());
  absl::Status bad_param = booster->SetParam("objective", "no:such_objective");
  if (bad_param.ok()) bad_param = booster->UpdateOneIter(0, *train);  // validated lazily
  EXPECT_EQ(bad_param.code(), absl::StatusCode::kInternal);
  EXPECT_NE(bad_param.message().find("xgboost"), std::string::npos);
}

TEST(XgboostApiTest, PredictingRowsOfAnotherWidthFails) {
  Data d = Linear();
  auto train = XgbMatrix::FromDense(d.x, 50, 2);
  ASSERT_TRUE(train->SetFloatInfo("label", d.y).ok());
  auto booster = XgbBooster::Create({&*train});
  ASSERT_TRUE(booster->UpdateOneIter(0, *train).ok());
  auto wide = XgbMatrix::FromDense(std::vector<float>(10, 1.0f), 2, 5);
  ASSERT_TRUE(wide.ok());
  EXPECT_EQ(booster->Predict(*wide).status().code(), absl::StatusCode::kInternal);
}

TEST(XgboostApiTest, MovedFromHandlesAreReleasedOnce) {
  auto m = XgbMatrix::FromDense({1, 2}, 1, 2);
  ASSERT_TRUE(m.ok());
  XgbMatrix moved = std::move(*m);
  XgbMatrix target = std::move(moved);
  EXPECT_EQ(target.rows(), 1);
  EXPECT_NE(target.handle(), nullptr);
}

}  // namespace
}  // namespace tunefleet
