#include "tuner_core/tuners/xgb_tuner.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "absl/container/flat_hash_set.h"
#include "gtest/gtest.h"
#include "tuner_core/features/feature_extractor.h"
#include "tuner_core/templates/task_test_util.h"
#include "tuner_core/tuners/fake_measurer.h"
#include "tuner_core/tuners/random_tuner.h"

namespace tunefleet {
namespace {

// A synthetic GFLOPS landscape over the default dense template's configs,
// shaped like the real one: an 8-lane, 2-vector, 6-row register tile with
// packing wins.
double SyntheticGflops(const Config& c) {
  auto get = [&](const char* knob) { return static_cast<double>(*c.GetInt(knob)); };
  double g = 80;
  g *= get("vec") == 8 ? 1.0 : get("vec") == 4 ? 0.45 : 0.05;
  g *= 1.0 / (1.0 + 0.5 * std::abs(get("nr_vecs") - 2));
  g *= 1.0 / (1.0 + 0.15 * std::abs(get("mr") - 6));
  // The dot kernel (dense_gemm.x86, layout NK) ignores kc and pack_a (the
  // space declares them inert for it): a flat 0.8 instead.
  const absl::StatusOr<std::string> kernel = c.GetString("kernel");
  if (kernel.ok() && *kernel == "dot") {
    g *= 0.8;
  } else {
    g *= get("kc") >= 128 ? 1.0 : 0.7;
    g *= get("pack_a") == 1 ? 1.0 : 0.8;
  }
  g *= get("unroll_k") >= 2 ? 1.0 : 0.9;
  g *= 1.0 / (1.0 + 0.05 * std::abs(std::log2(get("mc_panels")) - 3));
  return g;
}

MeasureResult SyntheticResult(const Config& c) { return FakeCost(1.0 / SyntheticGflops(c)); }

XgbTunerOptions FastOptions(uint64_t seed) {
  XgbTunerOptions options;
  options.seed = seed;
  options.plan_size = 32;
  options.sa.n_iter = 150;
  options.sa.parallel_size = 64;
  return options;
}

TuneOptions Quiet(int64_t trials, int batch) {
  TuneOptions options = QuietTuneOptions(trials, batch);
  options.flops = 1e9;  // best_flops() / 1e9 is then the synthetic GFLOPS
  return options;
}

TEST(XgbTunerTest, FindsBetterConfigsThanRandomSearch) {
  auto task = DensePackTask(256, 256, 256);
  double xgb_total = 0, random_total = 0;
  for (uint64_t seed = 1; seed <= 2; ++seed) {
    auto xgb = XgbTuner::Create(*task, FastOptions(seed));
    ASSERT_TRUE(xgb.ok()) << xgb.status();
    FakeMeasurer measurer(SyntheticResult);
    ASSERT_TRUE((*xgb)->Tune(measurer, Quiet(160, 8)).ok());
    EXPECT_TRUE((*xgb)->model_status().ok()) << (*xgb)->model_status();
    EXPECT_EQ((*xgb)->model_timings().fits, 160 / 32);
    xgb_total += (*xgb)->best_flops() / 1e9;

    RandomTuner random(task->space(), seed);
    FakeMeasurer random_measurer(SyntheticResult);
    ASSERT_TRUE(random.Tune(random_measurer, Quiet(160, 8)).ok());
    random_total += random.best_flops() / 1e9;
  }
  EXPECT_GT(xgb_total, random_total);
  EXPECT_GT(xgb_total / 2, 0.9 * 80);  // the optimum is 80
}

TEST(XgbTunerTest, SeededRunIsReplayable) {
  auto task = DensePackTask(128, 128, 128);
  auto run = [&](uint64_t seed) {
    auto tuner = XgbTuner::Create(*task, FastOptions(seed));
    FakeMeasurer measurer(SyntheticResult);
    EXPECT_TRUE((*tuner)->Tune(measurer, Quiet(80, 8)).ok());
    return measurer.measured_indices();
  };
  const std::vector<int64_t> first = run(3);
  EXPECT_EQ(first, run(3));
  EXPECT_NE(first, run(4));
}

TEST(XgbTunerTest, FeatureThreadsDoNotChangeTheRun) {
  auto task = DensePackTask(128, 128, 128);
  auto run = [&](int threads) {
    XgbTunerOptions options = FastOptions(5);
    options.feature_threads = threads;
    auto tuner = XgbTuner::Create(*task, options);
    FakeMeasurer measurer(SyntheticResult);
    EXPECT_TRUE((*tuner)->Tune(measurer, Quiet(80, 8)).ok());
    EXPECT_GT((*tuner)->model_timings().featurized_configs, 0);
    return measurer.measured_indices();
  };
  EXPECT_EQ(run(1), run(4));
}

TEST(XgbTunerTest, AsynchronousUseRefitsPerPlanSizeResultsReceived) {
  auto task = DensePackTask(128, 128, 128);
  XgbTunerOptions options = FastOptions(5);
  options.plan_size = 16;
  auto tuner = XgbTuner::Create(*task, options);
  ASSERT_TRUE(tuner.ok());
  absl::flat_hash_set<int64_t> proposed;
  std::vector<Config> in_flight;
  int64_t received = 0;
  for (int round = 0; round < 120; ++round) {
    for (Config& c : (*tuner)->NextBatch(1 + round % 3)) {
      EXPECT_TRUE(proposed.insert(c.index()).second) << "proposed twice: " << c.index();
      in_flight.push_back(std::move(c));
    }
    // Results trickle back one at a time, not in proposal order.
    while (in_flight.size() > 3) {
      const size_t pick = in_flight.size() / 2;
      (*tuner)->Update({{in_flight[pick], SyntheticResult(in_flight[pick])}});
      in_flight.erase(in_flight.begin() + pick);
      ++received;
      EXPECT_EQ((*tuner)->model_timings().fits, received / 16)
          << "after " << received << " results";
    }
  }
  EXPECT_GE(received, 100);
  EXPECT_TRUE((*tuner)->model_status().ok());
}

TEST(XgbTunerTest, ResumedRecordsTrainTheModelAndAreNotProposedAgain) {
  auto task = DensePackTask(128, 128, 128);
  auto tuner = XgbTuner::Create(*task, FastOptions(6));
  ASSERT_TRUE(tuner.ok());
  // An earlier run measured 40 configs: mark them visited, then learn from them.
  std::vector<TrialResult> resumed;
  for (int64_t i = 0; i < 40; ++i) {
    Config c = *task->space().Get(i * 997);
    (*tuner)->MarkVisited(c.index());
    resumed.push_back({c, SyntheticResult(c)});
  }
  (*tuner)->Update(resumed);
  EXPECT_EQ((*tuner)->num_training_rows(), 40);
  EXPECT_EQ((*tuner)->model_timings().fits, 1);  // 40 >= plan_size 32
  EXPECT_GT((*tuner)->plan_remaining(), 0);      // the next batch comes from the model
  for (const Config& c : (*tuner)->NextBatch(32)) EXPECT_NE(c.index() % 997, 0) << c.index();
}

// `n` random configs of `task` measured on the synthetic landscape, or (if
// `misleading`) on its inverse: fast where the real one is slow.
std::vector<Record> HistoryOf(const Task& task, int n, uint64_t seed, bool misleading = false) {
  RandomTuner random(task.space(), seed);
  std::vector<Record> records;
  for (const Config& c : random.NextBatch(n)) {
    Record r;
    r.target = task.target();
    r.task_name = task.name();
    r.workload_name = task.workload().name();
    r.workload_args = task.workload().args();
    r.config = c.ToJson();
    r.result = misleading ? FakeCost(SyntheticGflops(c) / 1000) : SyntheticResult(c);
    records.push_back(r);
  }
  return records;
}

TEST(XgbTunerTest, HistoryOfOtherShapesWarmStartsTheModelAndDecays) {
  auto task = DensePackTask(128, 128, 128);
  auto other = DensePackTask(256, 256, 256), same = DensePackTask(128, 128, 128);
  std::vector<Record> history = HistoryOf(*other, 120, 1);
  // Ignored: the task's own workload (that is resume, not history), another target.
  for (Record r : HistoryOf(*same, 10, 2)) history.push_back(r);
  for (Record r : HistoryOf(*other, 10, 3)) {
    r.target = "llvm -mcpu=other";
    history.push_back(r);
  }
  auto tuner = XgbTuner::Create(*task, FastOptions(7), history);
  ASSERT_TRUE(tuner.ok()) << tuner.status();
  EXPECT_EQ((*tuner)->history_records(), 120);
  EXPECT_EQ((*tuner)->history_workloads(), 1);
  EXPECT_DOUBLE_EQ((*tuner)->history_weight(), 1.0);

  // The very first batch already comes from the history's model, and is good.
  std::vector<Config> first = (*tuner)->NextBatch(8);
  ASSERT_EQ(first.size(), 8u);
  double best_first = 0;
  for (const Config& c : first) best_first = std::max(best_first, SyntheticGflops(c));
  EXPECT_GT(best_first, 0.5 * 80);

  std::vector<TrialResult> results;
  for (const Config& c : first) results.push_back({c, SyntheticResult(c)});
  for (const Config& c : (*tuner)->NextBatch(56)) results.push_back({c, SyntheticResult(c)});
  (*tuner)->Update(results);
  EXPECT_DOUBLE_EQ((*tuner)->history_weight(), 0.5);  // 64 own results: one half-life
  EXPECT_TRUE((*tuner)->model_status().ok());
}

TEST(XgbTunerTest, HistoryShapesAreWeighedByHowWellTheirModelsOrderOwnResults) {
  auto task = DensePackTask(128, 128, 128);
  auto like = DensePackTask(256, 256, 256), unlike = DensePackTask(96, 96, 96);
  std::vector<Record> history = HistoryOf(*unlike, 120, 4, /*misleading=*/true);
  for (Record r : HistoryOf(*like, 120, 5)) history.push_back(r);
  auto tuner = XgbTuner::Create(*task, FastOptions(9), history);
  ASSERT_TRUE(tuner.ok()) << tuner.status();
  ASSERT_EQ((*tuner)->history_workloads(), 2);
  for (const auto& shape : (*tuner)->history_shapes())
    EXPECT_DOUBLE_EQ(shape.weight, 0.5);  // no evidence yet

  // The first plan takes each shape's picks in turn, so the like shape's
  // best guesses are among the first few trials however the other misleads.
  std::vector<TrialResult> results;
  double best_first = 0;
  int slow_first = 0;  // the misleading shape picks the slowest configs
  for (int batch = 0; batch < 2; ++batch) {
    for (const Config& c : (*tuner)->NextBatch(8)) {
      best_first = std::max(best_first, SyntheticGflops(c));
      slow_first += SyntheticGflops(c) < 0.2 * 80;
      results.push_back({c, SyntheticResult(c)});
    }
  }
  EXPECT_GT(best_first, 0.5 * 80);
  EXPECT_GE(slow_first, 4);
  // 16 own results: the rest of the first plan follows the like shape only.
  (*tuner)->Update(results);
  EXPECT_EQ((*tuner)->model_timings().fits, 0);
  std::vector<XgbTuner::HistoryShapeReport> shapes = (*tuner)->history_shapes();
  EXPECT_DOUBLE_EQ(shapes[0].weight, 0.0);
  EXPECT_DOUBLE_EQ(shapes[1].weight, (*tuner)->history_weight());
  std::vector<TrialResult> more;
  int slow_next = 0;
  for (const Config& c : (*tuner)->NextBatch(16)) {
    slow_next += SyntheticGflops(c) < 0.2 * 80;
    more.push_back({c, SyntheticResult(c)});
  }
  std::printf("slow configs proposed: %d of the first 16, %d of the next 16\n", slow_first,
              slow_next);
  EXPECT_LE(slow_next, 2);  // at most the plan's random tail (eps)
  (*tuner)->Update(more);
  results.clear();
  for (const Config& c : (*tuner)->NextBatch(32)) results.push_back({c, SyntheticResult(c)});
  (*tuner)->Update(results);
  ASSERT_EQ((*tuner)->model_timings().fits, 2);  // 64 results, plan_size 32
  ASSERT_TRUE((*tuner)->model_status().ok()) << (*tuner)->model_status();

  // After the fits: the misleading shape orders the own results worse than
  // chance and gets no weight; the like one carries the history's half.
  shapes = (*tuner)->history_shapes();
  ASSERT_EQ(shapes.size(), 2u);
  EXPECT_EQ(shapes[0].workload_args, unlike->workload().args().dump());
  EXPECT_LT(shapes[0].ranking_accuracy, 0.5);
  EXPECT_DOUBLE_EQ(shapes[0].weight, 0.0);
  EXPECT_GT(shapes[1].ranking_accuracy, 0.6);
  EXPECT_DOUBLE_EQ(shapes[1].weight, 0.5);
  EXPECT_DOUBLE_EQ((*tuner)->history_weight(), 0.5);
}

TEST(XgbTunerTest, AnotherTasksRecordsJoinTheHistoryAndAreWeighedAtTheNextFit) {
  auto task = DensePackTask(128, 128, 128);
  auto like = DensePackTask(256, 256, 256), unlike = DensePackTask(96, 96, 96);
  auto tuner = XgbTuner::Create(*task, FastOptions(11));
  ASSERT_TRUE(tuner.ok()) << tuner.status();
  // Given before the first plan: the shape takes part in it, so the very
  // first batch already follows it.
  (*tuner)->LearnFromOtherTask(HistoryOf(*like, 60, 12));
  EXPECT_EQ((*tuner)->history_workloads(), 1);
  EXPECT_EQ((*tuner)->history_records(), 60);
  EXPECT_DOUBLE_EQ((*tuner)->history_shapes()[0].weight, 1.0);
  std::vector<TrialResult> results;
  double best_first = 0;
  for (const Config& c : (*tuner)->NextBatch(8)) {
    best_first = std::max(best_first, SyntheticGflops(c));
    results.push_back({c, SyntheticResult(c)});
  }
  EXPECT_GT(best_first, 0.5 * 80);
  // The same task again, with more records: its shape is retrained in place.
  (*tuner)->LearnFromOtherTask(HistoryOf(*like, 120, 13));
  EXPECT_EQ((*tuner)->history_workloads(), 1);
  EXPECT_EQ((*tuner)->history_records(), 120);
  // After the first plan: a new shape weighs nothing until the next fit,
  // and records of another template or of this very task are not history.
  std::vector<Record> unlike_records = HistoryOf(*unlike, 60, 14, /*misleading=*/true);
  for (Record r : HistoryOf(*task, 10, 15)) unlike_records.push_back(r);
  (*tuner)->LearnFromOtherTask(unlike_records);
  ASSERT_EQ((*tuner)->history_workloads(), 2);
  EXPECT_DOUBLE_EQ((*tuner)->history_shapes()[1].weight, 0.0);
  for (const Config& c : (*tuner)->NextBatch(24)) results.push_back({c, SyntheticResult(c)});
  (*tuner)->Update(results);  // 32 results: the first fit
  ASSERT_EQ((*tuner)->model_timings().fits, 1);
  ASSERT_TRUE((*tuner)->model_status().ok()) << (*tuner)->model_status();
  const std::vector<XgbTuner::HistoryShapeReport> shapes = (*tuner)->history_shapes();
  EXPECT_GT(shapes[0].ranking_accuracy, 0.6);
  EXPECT_GT(shapes[0].weight, 0.0);
  EXPECT_LT(shapes[1].ranking_accuracy, 0.5);
  EXPECT_DOUBLE_EQ(shapes[1].weight, 0.0);
  // Records it cannot learn from change nothing.
  (*tuner)->LearnFromOtherTask({});
  EXPECT_EQ((*tuner)->history_workloads(), 2);
}

// Trials until the synthetic GFLOPS first reach `fraction` of the optimum (80).
int64_t TrialsToReach(XgbTuner& tuner, double fraction, int64_t max_trials) {
  int64_t trials = 0;
  while (trials < max_trials) {
    for (const Config& c : tuner.NextBatch(8)) {
      ++trials;
      tuner.Update({{c, SyntheticResult(c)}});
      if (SyntheticGflops(c) >= fraction * 80) return trials;
    }
  }
  return max_trials;
}

// A model trained, as a prior is, on `n` random trials of each of `shapes`
// on `feature` rows (the shapes' labels normalised each to its best).
std::shared_ptr<const XgbCostModel> PriorOf(const std::vector<int64_t>& shapes, int n,
                                            FeatureKind feature = FeatureKind::kItervar) {
  FeatureMatrix rows;
  std::vector<double> throughputs;
  std::vector<unsigned> groups;
  for (int64_t shape : shapes) {
    auto other = DensePackTask(shape, shape, shape);
    absl::StatusOr<FeatureExtractor> extractor = FeatureExtractor::Create(feature, *other);
    EXPECT_TRUE(extractor.ok());
    rows.num_features = extractor->num_features();
    unsigned used = 0;
    for (const Record& r : HistoryOf(*other, n, static_cast<uint64_t>(shape))) {
      absl::StatusOr<std::vector<float>> row =
          extractor->Extract(*other->space().FromJson(r.config));
      if (!row.ok()) continue;
      rows.AddRow(*row);
      throughputs.push_back(1.0 / r.result.MeanCost());
      ++used;
    }
    groups.push_back(used);
  }
  auto model = XgbCostModel::Create({});
  EXPECT_TRUE((*model)->Fit(rows, throughputs, groups).ok());
  return std::move(*model);
}

TEST(XgbTunerTest, APriorPicksWhatFollowsTheFirstConfigsAndIsWeighedLikeHistory) {
  auto task = DensePackTask(128, 128, 128);
  auto tuner = XgbTuner::Create(*task, FastOptions(3), {}, PriorOf({256, 192, 96}, 100));
  ASSERT_TRUE(tuner.ok()) << tuner.status();
  ASSERT_EQ((*tuner)->history_workloads(), 1);
  EXPECT_EQ((*tuner)->history_shapes()[0].workload_args, "(prior)");
  EXPECT_DOUBLE_EQ((*tuner)->history_weight(), 1.0);
  // The first configs come first; the prior's picks follow at once (no
  // fit yet), and they are good.
  const Config first = *task->space().Get(17);
  (*tuner)->SetFirstConfigs({first});
  std::vector<Config> batch = (*tuner)->NextBatch(8);
  ASSERT_EQ(batch.size(), 8u);
  EXPECT_EQ(batch[0].index(), first.index());
  double best = 0, mean = 0;
  for (size_t i = 1; i < batch.size(); ++i) {
    best = std::max(best, SyntheticGflops(batch[i]));
    mean += SyntheticGflops(batch[i]) / 7;
  }
  EXPECT_GT(best, 0.8 * 80);
  EXPECT_GT(mean, 0.5 * 80);
  EXPECT_EQ((*tuner)->model_timings().fits, 0);
  EXPECT_EQ((*tuner)->model_timings().selections, 1);

  // Refined online: after a plan of own results it is weighed by how well
  // it orders them, and decays.
  std::vector<TrialResult> results;
  for (const Config& c : batch) results.push_back({c, SyntheticResult(c)});
  for (const Config& c : (*tuner)->NextBatch(24)) results.push_back({c, SyntheticResult(c)});
  (*tuner)->Update(results);
  EXPECT_EQ((*tuner)->model_timings().fits, 1);
  EXPECT_GT((*tuner)->history_shapes()[0].ranking_accuracy, 0.6);
  EXPECT_LT((*tuner)->history_weight(), 1.0);
  EXPECT_TRUE((*tuner)->model_status().ok()) << (*tuner)->model_status();
}

TEST(XgbTunerTest, APriorOnOtherFeatureRowsIsNotUsed) {
  auto task = DensePackTask(128, 128, 128);
  auto tuner = XgbTuner::Create(*task, FastOptions(3), {}, PriorOf({256}, 60, FeatureKind::kCurve));
  ASSERT_TRUE(tuner.ok()) << tuner.status();
  EXPECT_EQ((*tuner)->history_workloads(), 0);
  EXPECT_EQ((*tuner)->NextBatch(8).size(), 8u);  // random, as cold
}

TEST(XgbTunerTest, APriorReachesGoodConfigsInFewerTrialsThanCold) {
  auto task = DensePackTask(128, 128, 128);
  std::shared_ptr<const XgbCostModel> prior = PriorOf({256, 192, 96}, 100);
  int64_t warm_total = 0, cold_total = 0;
  // Two seeds: a prior of similar shapes is far ahead (44 against 664 trials over 4).
  for (uint64_t seed = 1; seed <= 2; ++seed) {
    auto warm = XgbTuner::Create(*task, FastOptions(seed), {}, prior);
    auto cold = XgbTuner::Create(*task, FastOptions(seed));
    ASSERT_TRUE(warm.ok() && cold.ok());
    warm_total += TrialsToReach(**warm, 0.9, 300);
    cold_total += TrialsToReach(**cold, 0.9, 300);
  }
  std::printf("trials to 90%% of the optimum over 2 seeds: prior %lld, cold %lld\n",
              static_cast<long long>(warm_total), static_cast<long long>(cold_total));
  EXPECT_LT(warm_total, cold_total);
}

TEST(XgbTunerTest, HistoryReachesGoodConfigsInFewerTrialsThanCold) {
  auto task = DensePackTask(128, 128, 128);
  std::vector<Record> history;
  for (int64_t shape : {256, 192, 96}) {
    auto other = DensePackTask(shape, shape, shape);
    for (Record r : HistoryOf(*other, 100, shape)) history.push_back(r);
  }
  int64_t warm_total = 0, cold_total = 0;
  // Four seeds: with two, one unlucky cold start or warm plan decides it.
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    auto warm = XgbTuner::Create(*task, FastOptions(seed), history);
    auto cold = XgbTuner::Create(*task, FastOptions(seed));
    ASSERT_TRUE(warm.ok() && cold.ok());
    EXPECT_EQ((*warm)->history_workloads(), 3);
    warm_total += TrialsToReach(**warm, 0.9, 300);
    cold_total += TrialsToReach(**cold, 0.9, 300);
  }
  std::printf("trials to 90%% of the optimum over 4 seeds: warm %lld, cold %lld\n",
              static_cast<long long>(warm_total), static_cast<long long>(cold_total));
  EXPECT_LT(warm_total, cold_total);
}

TEST(XgbTunerTest, CurveKnobAndRankVariantsRun) {
  auto task = DensePackTask(128, 128, 128);
  for (FeatureKind feature : {FeatureKind::kKnob, FeatureKind::kCurve}) {
    XgbTunerOptions options = FastOptions(8);
    options.feature = feature;
    options.diversity_filter_ratio = 2;
    auto tuner = XgbTuner::Create(*task, options);
    ASSERT_TRUE(tuner.ok());
    FakeMeasurer measurer(SyntheticResult);
    ASSERT_TRUE((*tuner)->Tune(measurer, Quiet(70, 10)).ok());
    EXPECT_TRUE((*tuner)->model_status().ok()) << (*tuner)->model_status();
    EXPECT_EQ((*tuner)->model_timings().fits, 2);
  }
  XgbTunerOptions rank = FastOptions(9);
  rank.loss = "rank";
  auto tuner = XgbTuner::Create(*task, rank);
  FakeMeasurer measurer(SyntheticResult);
  ASSERT_TRUE((*tuner)->Tune(measurer, Quiet(70, 10)).ok());
  EXPECT_TRUE((*tuner)->model_status().ok()) << (*tuner)->model_status();
}

TEST(XgbTunerTest, BadOptionsAreInvalidArgument) {
  auto task = DensePackTask(64, 64, 64);
  XgbTunerOptions options;
  options.plan_size = 0;
  EXPECT_EQ(XgbTuner::Create(*task, options).status().code(), absl::StatusCode::kInvalidArgument);
  options = {};
  options.eps = 1.5;
  EXPECT_EQ(XgbTuner::Create(*task, options).status().code(), absl::StatusCode::kInvalidArgument);
  options = {};
  options.loss = "hinge";
  EXPECT_EQ(XgbTuner::Create(*task, options).status().code(), absl::StatusCode::kInvalidArgument);
  options = {};
  options.diversity_filter_ratio = 0.5;
  EXPECT_EQ(XgbTuner::Create(*task, options).status().code(), absl::StatusCode::kInvalidArgument);
  options = {};
  options.sa.parallel_size = 0;
  EXPECT_EQ(XgbTuner::Create(*task, options).status().code(), absl::StatusCode::kInvalidArgument);
  options = {};
  options.feature_threads = -1;
  EXPECT_EQ(XgbTuner::Create(*task, options).status().code(), absl::StatusCode::kInvalidArgument);
  options = {};
  options.sa_seeds = -1;
  EXPECT_EQ(XgbTuner::Create(*task, options).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tunefleet
