#include "tuner_core/space/config_space.h"

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

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

TEST(ConfigSpaceTest, AnnotatePolicies) {
  ConfigSpace space;
  ASSERT_TRUE(space.DefineAnnotate("u", 3, "try_unroll").ok());
  ASSERT_TRUE(space.DefineAnnotate("v", 3, "try_vec").ok());
  ASSERT_TRUE(space.DefineAnnotate("uv", 3, "try_unroll_vec").ok());
  EXPECT_EQ(space.KnobDims(), (std::vector<int64_t>{8, 2, 12}));

  std::set<std::vector<std::string>> vec_choices;
  for (int64_t i = 0; i < 2; ++i) {
    vec_choices.insert(*space.Get(i * 8)->GetAnnotate("v"));
  }
  EXPECT_EQ(vec_choices, (std::set<std::vector<std::string>>{{"none", "none", "none"},
                                                             {"none", "none", "vec"}}));
  // The last axis of try_unroll_vec may also be unrolled; the others never vec.
  for (int64_t c = 0; c < 12; ++c) {
    std::vector<std::string> annotation = *space.Get(c * 16)->GetAnnotate("uv");
    EXPECT_NE(annotation[0], "vec");
    EXPECT_NE(annotation[1], "vec");
  }
  EXPECT_EQ(space.DefineAnnotate("bad", 0, "try_unroll").code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(space.DefineAnnotate("bad", 2, "bind_gpu").code(), absl::StatusCode::kInvalidArgument);
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
