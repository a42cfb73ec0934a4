#include "tuner_core/tuners/tuner_factory.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tuner_core/tuners/ga_tuner.h"
#include "tuner_core/tuners/grid_tuner.h"
#include "tuner_core/tuners/random_tuner.h"
#include "tuner_core/tuners/xgb_tuner.h"

namespace tunefleet {
namespace {

using ::testing::HasSubstr;

ConfigSpace MakeSpace() {
  ConfigSpace space;
  EXPECT_TRUE(space.DefineSplit("tile", 32).ok());
  return space;
}

TEST(TunerFactoryTest, MakesGridAndRandomByName) {
  absl::StatusOr<std::unique_ptr<Tuner>> grid = MakeTuner("grid", MakeSpace(), 0);
  ASSERT_TRUE(grid.ok()) << grid.status();
  EXPECT_NE(dynamic_cast<GridTuner*>(grid->get()), nullptr);

  absl::StatusOr<std::unique_ptr<Tuner>> random = MakeTuner("random", MakeSpace(), 1);
  ASSERT_TRUE(random.ok()) << random.status();
  EXPECT_NE(dynamic_cast<RandomTuner*>(random->get()), nullptr);
  EXPECT_EQ((*random)->NextBatch(100).size(), 6u);
}

TEST(TunerFactoryTest, MakesGaWithItsOptions) {
  TunerOptions options;
  options.seed = 3;
  options.ga.pop_size = 4;
  absl::StatusOr<std::unique_ptr<Tuner>> ga = MakeTuner("ga", MakeSpace(), options);
  ASSERT_TRUE(ga.ok()) << ga.status();
  EXPECT_NE(dynamic_cast<GaTuner*>(ga->get()), nullptr);
  options.ga.pop_size = 0;
  EXPECT_EQ(MakeTuner("ga", MakeSpace(), options).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(TunerFactoryTest, MakesXgbVariantsFromTheTask) {
  auto task = Task::Make("", "dense", {{"M", 64}, {"N", 64}, {"K", 64}}, "llvm");
  ASSERT_TRUE(task.ok());
  TunerOptions options;
  options.task = task->get();
  options.xgb.plan_size = 16;
  for (const char* name : {"xgb", "xgb_rank", "xgb_knob", "xgb_curve"}) {
    absl::StatusOr<std::unique_ptr<Tuner>> tuner = MakeTuner(name, (*task)->space(), options);
    ASSERT_TRUE(tuner.ok()) << name << ": " << tuner.status();
    EXPECT_NE(dynamic_cast<XgbTuner*>(tuner->get()), nullptr) << name;
    EXPECT_EQ((*tuner)->NextBatch(4).size(), 4u);
  }
}

TEST(TunerFactoryTest, TheRegressionXgbTunersAskForTheirTemplatesPriorOnTheirFeatures) {
  auto task = Task::Make("", "dense", {{"M", 64}, {"N", 64}, {"K", 64}}, "llvm");
  ASSERT_TRUE(task.ok());
  std::vector<std::string> asked;
  TunerOptions options;
  options.task = task->get();
  options.prior_for = [&asked](const std::string& template_name, FeatureKind feature) {
    asked.push_back(template_name + " " + FeatureKindName(feature));
    return std::shared_ptr<const XgbCostModel>();  // none for it
  };
  for (const char* name : {"xgb", "xgb_rank", "xgb_knob", "random"}) {
    ASSERT_TRUE(MakeTuner(name, (*task)->space(), options).ok()) << name;
  }
  const std::string t = (*task)->name();
  // Not the rank tuner (a prior is a regression of throughput), nor random.
  EXPECT_EQ(asked, (std::vector<std::string>{t + " itervar", t + " knob"}));
  for (const std::string& name : TunerNames()) {
    EXPECT_EQ(TunerUsesPrior(name), name == "xgb" || name == "xgb_knob" || name == "xgb_curve")
        << name;
  }
}

TEST(TunerFactoryTest, XgbWithoutTheTaskOrWithAnotherSpaceIsInvalidArgument) {
  absl::StatusOr<std::unique_ptr<Tuner>> no_task = MakeTuner("xgb", MakeSpace(), 0);
  EXPECT_EQ(no_task.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(no_task.status().message()), HasSubstr("needs the task"));
  auto task = Task::Make("", "dense", {{"M", 64}, {"N", 64}, {"K", 64}}, "llvm");
  TunerOptions options;
  options.task = task->get();
  EXPECT_EQ(MakeTuner("xgb", MakeSpace(), options).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(TunerFactoryTest, UnknownNameIsInvalidArgumentListingKnownNames) {
  absl::StatusOr<std::unique_ptr<Tuner>> tuner = MakeTuner("annealing", MakeSpace(), 0);
  EXPECT_EQ(tuner.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(tuner.status().message()), HasSubstr("'annealing'"));
  EXPECT_THAT(std::string(tuner.status().message()), HasSubstr("grid, random, ga, xgb, xgb_rank"));
}

}  // namespace
}  // namespace tunefleet
