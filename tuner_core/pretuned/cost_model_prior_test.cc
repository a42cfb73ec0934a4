#include "tuner_core/pretuned/cost_model_prior.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tuner_core/features/feature_extractor.h"
#include "tuner_core/records/record.h"
#include "tuner_core/templates/task.h"
#include "tuner_core/templates/task_test_util.h"

namespace tunefleet {
namespace {

// A throughput landscape shaped like the real one (8-lane, 2-vector, 6-row
// tiles win), scaled per shape: labels are normalised per workload, so the
// scale must not matter.
double SyntheticGflops(const Config& c, double scale) {
  auto get = [&](const char* knob) { return static_cast<double>(*c.GetInt(knob)); };
  double g = scale;
  g *= get("vec") == 8 ? 1.0 : get("vec") == 4 ? 0.45 : 0.05;
  g *= 1.0 / (1.0 + 0.5 * std::abs(get("nr_vecs") - 2));
  g *= 1.0 / (1.0 + 0.15 * std::abs(get("mr") - 6));
  g *= get("unroll_k") >= 2 ? 1.0 : 0.9;
  return g;
}

// `n` random configs of `task`, measured on the landscape (every 10th failed).
std::vector<Record> RecordsOf(const Task& task, int n, uint64_t seed, double scale) {
  std::mt19937_64 engine(seed);
  std::uniform_int_distribution<int64_t> pick(0, task.space().size() - 1);
  std::vector<Record> records;
  for (int i = 0; i < n; ++i) {
    const Config c = *task.space().Get(pick(engine));
    Record r;
    r.target = task.target();
    r.task_name = task.name();
    r.workload_name = task.workload().name();
    r.workload_args = task.workload().args();
    r.config = c.ToJson();
    if (i % 10 == 9) {
      r.result.costs = {1e9};
      r.result.error_no = MeasureErrorNo::kRuntimeDevice;
    } else {
      r.result.costs = {1.0 / SyntheticGflops(c, scale)};
    }
    records.push_back(r);
  }
  return records;
}

// Predictions of `model` and the landscape's truth for 200 random configs of `task`.
double RankCorrelationOn(const XgbCostModel& model, const Task& task) {
  absl::StatusOr<FeatureExtractor> extractor =
      FeatureExtractor::Create(FeatureKind::kItervar, task);
  EXPECT_TRUE(extractor.ok());
  FeatureMatrix rows;
  rows.num_features = extractor->num_features();
  std::vector<double> truth;
  std::mt19937_64 engine(99);
  std::uniform_int_distribution<int64_t> pick(0, task.space().size() - 1);
  while (truth.size() < 200) {
    const Config c = *task.space().Get(pick(engine));
    absl::StatusOr<std::vector<float>> row = extractor->Extract(c);
    if (!row.ok()) continue;
    rows.AddRow(*row);
    truth.push_back(SyntheticGflops(c, 1));
  }
  absl::StatusOr<std::vector<float>> predicted = model.Predict(rows);
  EXPECT_TRUE(predicted.ok()) << predicted.status();
  return RankCorrelation(std::vector<double>(predicted->begin(), predicted->end()), truth);
}

std::vector<Record> ThreeShapes() {
  std::vector<Record> records;
  uint64_t seed = 1;
  for (auto [m, n, k, scale] : {std::tuple{64, 256, 128, 30.0}, std::tuple{256, 256, 256, 70.0},
                                std::tuple{128, 512, 64, 50.0}}) {
    for (Record& r : RecordsOf(*DensePackTask(m, n, k), 150, seed++, scale)) records.push_back(r);
  }
  return records;
}

TEST(CostModelPriorTest, APriorTrainedOnSomeShapesRanksAnUnseenShape) {
  CostModelPriors::TrainReport report;
  absl::StatusOr<CostModelPriors> priors =
      CostModelPriors::Train(ThreeShapes(), FeatureKind::kItervar, PriorModelOptions(), &report);
  ASSERT_TRUE(priors.ok()) << priors.status();
  EXPECT_EQ(report.records_used, 450);
  EXPECT_EQ(report.records_skipped, 0);
  ASSERT_EQ(priors->priors().size(), 1u);
  const CostModelPriors::Prior& prior = priors->priors()[0];
  EXPECT_EQ(prior.template_name, "dense_pack.x86");
  EXPECT_EQ(prior.records, 450);
  EXPECT_EQ(prior.workloads, 3);
  ASSERT_NE(priors->For("dense_pack.x86", FeatureKind::kItervar), nullptr);
  EXPECT_EQ(priors->For("dense_pack.x86", FeatureKind::kKnob), nullptr);
  EXPECT_EQ(priors->For("conv2d_nchwc.x86", FeatureKind::kItervar), nullptr);
  // A shape none of the records has.
  EXPECT_GT(RankCorrelationOn(*prior.model, *DensePackTask(512, 128, 384)), 0.6);
}

TEST(CostModelPriorTest, SerializedPriorsParseBackToTheSameModels) {
  absl::StatusOr<CostModelPriors> priors =
      CostModelPriors::Train(ThreeShapes(), FeatureKind::kItervar, PriorModelOptions());
  ASSERT_TRUE(priors.ok()) << priors.status();
  absl::StatusOr<std::string> text = priors->Serialize();
  ASSERT_TRUE(text.ok()) << text.status();
  absl::StatusOr<CostModelPriors> parsed = CostModelPriors::Parse(*text, "test");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(parsed->priors().size(), 1u);
  EXPECT_EQ(parsed->priors()[0].records, 450);
  EXPECT_EQ(parsed->priors()[0].workloads, 3);
  const std::unique_ptr<Task> unseen = DensePackTask(512, 128, 384);
  EXPECT_DOUBLE_EQ(RankCorrelationOn(*priors->priors()[0].model, *unseen),
                   RankCorrelationOn(*parsed->priors()[0].model, *unseen));
}

TEST(CostModelPriorTest, EvaluationOnUnseenWorkloadsBeatsRandomPicks) {
  absl::StatusOr<CostModelPriors> priors =
      CostModelPriors::Train(ThreeShapes(), FeatureKind::kItervar, PriorModelOptions());
  ASSERT_TRUE(priors.ok()) << priors.status();
  std::vector<Record> unseen = RecordsOf(*DensePackTask(512, 128, 384), 120, 11, 40);
  for (const Record& r : RecordsOf(*DensePackTask(96, 320, 160), 120, 12, 20)) unseen.push_back(r);
  absl::StatusOr<PriorEvaluation> e = EvaluatePriors(*priors, unseen, FeatureKind::kItervar);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->workloads, 2);
  EXPECT_EQ(e->trials, 216);  // the failed ones have no rank
  EXPECT_GT(e->mean_spearman, 0.6);
  EXPECT_GT(e->mean_top10_ratio, e->mean_random10_ratio);
  EXPECT_GT(e->mean_top10_ratio, 0.95);

  // The random baseline is the exact expectation: with throughputs 1..11,
  // 10 at random miss the fastest once in 11 (then their fastest is 10).
  std::vector<Record> eleven = RecordsOf(*DensePackTask(512, 128, 384), 11, 13, 1);
  for (size_t i = 0; i < eleven.size(); ++i) {
    eleven[i].result.error_no = MeasureErrorNo::kNoError;
    eleven[i].result.costs = {1.0 / static_cast<double>(i + 1)};
  }
  e = EvaluatePriors(*priors, eleven, FeatureKind::kItervar);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_NEAR(e->mean_random10_ratio, (10.0 + 10.0 / 11) / 11, 1e-9);
  // Too few trials of a workload, or no prior for its template: nothing to say.
  eleven.resize(9);
  EXPECT_EQ(EvaluatePriors(*priors, eleven, FeatureKind::kItervar).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(EvaluatePriors(CostModelPriors(), unseen, FeatureKind::kItervar).ok());
}

TEST(CostModelPriorTest, WhatCannotBeLearnedFromIsSkippedOrAnError) {
  std::vector<Record> records = ThreeShapes();
  Record unknown = records[0];
  unknown.task_name = "no_such_template.x86";
  records.push_back(unknown);
  Record outside = records[0];
  outside.config["entity"] = nlohmann::json::array({{"vec", "ot", 3}});
  records.push_back(outside);
  CostModelPriors::TrainReport report;
  ASSERT_TRUE(
      CostModelPriors::Train(records, FeatureKind::kItervar, PriorModelOptions(), &report).ok());
  EXPECT_EQ(report.records_used, 450);
  EXPECT_EQ(report.records_skipped, 2);
  ASSERT_EQ(report.warnings.size(), 1u);
  EXPECT_NE(report.warnings[0].find("no_such_template.x86"), std::string::npos);

  // Nothing that ran: no prior can say what is fast.
  std::vector<Record> failed = RecordsOf(*DensePackTask(64, 64, 64), 5, 7, 1);
  for (Record& r : failed) r.result.error_no = MeasureErrorNo::kRuntimeDevice;
  EXPECT_EQ(
      CostModelPriors::Train(failed, FeatureKind::kItervar, PriorModelOptions()).status().code(),
      absl::StatusCode::kInvalidArgument);
}

TEST(CostModelPriorTest, MalformedFilesAreErrorsNamingTheLine) {
  absl::StatusOr<CostModelPriors> priors =
      CostModelPriors::Train(ThreeShapes(), FeatureKind::kItervar, PriorModelOptions());
  ASSERT_TRUE(priors.ok()) << priors.status();
  const std::string good = *priors->Serialize();
  auto error_of = [](const std::string& text) {
    return std::string(CostModelPriors::Parse(text, "f").status().message());
  };
  EXPECT_NE(error_of("\n{oops\n").find("f line 2: not a JSON object"), std::string::npos);
  EXPECT_NE(error_of(R"({"template": "t", "feature": "itervar"})").find("no \"model\""),
            std::string::npos);
  EXPECT_NE(error_of(R"({"template": "t", "feature": "bogus", "model": {}})").find("line 1"),
            std::string::npos);
  EXPECT_NE(
      error_of(R"({"template": "t", "feature": "itervar", "model": {"x": 1}})").find("line 1"),
      std::string::npos);
  EXPECT_NE(error_of(good + good).find("line 2: a second prior of dense_pack.x86"),
            std::string::npos);
  nlohmann::json wrong = nlohmann::json::parse(good.substr(0, good.find('\n')));
  wrong["num_features"] = 3;
  EXPECT_NE(error_of(wrong.dump()).find("\"num_features\" says 3"), std::string::npos);
  EXPECT_TRUE(CostModelPriors::Parse("", "empty")->priors().empty());
}

TEST(CostModelPriorTest, ShippedPriorsLoadForEveryFamilyTheyShip) {
  for (const std::string& family : CostModelPriors::ShippedFamilies()) {
    absl::StatusOr<std::shared_ptr<const CostModelPriors>> shipped =
        CostModelPriors::Shipped(family);
    ASSERT_TRUE(shipped.ok()) << family << ": " << shipped.status();
    EXPECT_FALSE((*shipped)->priors().empty()) << family;
  }
  absl::StatusOr<std::shared_ptr<const CostModelPriors>> none =
      CostModelPriors::Shipped("no-such-family");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE((*none)->priors().empty());
}

}  // namespace
}  // namespace tunefleet
