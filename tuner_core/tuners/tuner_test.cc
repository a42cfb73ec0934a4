// The Tune() loop, driven through GridTuner (whose proposals are predictable)
// and a FakeMeasurer.
#include "tuner_core/tuners/tuner.h"

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tuner_core/tuners/fake_measurer.h"
#include "tuner_core/tuners/grid_tuner.h"

namespace tunefleet {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// 36 configs: two 2-way splits of 32.
ConfigSpace MakeSpace() {
  ConfigSpace space;
  EXPECT_TRUE(space.DefineSplit("tile_x", 32).ok());
  EXPECT_TRUE(space.DefineSplit("tile_y", 32).ok());
  return space;
}

// A grid tuner that notes every config Update sees.
class RecordingTuner : public GridTuner {
 public:
  using GridTuner::GridTuner;
  void Update(const std::vector<TrialResult>& results) override {
    for (const TrialResult& trial : results) updated.push_back(trial.config.index());
  }
  std::vector<int64_t> updated;
};

TEST(TunerTest, RunsNTrialsInBatches) {
  GridTuner tuner(MakeSpace());
  FakeMeasurer measurer([](const Config&) { return FakeCost(1e-3); });
  ASSERT_TRUE(tuner.Tune(measurer, QuietTuneOptions(10, 4)).ok());
  EXPECT_EQ(tuner.trials_done(), 10);
  ASSERT_EQ(measurer.batches().size(), 3u);
  EXPECT_EQ(measurer.batches()[0].size(), 4u);
  EXPECT_EQ(measurer.batches()[1].size(), 4u);
  EXPECT_EQ(measurer.batches()[2].size(), 2u);  // min(batch_size, remaining)

  // A second call continues where the first stopped.
  ASSERT_TRUE(tuner.Tune(measurer, QuietTuneOptions(5, 4)).ok());
  EXPECT_EQ(tuner.trials_done(), 15);
  EXPECT_EQ(measurer.measured_indices().back(), 14);
}

TEST(TunerTest, StopsWhenTheStrategyRunsOut) {
  GridTuner tuner(MakeSpace());
  FakeMeasurer measurer([](const Config&) { return FakeCost(1e-3); });
  ASSERT_TRUE(tuner.Tune(measurer, QuietTuneOptions(1000, 8)).ok());
  EXPECT_EQ(tuner.trials_done(), 36);
  EXPECT_FALSE(tuner.HasNext());
}

TEST(TunerTest, TracksTheBestConfigByGflops) {
  GridTuner tuner(MakeSpace());
  // Index 13 is fastest (1 ms); the rest take 2 ms + index us.
  FakeMeasurer measurer([](const Config& config) {
    return FakeCost(config.index() == 13 ? 1e-3 : 2e-3 + config.index() * 1e-6);
  });
  TuneOptions options = QuietTuneOptions(36, 5);
  options.flops = 2e9;
  ASSERT_TRUE(tuner.Tune(measurer, options).ok());
  ASSERT_TRUE(tuner.best_config().has_value());
  EXPECT_EQ(tuner.best_config()->index(), 13);
  EXPECT_EQ(tuner.best_trial(), 13);
  EXPECT_DOUBLE_EQ(tuner.best_flops(), 2e12);  // 2e9 FLOP in 1 ms
}

TEST(TunerTest, WithoutFlopsTheLowestCostStillWins) {
  GridTuner tuner(MakeSpace());
  FakeMeasurer measurer(
      [](const Config& config) { return FakeCost(config.index() == 7 ? 1e-4 : 1e-3); });
  ASSERT_TRUE(tuner.Tune(measurer, QuietTuneOptions(36, 8)).ok());
  ASSERT_TRUE(tuner.best_config().has_value());
  EXPECT_EQ(tuner.best_config()->index(), 7);
  EXPECT_EQ(tuner.best_flops(), 0.0);
}

TEST(TunerTest, FailedTrialsNeverBecomeBest) {
  GridTuner tuner(MakeSpace());
  FakeMeasurer measurer([](const Config& config) {
    if (config.index() % 2 == 0) return FakeFailure(MeasureErrorNo::kWrongAnswer);
    return FakeCost(1.0 / (config.index() + 1));  // later is faster
  });
  TuneOptions options = QuietTuneOptions(36, 8);
  options.flops = 1e9;
  ASSERT_TRUE(tuner.Tune(measurer, options).ok());
  EXPECT_EQ(tuner.best_config()->index(), 35);
}

TEST(TunerTest, NoSuccessLeavesNoBest) {
  GridTuner tuner(MakeSpace());
  FakeMeasurer measurer([](const Config&) { return FakeFailure(MeasureErrorNo::kRunTimeout); });
  ASSERT_TRUE(tuner.Tune(measurer, QuietTuneOptions(10, 3)).ok());
  EXPECT_FALSE(tuner.best_config().has_value());
  EXPECT_EQ(tuner.best_flops(), 0.0);
}

TEST(TunerTest, EarlyStoppingStopsAfterNoImprovement) {
  GridTuner tuner(MakeSpace());
  // Faster up to index 5, slower afterwards.
  FakeMeasurer measurer([](const Config& config) {
    const int64_t i = config.index();
    return FakeCost(i <= 5 ? 1.0 - 0.1 * i : 1.0 + i);
  });
  TuneOptions options = QuietTuneOptions(36, 1);
  options.early_stopping = 10;
  ASSERT_TRUE(tuner.Tune(measurer, options).ok());
  EXPECT_EQ(tuner.best_trial(), 5);
  // AutoTVM's rule: stop once trials_done - best_trial >= early_stopping.
  EXPECT_EQ(tuner.trials_done(), 15);
}

TEST(TunerTest, EarlyStoppingChecksAfterWholeBatches) {
  GridTuner tuner(MakeSpace());
  FakeMeasurer measurer([](const Config& config) { return FakeCost(1.0 + config.index()); });
  TuneOptions options = QuietTuneOptions(36, 4);
  options.early_stopping = 6;
  ASSERT_TRUE(tuner.Tune(measurer, options).ok());
  EXPECT_EQ(tuner.best_trial(), 0);
  EXPECT_EQ(tuner.trials_done(), 8);
}

TEST(TunerTest, CallbacksAndUpdateSeeEveryResult) {
  RecordingTuner tuner(MakeSpace());
  FakeMeasurer measurer([](const Config& config) {
    return config.index() == 3 ? FakeFailure(MeasureErrorNo::kCompileHost) : FakeCost(1e-3);
  });
  std::vector<int64_t> first, second;
  std::vector<MeasureErrorNo> errors;
  std::vector<size_t> batch_sizes;
  TuneCallback log = [&](const std::vector<TrialResult>& batch) {
    batch_sizes.push_back(batch.size());
    for (const TrialResult& trial : batch) {
      first.push_back(trial.config.index());
      errors.push_back(trial.result.error_no);
    }
  };
  TuneCallback other = [&](const std::vector<TrialResult>& batch) {
    for (const TrialResult& trial : batch) second.push_back(trial.config.index());
  };
  ASSERT_TRUE(tuner.Tune(measurer, QuietTuneOptions(7, 3), {log, other}).ok());
  EXPECT_THAT(first, ElementsAre(0, 1, 2, 3, 4, 5, 6));
  EXPECT_EQ(second, first);
  EXPECT_EQ(tuner.updated, first);
  EXPECT_THAT(batch_sizes, ElementsAre(3, 3, 1));
  EXPECT_EQ(errors[3], MeasureErrorNo::kCompileHost);
  EXPECT_EQ(errors[4], MeasureErrorNo::kNoError);
}

// The config check: refused proposals are replaced, never measured, counted
// or handed to Update.
TEST(TunerTest, ConfigsTheCheckRefusesAreNeverMeasured) {
  RecordingTuner tuner(MakeSpace());
  tuner.SetConfigCheck([](const Config& config) {
    return config.index() % 3 == 1 ? absl::InvalidArgumentError(
                                         absl::StrCat("config ", config.index(), " does not fit"))
                                   : absl::OkStatus();
  });
  FakeMeasurer measurer([](const Config&) { return FakeCost(1e-3); });
  ASSERT_TRUE(tuner.Tune(measurer, QuietTuneOptions(10, 4)).ok());
  EXPECT_EQ(tuner.trials_done(), 10);
  EXPECT_THAT(measurer.measured_indices(), ElementsAre(0, 2, 3, 5, 6, 8, 9, 11, 12, 14));
  EXPECT_EQ(measurer.batches()[0].size(), 4u);  // full batches despite refusals
  EXPECT_EQ(tuner.updated, measurer.measured_indices());
  EXPECT_EQ(tuner.refused_before_measuring(), 5);  // 1, 4, 7, 10, 13
  EXPECT_TRUE(tuner.IsVisited(1));

  // To the end of the space: 24 of the 36 measured, 12 refused.
  ASSERT_TRUE(tuner.Tune(measurer, QuietTuneOptions(1000, 4)).ok());
  EXPECT_EQ(tuner.trials_done(), 24);
  EXPECT_EQ(tuner.refused_before_measuring(), 12);
  EXPECT_FALSE(tuner.HasNext());
}

// First configs come out first, in order, once each; a visited one or one
// the check refuses is skipped, and the strategy fills the batch after them.
TEST(TunerTest, FirstConfigsAreProposedFirstAndOnce) {
  const ConfigSpace space = MakeSpace();
  GridTuner tuner(space);
  tuner.SetConfigCheck([](const Config& config) {
    return config.index() == 30 ? absl::InvalidArgumentError("does not fit") : absl::OkStatus();
  });
  tuner.MarkVisited(20);
  tuner.SetFirstConfigs({*space.Get(35), *space.Get(20), *space.Get(30), *space.Get(7)});
  FakeMeasurer measurer([](const Config&) { return FakeCost(1e-3); });
  ASSERT_TRUE(tuner.Tune(measurer, QuietTuneOptions(5, 4)).ok());
  EXPECT_THAT(measurer.measured_indices(), ElementsAre(35, 7, 0, 1, 2));
  EXPECT_EQ(tuner.refused_before_measuring(), 1);  // 30
  // The grid does not measure 7 or 35 again.
  ASSERT_TRUE(tuner.Tune(measurer, QuietTuneOptions(1000, 4)).ok());
  EXPECT_EQ(tuner.trials_done(), 34);  // 36 less 20 (visited before) and 30 (refused)
}

// TakeFirstConfigs hands out the first configs only, never the strategy's.
TEST(TunerTest, TakeFirstConfigsGivesTheFirstConfigsAndNothingElse) {
  const ConfigSpace space = MakeSpace();
  GridTuner tuner(space);
  tuner.MarkVisited(20);
  tuner.SetFirstConfigs({*space.Get(35), *space.Get(20), *space.Get(7)});
  std::vector<int64_t> taken;
  for (const Config& c : tuner.TakeFirstConfigs(100)) taken.push_back(c.index());
  EXPECT_THAT(taken, ElementsAre(35, 7));
  EXPECT_TRUE(tuner.TakeFirstConfigs(100).empty());
  EXPECT_TRUE(tuner.IsVisited(35));
}

// A space the target can build nothing of ends the search, measuring nothing.
TEST(TunerTest, ASpaceTheCheckRefusesEntirelyEndsTheSearch) {
  GridTuner tuner(MakeSpace());
  tuner.SetConfigCheck([](const Config&) { return absl::InvalidArgumentError("too wide"); });
  FakeMeasurer measurer([](const Config&) { return FakeCost(1e-3); });
  ASSERT_TRUE(tuner.Tune(measurer, QuietTuneOptions(100, 8)).ok());
  EXPECT_EQ(tuner.trials_done(), 0);
  EXPECT_TRUE(measurer.batches().empty());
  EXPECT_EQ(tuner.refused_before_measuring(), 36);
  EXPECT_FALSE(tuner.best_config().has_value());
}

TEST(TunerTest, WritesAutoTvmProgressLines) {
  GridTuner tuner(MakeSpace());
  FakeMeasurer measurer(
      [](const Config& config) { return FakeCost(config.index() == 1 ? 0.5 : 1.0); });
  std::ostringstream progress;
  TuneOptions options;
  options.n_trial = 4;
  options.batch_size = 2;
  options.flops = 1e10;
  options.task_label = "[Task 2/3]";
  options.progress_stream = &progress;
  ASSERT_TRUE(tuner.Tune(measurer, options).ok());
  const std::string text = progress.str();
  // One '\r'-prefixed line per batch, then a newline.
  ASSERT_EQ(std::count(text.begin(), text.end(), '\r'), 2);
  EXPECT_EQ(text.back(), '\n');
  EXPECT_THAT(text,
              HasSubstr("\r[Task 2/3]  Current/Best:   20.00/  20.00 GFLOPS | Progress: (2/4) | "));
  EXPECT_THAT(text,
              HasSubstr("\r[Task 2/3]  Current/Best:   10.00/  20.00 GFLOPS | Progress: (4/4) | "));
}

TEST(TunerTest, NoProgressOutputWhenDisabled) {
  GridTuner tuner(MakeSpace());
  FakeMeasurer measurer([](const Config&) { return FakeCost(1.0); });
  std::ostringstream progress;
  TuneOptions options = QuietTuneOptions(4, 2);
  options.progress_stream = &progress;
  ASSERT_TRUE(tuner.Tune(measurer, options).ok());
  EXPECT_EQ(progress.str(), "");
}

TEST(TunerTest, ProgressLineFormat) {
  EXPECT_EQ(ProgressLine("[Task 1/1]", 12.344, 56.78, 40, 500, 12.3449),
            "[Task 1/1]  Current/Best:   12.34/  56.78 GFLOPS | Progress: (40/500) | 12.34 s");
  EXPECT_EQ(ProgressLine("[Task 10/12]", 0, 1234.5, 0, 2000, 0),
            "[Task 10/12]  Current/Best:    0.00/1234.50 GFLOPS | Progress: (0/2000) | 0.00 s");
}

TEST(TunerTest, MeasurerReturningTheWrongNumberOfResultsIsInternal) {
  class ShortMeasurer : public MeasurerInterface {
   public:
    std::vector<MeasureResult> Measure(const std::vector<Config>& configs) override {
      return std::vector<MeasureResult>(configs.size() - 1, FakeCost(1.0));
    }
  };
  GridTuner tuner(MakeSpace());
  ShortMeasurer measurer;
  EXPECT_EQ(tuner.Tune(measurer, QuietTuneOptions(4, 2)).code(), absl::StatusCode::kInternal);
}

TEST(TunerTest, BadOptionsAreInvalidArgument) {
  GridTuner tuner(MakeSpace());
  FakeMeasurer measurer([](const Config&) { return FakeCost(1.0); });
  EXPECT_EQ(tuner.Tune(measurer, QuietTuneOptions(-1, 2)).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(tuner.Tune(measurer, QuietTuneOptions(4, 0)).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(measurer.batches().empty());
}

TEST(TunerTest, ZeroTrialsMeasuresNothing) {
  GridTuner tuner(MakeSpace());
  FakeMeasurer measurer([](const Config&) { return FakeCost(1.0); });
  ASSERT_TRUE(tuner.Tune(measurer, QuietTuneOptions(0, 2)).ok());
  EXPECT_TRUE(measurer.batches().empty());
}

}  // namespace
}  // namespace tunefleet
