#include "tuner_core/selective/similarity.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tuner_core/selective/selective_plan.h"

namespace tunefleet {
namespace {

using ::testing::HasSubstr;

ConfigSpace Space(std::vector<int64_t> tile, std::vector<int64_t> unroll) {
  ConfigSpace space;
  EXPECT_TRUE(space.DefineKnob("tile", tile).ok());
  EXPECT_TRUE(space.DefineKnob("unroll", unroll).ok());
  return space;
}

TEST(SimilarityTest, JaccardOfConfigSets) {
  // A = {1,2,4} x {0,1} (6 configs), B = {2,4,8} x {0,1} (6): 4 shared, 8 in all.
  ConfigSpace a = Space({1, 2, 4}, {0, 1});
  ConfigSpace b = Space({2, 4, 8}, {0, 1});
  EXPECT_DOUBLE_EQ(SpaceSimilarity(a, b), 4.0 / 8.0);
  EXPECT_DOUBLE_EQ(SpaceSimilarity(a, a), 1.0);
  // The RFC's rate: (2/4) * (2/2).
  EXPECT_DOUBLE_EQ(KnobwiseSimilarity(a, b), 0.5);
}

TEST(SimilarityTest, DisjointOrDifferentKnobsShareNothing) {
  EXPECT_EQ(SpaceSimilarity(Space({1, 2}, {0}), Space({3, 4}, {0})), 0);
  ConfigSpace other;
  ASSERT_TRUE(other.DefineKnob("tile", {1, 2}).ok());
  EXPECT_EQ(SpaceSimilarity(Space({1, 2}, {0}), other), 0);
}

TEST(SimilarityTest, SplitKnobsCompareTheirFactors) {
  ConfigSpace a, b;
  SplitOptions options;
  ASSERT_TRUE(a.DefineSplit("tile_x", 8, options).ok());   // [-1,1] [-1,2] [-1,4] [-1,8]
  ASSERT_TRUE(b.DefineSplit("tile_x", 12, options).ok());  // 1 2 3 4 6 12
  // Shared inner factors 1, 2, 4: 3 of 4 + 6 - 3 = 7.
  EXPECT_DOUBLE_EQ(SpaceSimilarity(a, b), 3.0 / 7.0);
}

TEST(SimilarityTest, MapConfigCarriesValuesOrNamesTheKnob) {
  ConfigSpace a = Space({1, 2, 4}, {0, 1});
  ConfigSpace b = Space({2, 4, 8}, {0, 1});
  absl::StatusOr<Config> four = a.Get(2 + 3 * 1);  // tile 4, unroll 1
  ASSERT_TRUE(four.ok());
  absl::StatusOr<Config> mapped = MapConfig(*four, b);
  ASSERT_TRUE(mapped.ok()) << mapped.status();
  EXPECT_EQ(*mapped->GetInt("tile"), 4);
  EXPECT_EQ(*mapped->GetInt("unroll"), 1);
  absl::StatusOr<Config> one = a.Get(0);
  ASSERT_TRUE(one.ok());
  absl::StatusOr<Config> refused = MapConfig(*one, b);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("tile"));
}

TEST(SimilarityTest, MapConfigNearestTakesTheClosestCandidate) {
  ConfigSpace a = Space({1, 2, 4}, {0, 1});
  ConfigSpace b = Space({2, 8, 16}, {0, 1});
  // tile 4 is not in b: 2 and 8 are equally far by log ratio; the first wins.
  Config mapped = MapConfigNearest(*a.Get(2 + 3 * 1), b);
  EXPECT_EQ(*mapped.GetInt("tile"), 2);
  EXPECT_EQ(*mapped.GetInt("unroll"), 1);
  ConfigSpace c = Space({3, 12, 48}, {0, 1});
  EXPECT_EQ(*MapConfigNearest(*a.Get(2), c).GetInt("tile"), 3);  // 4 -> 3, not 12
  // Where MapConfig works, the nearest config is the same one.
  ConfigSpace d = Space({2, 4, 8}, {0, 1});
  Config four = *a.Get(2 + 3 * 1);
  EXPECT_EQ(MapConfigNearest(four, d).index(), MapConfig(four, d)->index());
}

TEST(SimilarityTest, MapConfigJsonNearestReadsAConfigsJson) {
  ConfigSpace a = Space({1, 2, 4}, {0, 1});
  ConfigSpace b = Space({2, 8, 16}, {0, 1});
  const Config from = *a.Get(2 + 3 * 1);
  EXPECT_EQ(MapConfigJsonNearest(from.ToJson(), b).index(), MapConfigNearest(from, b).index());
  // Without entities (or with malformed ones) every knob takes its first choice.
  EXPECT_EQ(MapConfigJsonNearest(nlohmann::json::object(), b).index(), 0);
  EXPECT_EQ(MapConfigJsonNearest(nlohmann::json{{"entity", {1, 2}}}, b).index(), 0);
  EXPECT_EQ(MapConfigJsonNearest(nlohmann::json(), b).index(), 0);
}

TEST(SelectivePlanTest, CliquesAndRepresentatives) {
  ConfigSpace a = Space({1, 2, 4}, {0, 1});
  ConfigSpace b = Space({1, 2, 4, 8}, {0, 1});
  ConfigSpace c = Space({1, 2}, {0, 1});
  ConfigSpace d = Space({16, 32}, {0, 1});  // like no other
  SelectivePlan plan = PlanSelectiveTuning({&a, &b, &c, &d}, {});
  ASSERT_EQ(plan.clusters.size(), 1u);
  EXPECT_EQ(plan.clusters[0].members, (std::vector<int>{0, 1, 2}));
  // a: 3/4 + 2/3; b: 3/4 + 2/4; c: 2/3 + 2/4 -> a represents.
  EXPECT_EQ(plan.clusters[0].representative, 0);
  EXPECT_EQ(plan.depends_on, (std::vector<int>{0, 0, 0, 3}));
  EXPECT_TRUE(plan.IsRepresentative(3));
  EXPECT_DOUBLE_EQ(plan.similarity[1][0], 0.75);
}

TEST(SelectivePlanTest, ThresholdCutsEdges) {
  ConfigSpace a = Space({1, 2, 4}, {0, 1});
  ConfigSpace b = Space({2, 4, 8}, {0, 1});
  EXPECT_EQ(PlanSelectiveTuning({&a, &b}, {.threshold = 0.6}).clusters.size(), 0u);
  EXPECT_EQ(PlanSelectiveTuning({&a, &b}, {.threshold = 0.5}).clusters.size(), 1u);
}

TEST(TopKTest, ParsesAndCounts) {
  absl::StatusOr<TopK> top3 = ParseTopK("top3");
  ASSERT_TRUE(top3.ok());
  EXPECT_EQ(top3->Of(100), 3);
  EXPECT_EQ(top3->Of(2), 2);
  absl::StatusOr<TopK> five = ParseTopK("5%");
  ASSERT_TRUE(five.ok());
  EXPECT_EQ(five->Of(200), 10);
  EXPECT_EQ(five->Of(3), 1);
  EXPECT_EQ(five->Of(0), 0);
  EXPECT_FALSE(ParseTopK("top0").ok());
  EXPECT_FALSE(ParseTopK("best3").ok());
  EXPECT_FALSE(ParseTopK("150%").ok());
}

}  // namespace
}  // namespace tunefleet
