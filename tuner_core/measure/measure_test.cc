#include "tuner_core/measure/measure.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace {

using ::testing::HasSubstr;

TEST(MeasureResultTest, MeanCostIsThePlainMeanOfTheStoredCosts) {
  // The costs were trimmed once by the time evaluator; reading them must not
  // trim again (it used to drop 1 and 4 here and answer 2.5).
  MeasureResult result;
  result.costs = {1.0, 2.0, 3.0, 4.0};
  EXPECT_DOUBLE_EQ(result.MeanCost(), 2.5);
  result.costs = {1.0, 2.0, 9.0};
  EXPECT_DOUBLE_EQ(result.MeanCost(), 4.0);
}

TEST(MeasureResultTest, MeanCostOfNoCostsIsTheFailureCost) {
  EXPECT_EQ(MeasureResult().MeanCost(), 1e9);
}

TEST(MeasureOptionsTest, DefaultsAreValid) { EXPECT_TRUE(MeasureOptions().Validate().ok()); }

TEST(MeasureOptionsTest, TimeoutAboveTheCapIsRefusedNamingTheCap) {
  MeasureOptions options;
  options.timeout_s = kMaxMeasureTimeoutS;
  EXPECT_TRUE(options.Validate().ok());
  options.timeout_s = 601;
  const absl::Status status = options.Validate();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("timeout_s = 601"));
  EXPECT_THAT(status.message(), HasSubstr("cap of 600 s"));
}

TEST(MeasureOptionsTest, RejectsEachBadFieldByName) {
  auto message_for = [](auto mutate) {
    MeasureOptions options;
    mutate(options);
    return std::string(options.Validate().message());
  };
  EXPECT_THAT(message_for([](MeasureOptions& o) { o.number = 0; }), HasSubstr("number = 0"));
  EXPECT_THAT(message_for([](MeasureOptions& o) { o.repeat = 0; }), HasSubstr("repeat = 0"));
  EXPECT_THAT(message_for([](MeasureOptions& o) { o.min_repeat_ms = -1; }),
              HasSubstr("min_repeat_ms = -1"));
  EXPECT_THAT(message_for([](MeasureOptions& o) { o.cooldown_interval_s = -0.5; }),
              HasSubstr("cooldown_interval_s = -0.5"));
  EXPECT_THAT(message_for([](MeasureOptions& o) { o.timeout_s = 0; }), HasSubstr("timeout_s = 0"));
  EXPECT_THAT(message_for([](MeasureOptions& o) { o.max_repeat = 2; }),
              HasSubstr("max_repeat = 2"));
  EXPECT_THAT(message_for([](MeasureOptions& o) { o.target_rel_ci = 1.5; }),
              HasSubstr("target_rel_ci = 1.5"));
  EXPECT_THAT(message_for([](MeasureOptions& o) { o.reject_above_s = -1; }),
              HasSubstr("reject_above_s = -1"));
}

TEST(MeasureOptionsTest, TargetCiNeedsRoomForMoreRepeats) {
  MeasureOptions options;
  options.target_rel_ci = 0.02;
  EXPECT_THAT(options.Validate().message(), HasSubstr("needs max_repeat > repeat"));
  options.max_repeat = 30;
  EXPECT_TRUE(options.Validate().ok()) << options.Validate();
  EXPECT_EQ(options.EffectiveMaxRepeat(), 30);
}

}  // namespace
}  // namespace tunefleet
