#include "tuner_core/tuners/random_tuner.h"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "gtest/gtest.h"
#include "tuner_core/tuners/fake_measurer.h"

namespace tunefleet {
namespace {

ConfigSpace SmallSpace() {  // 6 x 5 = 30 configs
  ConfigSpace space;
  EXPECT_TRUE(space.DefineSplit("tile", 32).ok());
  EXPECT_TRUE(space.DefineKnob("mr", {2, 4, 6, 8, 10}).ok());
  return space;
}

// 1000^6 = 10^18 configs: far too many to list or permute.
ConfigSpace HugeSpace() {
  ConfigSpace space;
  std::vector<int64_t> thousand(1000);
  for (int i = 0; i < 1000; ++i) thousand[i] = i;
  for (int k = 0; k < 6; ++k) EXPECT_TRUE(space.DefineKnob("k" + std::to_string(k), thousand).ok());
  return space;
}

std::vector<int64_t> Drain(RandomTuner& tuner, int batch_size, int64_t max_configs) {
  std::vector<int64_t> seen;
  while (tuner.HasNext() && static_cast<int64_t>(seen.size()) < max_configs) {
    std::vector<Config> batch = tuner.NextBatch(batch_size);
    EXPECT_FALSE(batch.empty());
    for (const Config& config : batch) seen.push_back(config.index());
  }
  return seen;
}

TEST(RandomTunerTest, ProposesOneConfigOfEachSetOfEquivalentOnes) {
  ConfigSpace space;  // 3 blocks x 2 kernels x 2 unrolls; "dot" ignores the block
  ASSERT_TRUE(space.DefineKnob("block", {16, 32, 64}).ok());
  ASSERT_TRUE(space.DefineKnob("kernel", {"tiled", "dot"}).ok());
  ASSERT_TRUE(space.DefineKnob("unroll", {1, 2}).ok());
  ASSERT_TRUE(space.DeclareInert("kernel", "dot", {"block"}).ok());
  RandomTuner tuner(space, /*seed=*/7);
  const std::vector<int64_t> seen = Drain(tuner, 4, 100);
  // 6 tiled kernels and 2 dot kernels (one per unroll), each proposed once.
  EXPECT_EQ(seen.size(), 8u);
  EXPECT_EQ(std::set<int64_t>(seen.begin(), seen.end()).size(), seen.size());
  std::vector<int64_t> dot_unrolls;
  for (int64_t index : seen) {
    const Config config = *space.Get(index);
    if (*config.GetString("kernel") == "dot") dot_unrolls.push_back(*config.GetInt("unroll"));
  }
  std::sort(dot_unrolls.begin(), dot_unrolls.end());
  EXPECT_EQ(dot_unrolls, (std::vector<int64_t>{1, 2}));
}

TEST(RandomTunerTest, CoversASmallSpaceExactlyOnceThenStops) {
  RandomTuner tuner(SmallSpace(), /*seed=*/7);
  std::vector<int64_t> seen = Drain(tuner, 4, 1000);
  ASSERT_EQ(seen.size(), 30u);
  std::vector<int64_t> sorted = seen;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t i = 0; i < 30; ++i) EXPECT_EQ(sorted[i], i);
  EXPECT_FALSE(tuner.HasNext());
  EXPECT_TRUE(tuner.NextBatch(4).empty());
  // Not simply index order.
  EXPECT_FALSE(std::is_sorted(seen.begin(), seen.end()));
}

TEST(RandomTunerTest, TuneStopsWhenTheSpaceIsExhausted) {
  RandomTuner tuner(SmallSpace(), /*seed=*/3);
  FakeMeasurer measurer([](const Config&) { return FakeCost(1e-3); });
  ASSERT_TRUE(tuner.Tune(measurer, QuietTuneOptions(500, 8)).ok());
  std::vector<int64_t> measured = measurer.measured_indices();
  EXPECT_EQ(measured.size(), 30u);
  EXPECT_EQ(std::set<int64_t>(measured.begin(), measured.end()).size(), 30u);
}

TEST(RandomTunerTest, SameSeedReplaysAndOtherSeedsDiffer) {
  RandomTuner a(SmallSpace(), 42), b(SmallSpace(), 42), c(SmallSpace(), 43);
  std::vector<int64_t> seen_a = Drain(a, 3, 1000);
  EXPECT_EQ(seen_a, Drain(b, 3, 1000));
  EXPECT_NE(seen_a, Drain(c, 3, 1000));

  RandomTuner huge_a(HugeSpace(), 42), huge_b(HugeSpace(), 42);
  EXPECT_EQ(Drain(huge_a, 8, 200), Drain(huge_b, 8, 200));
}

TEST(RandomTunerTest, FirstSequenceOfAFixedSeedIsStable) {
  // mt19937_64's output is fixed by the C++ standard and the draws are our
  // own, so this sequence must not change across compilers or libraries.
  RandomTuner tuner(HugeSpace(), 1);
  std::vector<int64_t> first = Drain(tuner, 3, 3);
  std::mt19937_64 engine(1);
  const uint64_t size = 1000000000000000000ULL;
  std::vector<int64_t> expected;
  for (int i = 0; i < 3; ++i) {
    uint64_t r;
    do r = engine();
    while (r < (0 - size) % size);
    expected.push_back(static_cast<int64_t>(r % size));
  }
  EXPECT_EQ(first, expected);
}

TEST(RandomTunerTest, NeverRepeatsInAHugeSpace) {
  RandomTuner tuner(HugeSpace(), 11);
  std::vector<int64_t> seen = Drain(tuner, 8, 5000);
  ASSERT_EQ(seen.size(), 5000u);
  EXPECT_EQ(absl::flat_hash_set<int64_t>(seen.begin(), seen.end()).size(), 5000u);
  for (int64_t index : seen) {
    EXPECT_GE(index, 0);
    EXPECT_LT(index, 1000000000000000000LL);
  }
}

TEST(RandomTunerTest, NeverProposesIndicesMarkedVisited) {
  RandomTuner tuner(SmallSpace(), 5);
  for (int64_t index = 0; index < 30; index += 3) tuner.MarkVisited(index);
  // Mark more while the tuner is past the half-way switch to a shuffled list.
  std::vector<int64_t> seen = Drain(tuner, 2, 4);
  for (int64_t index = 1; index < 30; index += 3) tuner.MarkVisited(index);
  std::vector<int64_t> rest = Drain(tuner, 2, 1000);
  seen.insert(seen.end(), rest.begin(), rest.end());

  std::set<int64_t> distinct(seen.begin(), seen.end());
  EXPECT_EQ(distinct.size(), seen.size());
  for (int64_t index : seen) {
    EXPECT_NE(index % 3, 0) << index;
  }
  // Everything with index % 3 == 2 was proposed, plus whichever index % 3 == 1
  // came out before those were marked.
  for (int64_t index = 2; index < 30; index += 3) EXPECT_EQ(distinct.count(index), 1u) << index;
  EXPECT_FALSE(tuner.HasNext());
}

TEST(RandomTunerTest, FirstProposalIsRoughlyUniform) {
  ConfigSpace space;
  ASSERT_TRUE(space.DefineKnob("k", {0, 1, 2, 3}).ok());
  std::vector<int> counts(4, 0);
  constexpr int kSeeds = 4000;
  for (int seed = 0; seed < kSeeds; ++seed) {
    RandomTuner tuner(space, seed);
    ++counts[tuner.NextBatch(1)[0].index()];
  }
  // Expected 1000 each; 5 standard deviations is about 137.
  for (int count : counts) {
    EXPECT_GT(count, 860);
    EXPECT_LT(count, 1140);
  }
}

}  // namespace
}  // namespace tunefleet
