#include "tuner_core/space/config_space.h"

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace tunefleet {
namespace {

using ::testing::HasSubstr;

// Sizes of every choice of a split knob, via Get over a one-knob space.
std::vector<std::vector<int64_t>> AllSplits(const ConfigSpace& space, const std::string& name) {
  std::vector<std::vector<int64_t>> out;
  for (int64_t i = 0; i < space.size(); ++i) {
    absl::StatusOr<Config> config = space.Get(i);
    EXPECT_TRUE(config.ok()) << config.status();
    absl::StatusOr<std::vector<int64_t>> sizes = config->GetSplit(name);
    EXPECT_TRUE(sizes.ok()) << sizes.status();
    out.push_back(*sizes);
  }
  return out;
}

TEST(ConfigSpaceTest, EmptySpaceHasOneConfig) {
  ConfigSpace space;
  EXPECT_EQ(space.size(), 1);
  EXPECT_EQ(space.num_knobs(), 0);
  absl::StatusOr<Config> config = space.Get(0);
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(config->ToJson()["entity"], nlohmann::json::array());
}

TEST(ConfigSpaceTest, SplitFactorsOf32IntoTwoHasSixChoices) {
  ConfigSpace space;
  ASSERT_TRUE(space.DefineSplit("tile", 32).ok());
  EXPECT_EQ(space.size(), 6);
  // Inner sizes are the divisors 1..32; the outer size is the real quotient.
  std::vector<std::vector<int64_t>> expected = {{32, 1}, {16, 2}, {8, 4}, {4, 8}, {2, 16}, {1, 32}};
  EXPECT_EQ(AllSplits(space, "tile"), expected);
}

TEST(ConfigSpaceTest, TwoSplitKnobsMultiply) {
  ConfigSpace space;
  ASSERT_TRUE(space.DefineSplit("tile_x", 32).ok());
  ASSERT_TRUE(space.DefineSplit("tile_y", 32).ok());
  EXPECT_EQ(space.size(), 36);
  EXPECT_EQ(space.KnobDims(), (std::vector<int64_t>{6, 6}));
}

TEST(ConfigSpaceTest, TwoOtherKnobsOfFiveMakeTwentyFive) {
  ConfigSpace space;
  ASSERT_TRUE(space.DefineKnob("a", std::vector<int64_t>{1, 2, 3, 4, 5}).ok());
  // Braced lists pick the right overload.
  ASSERT_TRUE(space.DefineKnob("b", {"p", "q", "r", "s", "t"}).ok());
  EXPECT_EQ(space.size(), 25);
  EXPECT_EQ(space.num_knobs(), 2);
  EXPECT_EQ(space.knob_name(1), "b");
  EXPECT_EQ(space.knob_kind(1), KnobKind::kOther);
  EXPECT_EQ(space.knob_size(0), 5);
}

TEST(ConfigSpaceTest, AddedKnobReadsAsItsFirstChoiceWhenAConfigOmitsIt) {
  ConfigSpace before;
  ASSERT_TRUE(before.DefineKnob("a", {1, 2, 3}).ok());
  ConfigSpace after = before;
  ASSERT_TRUE(after.DefineAddedKnob("distance", {0, 8, 16}).ok());
  EXPECT_EQ(after.size(), 9);
  // A record of the space before the knob: same index, the knob at 0.
  const nlohmann::json record = {{"index", 2}, {"entity", {{"a", "ot", 3}}}};
  auto old = after.FromJson(record);
  ASSERT_TRUE(old.ok()) << old.status();
  EXPECT_EQ(old->index(), 2);
  EXPECT_EQ(*old->GetInt("distance"), 0);
  EXPECT_EQ(*old->GetInt("a"), 3);
  // Named, it is read like any knob; an ordinary knob may not be omitted.
  auto named = after.FromJson({{"entity", {{"a", "ot", 3}, {"distance", "ot", 16}}}});
  ASSERT_TRUE(named.ok()) << named.status();
  EXPECT_EQ(named->index(), 2 + 2 * 3);
  auto missing = after.FromJson({{"entity", {{"distance", "ot", 8}}}});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("knob 'a' is missing"), std::string::npos)
      << missing.status();
  // A value outside its candidates is refused as for any knob.
  EXPECT_FALSE(after.FromJson({{"entity", {{"a", "ot", 3}, {"distance", "ot", 4}}}}).ok());
  // Added knobs come last: an ordinary one after them would move old indices.
  auto late = after.DefineKnob("b", {1, 2});
  ASSERT_FALSE(late.ok());
  EXPECT_NE(late.message().find("added knobs come last"), std::string::npos) << late;
  EXPECT_TRUE(after.DefineAddedKnob("other", {0, 1}).ok());
}

// Knobs x and y of 300 choices each, "kernel" a|b and "mode" c|d, x inert
// while kernel=a: one more rule over y passes the bound on equivalent configs.
ConfigSpace BigSpaceWithXInertUnderKernelA() {
  ConfigSpace big;
  std::vector<int64_t> choices(300);
  for (int i = 0; i < 300; ++i) choices[i] = i;
  EXPECT_TRUE(big.DefineKnob("x", choices).ok());
  EXPECT_TRUE(big.DefineKnob("y", choices).ok());
  EXPECT_TRUE(big.DefineKnob("kernel", {"a", "b"}).ok());
  EXPECT_TRUE(big.DefineKnob("mode", {"c", "d"}).ok());
  EXPECT_TRUE(big.DeclareInert("kernel", "a", {"x"}).ok());
  return big;
}

TEST(ConfigSpaceTest, InertKnobsMakeEquivalentConfigs) {
  ConfigSpace space;
  ASSERT_TRUE(space.DefineKnob("block", {16, 32, 64}).ok());       // stride 1
  ASSERT_TRUE(space.DefineKnob("kernel", {"tiled", "dot"}).ok());  // stride 3
  ASSERT_TRUE(space.DefineKnob("unroll", {1, 2}).ok());            // stride 6
  ASSERT_TRUE(space.DeclareInert("kernel", "dot", {"block"}).ok());
  // "tiled" uses every knob: each config is its own kernel.
  EXPECT_THAT(space.EquivalentIndices(7), testing::ElementsAre(7));  // block 32, tiled, unroll 2
  // "dot" ignores block: the three blocks are one kernel, the index asked first.
  EXPECT_THAT(space.EquivalentIndices(10), testing::ElementsAre(10, 9, 11));
  EXPECT_THAT(space.EquivalentIndices(3), testing::ElementsAre(3, 4, 5));
  // Unknown knobs or values are named.
  auto bad = space.DeclareInert("kernel", "gemv", {"block"});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("'gemv' is not a string candidate of knob 'kernel'"),
            std::string::npos)
      << bad;
  bad = space.DeclareInert("kernel", "dot", {"tile"});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("'tile' is not a knob"), std::string::npos) << bad;
  EXPECT_FALSE(space.DeclareInert("kernel", "dot", {"kernel"}).ok());
  EXPECT_FALSE(space.DeclareInert("unroll", "2", {"block"}).ok());  // an int knob
}

TEST(ConfigSpaceTest, InertRulesCombineButMayNotChain) {
  ConfigSpace space;
  ASSERT_TRUE(space.DefineKnob("block", {16, 32}).ok());           // stride 1
  ASSERT_TRUE(space.DefineKnob("kernel", {"tiled", "dot"}).ok());  // stride 2
  ASSERT_TRUE(space.DefineKnob("pack", {"yes", "no"}).ok());       // stride 4
  ASSERT_TRUE(space.DefineKnob("unroll", {1, 2}).ok());            // stride 8
  ASSERT_TRUE(space.DeclareInert("kernel", "dot", {"block"}).ok());
  ASSERT_TRUE(space.DeclareInert("pack", "no", {"unroll"}).ok());
  // Both rules hold for (block 32, dot, no, unroll 2) = 1 + 2 + 4 + 8 = 15:
  // four configs; one holds for (block 32, dot, yes, unroll 2) = 11: two.
  EXPECT_THAT(space.EquivalentIndices(15), testing::UnorderedElementsAre(15, 14, 7, 6));
  EXPECT_EQ(space.CanonicalIndex(15), 6);
  EXPECT_THAT(space.EquivalentIndices(11), testing::UnorderedElementsAre(11, 10));
  // A rule's condition may not be inert under another, nor the reverse.
  auto chained = space.DeclareInert("kernel", "tiled", {"pack"});
  ASSERT_FALSE(chained.ok());
  EXPECT_NE(chained.message().find("another rule's condition"), std::string::npos) << chained;
  ConfigSpace other = space;
  ASSERT_TRUE(other.DefineKnob("mode", {"a", "b"}).ok());
  chained = other.DeclareInert("mode", "a", {"kernel"});
  ASSERT_FALSE(chained.ok());
  // Too many equivalent configs over all rules.
  ConfigSpace big = BigSpaceWithXInertUnderKernelA();
  auto cap = big.DeclareInert("mode", "c", {"y"});  // 300 x 300 > 2^16 together
  ASSERT_FALSE(cap.ok());
  EXPECT_NE(cap.message().find("configs one kernel"), std::string::npos) << cap;
}

TEST(ConfigSpaceTest, SameKernelChoicesMakeEquivalentConfigsWithTheInertRules) {
  ConfigSpace space;
  ASSERT_TRUE(space.DefineKnob("width", {4, 5, 6, 7}).ok());       // stride 1
  ASSERT_TRUE(space.DefineKnob("kernel", {"tiled", "dot"}).ok());  // stride 4
  ASSERT_TRUE(space.DefineKnob("unroll", {1, 2}).ok());            // stride 8
  // Widths 5 and 6 cut a 14-column row alike (5 + 5 + 4), 7 and 4 do not.
  ASSERT_TRUE(space.DeclareSameKernelChoices("width", {4, 5, 5, 7}).ok());
  EXPECT_THAT(space.EquivalentIndices(1), testing::ElementsAre(1, 2));    // width 5, tiled, 1
  EXPECT_THAT(space.EquivalentIndices(10), testing::ElementsAre(10, 9));  // width 6, tiled, 2
  EXPECT_THAT(space.EquivalentIndices(3), testing::ElementsAre(3));       // width 7
  EXPECT_EQ(space.CanonicalIndex(10), 9);
  // With an inert rule that holds, the inert knob varies too.
  ASSERT_TRUE(space.DeclareInert("kernel", "dot", {"unroll"}).ok());
  EXPECT_THAT(space.EquivalentIndices(5), testing::UnorderedElementsAre(5, 6, 13, 14));
  EXPECT_EQ(space.EquivalentIndices(5).front(), 5);
  EXPECT_THAT(space.EquivalentIndices(1), testing::ElementsAre(1, 2));
  // A labelled knob inert under a rule that holds takes every choice.
  ConfigSpace both;
  ASSERT_TRUE(both.DefineKnob("width", {4, 5, 6, 7}).ok());       // stride 1
  ASSERT_TRUE(both.DefineKnob("kernel", {"tiled", "dot"}).ok());  // stride 4
  ASSERT_TRUE(both.DeclareSameKernelChoices("width", {4, 5, 5, 7}).ok());
  ASSERT_TRUE(both.DeclareInert("kernel", "dot", {"width"}).ok());
  EXPECT_THAT(both.EquivalentIndices(6), testing::ElementsAre(6, 4, 5, 7));
  EXPECT_THAT(both.EquivalentIndices(2), testing::ElementsAre(2, 1));
  // Errors name what was wrong.
  auto bad = space.DeclareSameKernelChoices("height", {1});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("no knob 'height'"), std::string::npos) << bad;
  bad = space.DeclareSameKernelChoices("unroll", {1, 2, 3});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("3 labels for the 2 choices of 'unroll'"), std::string::npos) << bad;
  bad = space.DeclareSameKernelChoices("width", {1, 1, 1, 1});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("declared already"), std::string::npos) << bad;
  bad = space.DeclareSameKernelChoices("kernel", {1, 1});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("inert rule's condition"), std::string::npos) << bad;
  ConfigSpace labelled;
  ASSERT_TRUE(labelled.DefineKnob("kernel", {"tiled", "dot"}).ok());
  ASSERT_TRUE(labelled.DefineKnob("unroll", {1, 2}).ok());
  ASSERT_TRUE(labelled.DeclareSameKernelChoices("kernel", {0, 0}).ok());
  EXPECT_FALSE(labelled.DeclareInert("kernel", "dot", {"unroll"}).ok());
  // The bound counts the labelled groups with the inert knobs.
  ConfigSpace big = BigSpaceWithXInertUnderKernelA();
  auto cap = big.DeclareSameKernelChoices("y", std::vector<int64_t>(300, 0));
  ASSERT_FALSE(cap.ok());
  EXPECT_NE(cap.message().find("more than"), std::string::npos) << cap;
}

TEST(ConfigSpaceTest, SplitPower2Of100HasSevenChoices) {
  ConfigSpace space;
  SplitOptions options;
  options.policy = "power2";
  ASSERT_TRUE(space.DefineSplit("tile", 100, options).ok());
  EXPECT_EQ(space.size(), 7);  // inner 1, 2, 4, ..., 64
  std::vector<std::vector<int64_t>> expected = {{100, 1}, {50, 2}, {25, 4}, {13, 8},
                                                {7, 16},  {4, 32}, {2, 64}};
  EXPECT_EQ(AllSplits(space, "tile"), expected);
}

TEST(ConfigSpaceTest, SplitVerboseOf12IsUnionOfFactorsAndPowersOfTwo) {
  ConfigSpace space;
  SplitOptions options;
  options.policy = "verbose";
  ASSERT_TRUE(space.DefineSplit("tile", 12, options).ok());
  EXPECT_EQ(space.size(), 7);  // {1, 2, 3, 4, 6, 8, 12}
  std::vector<int64_t> inner;
  for (const auto& sizes : AllSplits(space, "tile")) inner.push_back(sizes[1]);
  EXPECT_EQ(inner, (std::vector<int64_t>{1, 2, 3, 4, 6, 8, 12}));
}

// AutoTVM's SplitSpace(policy="verbose") for 48: factors
// list(set(get_factors(48)) | set(get_pow2s(48))), which CPython lists as
// [32, 1, 2, 3, 4, 6, 8, 12, 16, 48, 24] (not sorted: 32 and 48 hash past
// the set's table size at the moment they are placed; see
// python_set_order.h). Two outputs: entity i = [-1, factors[i]].
TEST(ConfigSpaceTest, SplitVerboseOf48KeepsAutoTvmIndices) {
  ConfigSpace space;
  SplitOptions options;
  options.policy = "verbose";
  ASSERT_TRUE(space.DefineSplit("tile", 48, options).ok());
  ASSERT_EQ(space.size(), 11);
  std::vector<std::vector<int64_t>> expected = {{2, 32}, {48, 1}, {24, 2}, {16, 3}, {12, 4}, {8, 6},
                                                {6, 8},  {4, 12}, {3, 16}, {1, 48}, {2, 24}};
  EXPECT_EQ(AllSplits(space, "tile"), expected);
  EXPECT_EQ(space.Get(0)->ToJson()["entity"][0][2], nlohmann::json::array({-1, 32}));
}

// Three outputs, by hand from _generate_space(0, [None, None]): the outer
// loop picks the INNERMOST size s0 from the factor list, the inner loop the
// middle size s1, and [-1, s1, s0] is kept when s0 * s1 <= 48 (tails are
// allowed). s0 = 32 admits only s1 = 1 (index 0); s0 = 1 admits all 11 in
// list order (indices 1..11: 32, 1, 2, ..., 48, 24); s0 = 2 admits 1, 2, 3,
// 4, 6, 8, 12, 16, 24 (indices 12..20; 32 and 48 overflow); s0 = 3 starts at
// index 21 with s1 = 1. 57 choices in all.
TEST(ConfigSpaceTest, SplitVerboseOf48IntoThreeKeepsAutoTvmIndices) {
  ConfigSpace space;
  SplitOptions options;
  options.policy = "verbose";
  options.num_outputs = 3;
  ASSERT_TRUE(space.DefineSplit("tile", 48, options).ok());
  ASSERT_EQ(space.size(), 57);
  auto json_of = [&](int64_t index) { return space.Get(index)->ToJson()["entity"][0][2]; };
  EXPECT_EQ(json_of(0), nlohmann::json::array({-1, 1, 32}));
  EXPECT_EQ(json_of(1), nlohmann::json::array({-1, 32, 1}));
  EXPECT_EQ(json_of(2), nlohmann::json::array({-1, 1, 1}));
  EXPECT_EQ(json_of(10), nlohmann::json::array({-1, 48, 1}));
  EXPECT_EQ(json_of(11), nlohmann::json::array({-1, 24, 1}));
  EXPECT_EQ(json_of(12), nlohmann::json::array({-1, 1, 2}));
  EXPECT_EQ(json_of(19), nlohmann::json::array({-1, 16, 2}));
  EXPECT_EQ(json_of(20), nlohmann::json::array({-1, 24, 2}));
  EXPECT_EQ(json_of(21), nlohmann::json::array({-1, 1, 3}));
  // 16 * 2 = 32 does not divide 48: a tail, kept; the outer loop is
  // ceil(48 / 32) = 2.
  EXPECT_EQ(*space.Get(19)->GetSplit("tile"), (std::vector<int64_t>{2, 16, 2}));
}

// verbose 20 into three: factors [1, 2, 4, 5, 8, 10, 16, 20] (sorted: all
// below the table size). s0 = 1: s1 = 1..20 (8 choices, indices 0..7);
// s0 = 2: s1 in 1, 2, 4, 5, 8, 10 (8..13); s0 = 4: 1, 2, 4, 5 (14..17);
// s0 = 5: 1, 2, 4 (18..20); s0 = 8: 1, 2 (21, 22); s0 = 10: 1, 2 (23, 24);
// s0 = 16: 1 (25); s0 = 20: 1 (26).
TEST(ConfigSpaceTest, SplitVerboseOf20IntoThreeKeepsAutoTvmIndices) {
  ConfigSpace space;
  SplitOptions options;
  options.policy = "verbose";
  options.num_outputs = 3;
  ASSERT_TRUE(space.DefineSplit("tile", 20, options).ok());
  ASSERT_EQ(space.size(), 27);
  std::vector<std::vector<int64_t>> inner;  // [s1, s0]
  for (const auto& sizes : AllSplits(space, "tile")) inner.push_back({sizes[1], sizes[2]});
  std::vector<std::vector<int64_t>> expected = {
      {1, 1}, {2, 1}, {4, 1}, {5, 1}, {8, 1},  {10, 1}, {16, 1}, {20, 1}, {1, 2},
      {2, 2}, {4, 2}, {5, 2}, {8, 2}, {10, 2}, {1, 4},  {2, 4},  {4, 4},  {5, 4},
      {1, 5}, {2, 5}, {4, 5}, {1, 8}, {2, 8},  {1, 10}, {2, 10}, {1, 16}, {1, 20}};
  EXPECT_EQ(inner, expected);
}

// factors of 12 into three, by hand: s0 over [1, 2, 3, 4, 6, 12], s1 such
// that s0 * s1 divides 12. Index 9 = (s0 = 2, s1 = 6): s0 = 1 takes 6
// indices, then s1 = 1, 2, 3, 6 -> 6..9.
TEST(ConfigSpaceTest, SplitFactorsOf12IntoThreeKeepsAutoTvmIndices) {
  ConfigSpace space;
  SplitOptions options;
  options.num_outputs = 3;
  ASSERT_TRUE(space.DefineSplit("tile", 12, options).ok());
  ASSERT_EQ(space.size(), 18);
  EXPECT_EQ(*space.Get(9)->GetSplit("tile"), (std::vector<int64_t>{1, 6, 2}));
  EXPECT_EQ(*space.Get(17)->GetSplit("tile"), (std::vector<int64_t>{1, 1, 12}));
}

// A two-knob AutoTVM index: tile (verbose 48, 11 choices) then ann
// (try_unroll_vec on 3 axes, 20 choices). Index 5 + 11 * 13 -> tile choice 5
// ([-1, 6]) and ann choice 13 ([unroll, unroll, vec]).
TEST(ConfigSpaceTest, AutoTvmIndexOfVerboseSplitAndAnnotate) {
  ConfigSpace space;
  SplitOptions verbose;
  verbose.policy = "verbose";
  ASSERT_TRUE(space.DefineSplit("tile", 48, verbose).ok());
  ASSERT_TRUE(space.DefineAnnotate("ann", 3, "try_unroll_vec").ok());
  absl::StatusOr<Config> config = space.Get(5 + 11 * 13);
  ASSERT_TRUE(config.ok());
  nlohmann::json expected = nlohmann::json::parse(R"({"index": 148, "code_hash": null,
    "entity": [["tile", "sp", [-1, 6]], ["ann", "an", ["unroll", "unroll", "vec"]]]})");
  EXPECT_EQ(config->ToJson(), expected);
  absl::StatusOr<Config> parsed = space.FromJson(expected);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->index(), 148);
}

TEST(ConfigSpaceTest, SplitFactorsOf32IntoThreeHasTwentyOneChoices) {
  ConfigSpace space;
  SplitOptions options;
  options.num_outputs = 3;
  ASSERT_TRUE(space.DefineSplit("tile", 32, options).ok());
  // Inner pairs (2^i, 2^j) with i + j <= 5: 6 + 5 + 4 + 3 + 2 + 1.
  EXPECT_EQ(space.size(), 21);
  std::set<std::vector<int64_t>> distinct;
  for (const auto& sizes : AllSplits(space, "tile")) {
    ASSERT_EQ(sizes.size(), 3u);
    EXPECT_EQ(sizes[0] * sizes[1] * sizes[2], 32);
    distinct.insert(sizes);
  }
  EXPECT_EQ(distinct.size(), 21u);
}

TEST(ConfigSpaceTest, SplitMaxFactorAndFilterDropChoices) {
  ConfigSpace space;
  SplitOptions options;
  options.max_factor = 8;
  ASSERT_TRUE(space.DefineSplit("limited", 32, options).ok());
  EXPECT_EQ(space.size(), 4);  // inner 1, 2, 4, 8

  SplitOptions filtered;
  filtered.filter = [](const std::vector<int64_t>& sizes) { return sizes[0] >= 4; };
  ASSERT_TRUE(space.DefineSplit("filtered", 32, filtered).ok());
  EXPECT_EQ(space.knob_size(1), 4);  // outer 32, 16, 8, 4
}

TEST(ConfigSpaceTest, IndexIsMixedRadixWithFirstKnobFastest) {
  ConfigSpace space;
  ASSERT_TRUE(space.DefineKnob("a", std::vector<int64_t>{10, 20}).ok());
  ASSERT_TRUE(space.DefineKnob("b", std::vector<int64_t>{100, 200, 300}).ok());
  ASSERT_TRUE(space.DefineKnob("c", std::vector<std::string>{"x", "y"}).ok());
  ASSERT_EQ(space.size(), 12);
  for (int64_t i = 0; i < space.size(); ++i) {
    absl::StatusOr<Config> config = space.Get(i);
    ASSERT_TRUE(config.ok());
    EXPECT_EQ(config->index(), i);
    EXPECT_EQ(config->choice_indices(), (std::vector<int64_t>{i % 2, (i / 2) % 3, i / 6}));
  }
  absl::StatusOr<Config> config = space.Get(7);  // digits (1, 0, 1)
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(*config->GetInt("a"), 20);
  EXPECT_EQ(*config->GetInt("b"), 100);
  EXPECT_EQ(*config->GetString("c"), "y");
}

TEST(ConfigSpaceTest, GetOutsideTheSpaceIsOutOfRange) {
  ConfigSpace space;
  ASSERT_TRUE(space.DefineSplit("tile", 32).ok());
  EXPECT_EQ(space.Get(6).status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(space.Get(-1).status().code(), absl::StatusCode::kOutOfRange);
}

TEST(ConfigSpaceTest, ReorderPolicies) {
  ConfigSpace space;
  ASSERT_TRUE(space.DefineReorder("identity", 3, "identity").ok());
  ASSERT_TRUE(space.DefineReorder("all", 3, "all").ok());
  ASSERT_TRUE(space.DefineReorder("some", 3, "candidate", {{0, 1, 2}, {2, 1, 0}}).ok());
  EXPECT_EQ(space.KnobDims(), (std::vector<int64_t>{1, 6, 2}));
  // "all" is lexicographic like itertools.permutations, so its choice 5 is
  // the last order; "some" is digit 2 with stride 1 * 6.
  absl::StatusOr<Config> config = space.Get(5 + 6 * 1);
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(*config->GetReorder("identity"), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(*config->GetReorder("all"), (std::vector<int>{2, 1, 0}));
  EXPECT_EQ(*config->GetReorder("some"), (std::vector<int>{2, 1, 0}));

  absl::Status bad = space.DefineReorder("bad", 3, "candidate", {{0, 1, 1}});
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad.message()), HasSubstr("bad"));
  EXPECT_EQ(space.DefineReorder("none", 3, "candidate").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(space.DefineReorder("huh", 3, "interleave").code(), absl::StatusCode::kInvalidArgument);
}

// AutoTVM's AnnotateSpace._generate_space for policy P on n axes: options
// O = P.replace("try", "none").split("_") for every axis; depth first with
// axis 0 slowest; keep a choice when it has at most one "vec". By hand:
//   try_vec, 3 axes: O = [none, vec]; the 8 products in order are nnn, nnv,
//     nvn, nvv (2 vecs, dropped), vnn, vnv (dropped), vvn (dropped), vvv
//     (dropped) -> [nnn, nnv, nvn, vnn]: the vec may sit on ANY axis.
//   try_unroll_vec, 3 axes: O = [none, unroll, vec]; 27 products minus those
//     with two or three vecs (3 * 2 + 1 = 7) -> 20; index 2 = (n, n, v),
//     index 16 = (v, n, n) (the first product with axis 0 = vec is 18th of
//     27, minus the 2 dropped before it: nvv and uvv).
TEST(ConfigSpaceTest, AnnotatePoliciesOfferVecOnEveryAxisInAutoTvmOrder) {
  ConfigSpace space;
  ASSERT_TRUE(space.DefineAnnotate("v", 3, "try_vec").ok());
  ASSERT_TRUE(space.DefineAnnotate("u", 3, "try_unroll").ok());
  ASSERT_TRUE(space.DefineAnnotate("uv", 3, "try_unroll_vec").ok());
  ASSERT_TRUE(space.DefineAnnotate("vu", 2, "try_vec_unroll").ok());
  EXPECT_EQ(space.KnobDims(), (std::vector<int64_t>{4, 8, 20, 8}));

  using Annotation = std::vector<std::string>;
  std::vector<Annotation> try_vec;
  for (int64_t c = 0; c < 4; ++c) try_vec.push_back(*space.Get(c)->GetAnnotate("v"));
  EXPECT_EQ(try_vec, (std::vector<Annotation>{{"none", "none", "none"},
                                              {"none", "none", "vec"},
                                              {"none", "vec", "none"},
                                              {"vec", "none", "none"}}));
  // try_unroll: the binary count with axis 0 most significant.
  EXPECT_EQ(*space.Get(4 * 6)->GetAnnotate("u"), (Annotation{"unroll", "unroll", "none"}));

  const int64_t uv_stride = 4 * 8;
  EXPECT_EQ(*space.Get(2 * uv_stride)->GetAnnotate("uv"), (Annotation{"none", "none", "vec"}));
  EXPECT_EQ(*space.Get(16 * uv_stride)->GetAnnotate("uv"), (Annotation{"vec", "none", "none"}));
  EXPECT_EQ(*space.Get(19 * uv_stride)->GetAnnotate("uv"), (Annotation{"vec", "unroll", "unroll"}));
  for (int64_t c = 0; c < 20; ++c) {
    Annotation annotation = *space.Get(c * uv_stride)->GetAnnotate("uv");
    EXPECT_LE(std::count(annotation.begin(), annotation.end(), "vec"), 1) << c;
  }
  // try_vec_unroll, 2 axes: O = [none, vec, unroll] -> nn, nv, nu, vn, vu,
  // un, uv, uu (vv dropped).
  const int64_t vu_stride = uv_stride * 20;
  EXPECT_EQ(*space.Get(1 * vu_stride)->GetAnnotate("vu"), (Annotation{"none", "vec"}));
  EXPECT_EQ(*space.Get(4 * vu_stride)->GetAnnotate("vu"), (Annotation{"vec", "unroll"}));
  EXPECT_EQ(*space.Get(7 * vu_stride)->GetAnnotate("vu"), (Annotation{"unroll", "unroll"}));
}

TEST(ConfigSpaceTest, AnnotateFixedPoliciesAndBadPolicies) {
  ConfigSpace space;
  ASSERT_TRUE(space.DefineAnnotate("all_unroll", 3, "unroll").ok());
  ASSERT_TRUE(space.DefineAnnotate("one_vec", 1, "vec").ok());
  EXPECT_EQ(space.KnobDims(), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(*space.Get(0)->GetAnnotate("all_unroll"),
            (std::vector<std::string>{"unroll", "unroll", "unroll"}));

  // "vec" on two axes would vectorize both: no choice is left.
  absl::Status two_vecs = space.DefineAnnotate("two_vecs", 2, "vec");
  EXPECT_EQ(two_vecs.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(two_vecs.message()), HasSubstr("'two_vecs'"));
  absl::Status repeated = space.DefineAnnotate("repeated", 2, "try_none");
  EXPECT_EQ(repeated.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(repeated.message()), HasSubstr("'none' twice"));
  EXPECT_EQ(space.DefineAnnotate("bad", 0, "try_unroll").code(),
            absl::StatusCode::kInvalidArgument);
  absl::Status gpu = space.DefineAnnotate("bad", 2, "bind_gpu");
  EXPECT_EQ(gpu.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(gpu.message()), HasSubstr("bind_gpu"));
  EXPECT_EQ(space.num_knobs(), 2);
}

TEST(ConfigSpaceTest, BadDefinitionsAreInvalidArgumentAndLeaveTheSpaceUnchanged) {
  ConfigSpace space;
  ASSERT_TRUE(space.DefineSplit("tile", 32).ok());

  absl::Status duplicate = space.DefineKnob("tile", std::vector<int64_t>{1});
  EXPECT_EQ(duplicate.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(duplicate.message()), HasSubstr("'tile'"));

  EXPECT_EQ(space.DefineKnob("empty", std::vector<int64_t>{}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(space.DefineKnob("empty_s", std::vector<std::string>{}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(space.DefineKnob("repeat", std::vector<int64_t>{1, 2, 1}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(space.DefineSplit("zero", 0).code(), absl::StatusCode::kInvalidArgument);

  SplitOptions one_output;
  one_output.num_outputs = 1;
  EXPECT_EQ(space.DefineSplit("one", 32, one_output).code(), absl::StatusCode::kInvalidArgument);

  SplitOptions unknown_policy;
  unknown_policy.policy = "fibonacci";
  EXPECT_EQ(space.DefineSplit("fib", 32, unknown_policy).code(),
            absl::StatusCode::kInvalidArgument);

  SplitOptions filter_all;
  filter_all.filter = [](const std::vector<int64_t>&) { return false; };
  EXPECT_EQ(space.DefineSplit("nothing", 32, filter_all).code(),
            absl::StatusCode::kInvalidArgument);

  EXPECT_EQ(space.num_knobs(), 1);
  EXPECT_EQ(space.size(), 6);
}

TEST(ConfigSpaceTest, SizeOverflowIsInvalidArgument) {
  ConfigSpace space;
  std::vector<int64_t> thousand(1000);
  for (int i = 0; i < 1000; ++i) thousand[i] = i;
  // 1000^6 = 1e18 fits in int64; a seventh knob does not.
  for (int k = 0; k < 6; ++k) {
    ASSERT_TRUE(space.DefineKnob("k" + std::to_string(k), thousand).ok());
  }
  EXPECT_EQ(space.size(), int64_t{1000000000000000000});
  absl::Status overflow = space.DefineKnob("k6", thousand);
  EXPECT_EQ(overflow.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(overflow.message()), HasSubstr("'k6'"));
  EXPECT_EQ(space.num_knobs(), 6);

  // Configs of the huge space still work at both ends.
  absl::StatusOr<Config> last = space.Get(space.size() - 1);
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(*last->GetInt("k5"), 999);
}

TEST(ConfigSpaceTest, ToJsonHasAutoTvmShape) {
  ConfigSpace space;
  ASSERT_TRUE(space.DefineSplit("tile_y", 32).ok());
  ASSERT_TRUE(space.DefineKnob("mr", std::vector<int64_t>{4, 6, 8}).ok());
  ASSERT_TRUE(space.DefineReorder("order", 2, "all").ok());
  ASSERT_TRUE(space.DefineAnnotate("ann", 2, "try_vec").ok());
  // tile_y choice 2 ([-1, 4]), mr choice 1 (6), order choice 1, ann choice 1.
  const int64_t index = 2 + 6 * (1 + 3 * (1 + 2 * 1));
  absl::StatusOr<Config> config = space.Get(index);
  ASSERT_TRUE(config.ok());
  nlohmann::json expected = nlohmann::json::parse(R"({
    "index": )" + std::to_string(index) + R"(, "code_hash": null,
    "entity": [["tile_y", "sp", [-1, 4]], ["mr", "ot", 6], ["order", "re", [1, 0]],
               ["ann", "an", ["none", "vec"]]]})");
  EXPECT_EQ(config->ToJson(), expected);
  EXPECT_EQ(config->ToString(),
            "[('tile_y', [-1, 4]), ('mr', 6), ('order', [1, 0]), ('ann', ['none', 'vec'])]");
  EXPECT_EQ(*config->GetSplit("tile_y"), (std::vector<int64_t>{8, 4}));
}

TEST(ConfigSpaceTest, JsonRoundTripsForEveryIndex) {
  ConfigSpace space;
  SplitOptions three;
  three.num_outputs = 3;
  ASSERT_TRUE(space.DefineSplit("tile", 12, three).ok());
  ASSERT_TRUE(space.DefineKnob("layout", std::vector<std::string>{"NK", "KN"}).ok());
  ASSERT_TRUE(space.DefineReorder("order", 3, "all").ok());
  ASSERT_TRUE(space.DefineAnnotate("ann", 2, "try_unroll_vec").ok());
  for (int64_t i = 0; i < space.size(); ++i) {
    absl::StatusOr<Config> config = space.Get(i);
    ASSERT_TRUE(config.ok());
    absl::StatusOr<Config> parsed = space.FromJsonString(config->ToJson().dump());
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(parsed->index(), i);
    EXPECT_EQ(parsed->choice_indices(), config->choice_indices());
    EXPECT_EQ(parsed->ToJson(), config->ToJson());
  }
}

TEST(ConfigSpaceTest, FromJsonAcceptsMissingIndexAndRealOuterSize) {
  ConfigSpace space;
  ASSERT_TRUE(space.DefineSplit("tile", 32).ok());
  ASSERT_TRUE(space.DefineKnob("mr", std::vector<int64_t>{4, 6}).ok());
  absl::StatusOr<Config> config =
      space.FromJsonString(R"({"entity": [["mr", "ot", 6], ["tile", "sp", [8, 4]]]})");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->index(), 2 + 6 * 1);
}

TEST(ConfigSpaceTest, ConfigsOutliveAndIgnoreLaterChangesOfTheirSpace) {
  Config config;
  {
    ConfigSpace space;
    ASSERT_TRUE(space.DefineSplit("tile", 32).ok());
    config = *space.Get(3);
    ConfigSpace moved = std::move(space);
    ASSERT_TRUE(moved.DefineKnob("later", std::vector<int64_t>{1, 2}).ok());
  }
  EXPECT_EQ(*config.GetSplit("tile"), (std::vector<int64_t>{4, 8}));
  EXPECT_EQ(config.GetInt("later").status().code(), absl::StatusCode::kNotFound);
}

TEST(ConfigSpaceTest, AccessorsReportUnknownNamesAndWrongKinds) {
  ConfigSpace space;
  ASSERT_TRUE(space.DefineSplit("tile", 32).ok());
  ASSERT_TRUE(space.DefineKnob("mr", std::vector<int64_t>{4, 6}).ok());
  Config config = *space.Get(0);
  EXPECT_EQ(config.GetSplit("nope").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(config.GetInt("tile").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(config.GetString("mr").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(config.GetReorder("mr").status().code(), absl::StatusCode::kInvalidArgument);
}

class FromJsonErrorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(space_.DefineSplit("tile_y", 32).ok());
    ASSERT_TRUE(space_.DefineKnob("mr", std::vector<int64_t>{4, 6}).ok());
  }

  // Expects InvalidArgument whose message contains `needle`.
  void ExpectError(const std::string& text, const std::string& needle) {
    absl::StatusOr<Config> config = space_.FromJsonString(text);
    ASSERT_FALSE(config.ok()) << text;
    EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument) << config.status();
    EXPECT_THAT(std::string(config.status().message()), HasSubstr(needle)) << config.status();
  }

  ConfigSpace space_;
};

TEST_F(FromJsonErrorTest, UnknownKnobName) {
  ExpectError(R"({"entity": [["tile_y", "sp", [-1, 4]], ["mr", "ot", 6], ["nr", "ot", 8]]})",
              "'nr'");
}

TEST_F(FromJsonErrorTest, ValueOutsideCandidates) {
  ExpectError(R"({"entity": [["tile_y", "sp", [-1, 4]], ["mr", "ot", 5]]})", "'mr'");
  ExpectError(R"({"entity": [["tile_y", "sp", [-1, 5]], ["mr", "ot", 6]]})", "'tile_y'");
  ExpectError(R"({"entity": [["tile_y", "sp", [-1, 4, 2]], ["mr", "ot", 6]]})", "'tile_y'");
  ExpectError(R"({"entity": [["tile_y", "sp", [16, 4]], ["mr", "ot", 6]]})", "'tile_y'");
}

TEST_F(FromJsonErrorTest, WrongKind) {
  ExpectError(R"({"entity": [["tile_y", "re", [-1, 4]], ["mr", "ot", 6]]})", "'tile_y'");
  ExpectError(R"({"entity": [["tile_y", "sp", [-1, 4]], ["mr", "ot", "6"]]})", "'mr'");
}

TEST_F(FromJsonErrorTest, MissingAndRepeatedKnobs) {
  ExpectError(R"({"entity": [["tile_y", "sp", [-1, 4]]]})", "'mr'");
  ExpectError(R"({"entity": [["mr", "ot", 4], ["mr", "ot", 6], ["tile_y", "sp", [-1, 4]]]})",
              "'mr'");
}

TEST_F(FromJsonErrorTest, TruncatedText) {
  ExpectError(R"({"index": 2, "code_hash": null, "entity": [["tile_y", "sp", [-1,)", "parse");
}

TEST_F(FromJsonErrorTest, IndexDisagreeingWithEntity) {
  // tile_y [-1, 4] is choice 2, mr 6 is choice 1: index 8.
  ASSERT_TRUE(
      space_
          .FromJsonString(R"({"index": 8, "entity": [["tile_y", "sp", [-1, 4]], ["mr", "ot", 6]]})")
          .ok());
  ExpectError(R"({"index": 9, "entity": [["tile_y", "sp", [-1, 4]], ["mr", "ot", 6]]})", "index 9");
}

TEST_F(FromJsonErrorTest, NotAnObjectOrNoEntity) {
  ExpectError("[1, 2, 3]", "object");
  ExpectError(R"({"index": 0})", "entity");
  ExpectError(R"({"entity": [["tile_y", "sp"]]})", "[name, kind, value]");
}

TEST(ConfigSpaceTest, DescribeHasOneLinePerKnobWithItsSize) {
  ConfigSpace space;
  ASSERT_TRUE(space.DefineSplit("tile_y", 32).ok());
  ASSERT_TRUE(space.DefineKnob("mr", std::vector<int64_t>{4, 6}).ok());
  EXPECT_EQ(space.Describe(),
            "  0 tile_y: split(policy=factors, extent=32, num_outputs=2) size=6\n"
            "  1 mr: other([4, 6]) size=2\n");
}

}  // namespace
}  // namespace tunefleet
