// The layout-aware choice on small chains: a near-best record that reads
// its producer's layout wins over a best one that needs a relayout, a much
// slower one does not, absurd costs are never candidates, and a chain that
// must change block together does.
#include "compiler/layout_choice.h"

#include <cmath>

#include "gtest/gtest.h"

namespace tunefleet {
namespace {

// A 192x28x28 activation: a relayout of it is est. 0.12 ms.
constexpr int64_t kElements = 192 * 28 * 28;

LayoutOption Option(int64_t read_block, int64_t write_block, int64_t write_row, double ms) {
  return {read_block, 28, write_block, write_row, ms * 1e-3};
}

TEST(LayoutChoiceTest, NearBestRecordReadingTheProducersLayoutWinsOverARelayout) {
  // Layer 0 writes NCHW16c; layer 1's best reads NCHW8c, a record 2% slower reads NCHW16c.
  const std::vector<std::vector<LayoutOption>> options = {
      {Option(16, 16, 28, 1.0)}, {Option(8, 8, 28, 1.00), Option(16, 8, 28, 1.02)}};
  const std::vector<LayoutEdge> edges = {{0, 1, false, kElements}};
  EXPECT_EQ(ChooseLayoutOptions(options, edges), (std::vector<int>{0, 1}));
}

// A kernel that reads related blocks as they are (kernel_packing.h
// RelatedBlockReads): layer 1's best reads NCHW8c and takes layer 0's
// NCHW48c in place (a multiple), its NCHW4c only where it copies its input
// anyway (a divisor), NCHW12c never; a residual keeps its exact layout.
TEST(LayoutChoiceTest, AKernelReadingRelatedBlocksNeedsNoRelayout) {
  const LayoutEdge edge = {0, 1, false, kElements};
  LayoutOption reader = Option(8, 8, 28, 1.0);
  reader.related_reads.multiples = true;
  EXPECT_EQ(RelayoutSeconds(edge, Option(48, 48, 28, 1.0), reader), 0);
  EXPECT_GT(RelayoutSeconds(edge, Option(4, 4, 28, 1.0), reader), 0);
  EXPECT_GT(RelayoutSeconds(edge, Option(48, 48, 30, 1.0), reader), 0);  // rows padded
  reader.related_reads.divisors = true;
  EXPECT_EQ(RelayoutSeconds(edge, Option(4, 4, 28, 1.0), reader), 0);
  EXPECT_GT(RelayoutSeconds(edge, Option(12, 12, 28, 1.0), reader), 0);
  // A grouped kernel reading in place: multiples within its groups' 16 only.
  reader.related_reads = {true, false, 16};
  EXPECT_EQ(RelayoutSeconds(edge, Option(16, 16, 28, 1.0), reader), 0);
  EXPECT_GT(RelayoutSeconds(edge, Option(48, 48, 28, 1.0), reader), 0);
  const LayoutEdge residual = {0, 1, true, kElements};
  EXPECT_GT(RelayoutSeconds(residual, Option(48, 48, 28, 1.0), reader), 0);
  // The best record needs no other then.
  LayoutOption in_place = Option(8, 8, 28, 1.0);
  in_place.related_reads.multiples = true;
  const std::vector<std::vector<LayoutOption>> options = {{Option(48, 48, 28, 1.0)},
                                                          {in_place, Option(48, 8, 28, 1.02)}};
  EXPECT_EQ(ChooseLayoutOptions(options, {edge}), (std::vector<int>{0, 0}));
}

TEST(LayoutChoiceTest, AChainThatMustChangeBlockTogetherDoes) {
  // A fixed producer in NCHW8c (node 0) feeds a layer (1) whose two
  // branches (2, 3) read it and are concatenated into its layout
  // (residual edges, as a concat's later inputs are). Every layer is 2%
  // faster in NCHW16c, but each 8c -> 16c relayout costs 0.12 ms: all in 8c
  // is best, and no single layer can get there alone.
  const std::vector<std::vector<LayoutOption>> options = {
      {Option(8, 8, 28, 0.0)},
      {Option(16, 16, 28, 1.00), Option(8, 8, 28, 1.02)},
      {Option(16, 16, 28, 1.00), Option(8, 8, 28, 1.02)},
      {Option(16, 16, 28, 1.00), Option(8, 8, 28, 1.02)}};
  const std::vector<LayoutEdge> edges = {{0, 1, false, kElements},
                                         {1, 2, false, kElements},
                                         {1, 3, false, kElements},
                                         {2, 1, true, kElements},
                                         {3, 1, true, kElements}};
  EXPECT_EQ(ChooseLayoutOptions(options, edges), (std::vector<int>{0, 1, 1, 1}));
}

TEST(LayoutChoiceTest, KeepsTheBestRecordWhenTheRelayoutIsCheaperThanTheSlowdown) {
  const std::vector<std::vector<LayoutOption>> options = {
      {Option(16, 16, 28, 1.0)}, {Option(8, 8, 28, 1.00), Option(16, 8, 28, 1.50)}};
  const std::vector<LayoutEdge> edges = {{0, 1, false, kElements}};
  EXPECT_EQ(ChooseLayoutOptions(options, edges), (std::vector<int>{0, 0}));
}

TEST(LayoutChoiceTest, KeepsTheBestRecordWhenNoRelayoutIsAtStake) {
  // Both of layer 1's records read what layer 0 writes: pick-best.
  const std::vector<std::vector<LayoutOption>> options = {
      {Option(16, 16, 28, 1.0)}, {Option(16, 8, 28, 1.00), Option(16, 16, 28, 1.00)}};
  const std::vector<LayoutEdge> edges = {{0, 1, false, kElements}};
  EXPECT_EQ(ChooseLayoutOptions(options, edges), (std::vector<int>{0, 0}));
}

TEST(LayoutChoiceTest, ProducerWritesRowsItsConsumerReadsWhenItsBestPadsThem) {
  // Layer 0's best writes rows of 32 (whole 8-wide tiles of 28 columns);
  // a record 1% slower writes rows of 28, what layer 1 reads.
  const std::vector<std::vector<LayoutOption>> options = {
      {Option(16, 16, 32, 1.00), Option(16, 16, 28, 1.01)}, {Option(16, 16, 28, 1.0)}};
  const std::vector<LayoutEdge> edges = {{0, 1, false, kElements}};
  EXPECT_EQ(ChooseLayoutOptions(options, edges), (std::vector<int>{1, 0}));
}

TEST(LayoutChoiceTest, ResidualMustHaveTheLayoutOfTheOutputItIsAddedTo) {
  // Layer 2 adds layer 0's output to its own: its near-best record writes
  // layer 0's layout, its best another block.
  const std::vector<std::vector<LayoutOption>> options = {
      {Option(16, 16, 28, 1.0)},
      {Option(16, 16, 28, 1.0)},
      {Option(16, 8, 28, 1.00), Option(16, 16, 28, 1.03)}};
  const std::vector<LayoutEdge> edges = {
      {0, 1, false, kElements}, {1, 2, false, kElements}, {0, 2, true, kElements}};
  EXPECT_EQ(ChooseLayoutOptions(options, edges), (std::vector<int>{0, 0, 1}));
  EXPECT_EQ(RelayoutSeconds(edges[2], options[0][0], options[2][1]), 0);
  EXPECT_GT(RelayoutSeconds(edges[2], options[0][0], options[2][0]), 0);
}

TEST(LayoutChoiceTest, ThroughPoolingOnlyTheChannelBlockMatters) {
  // Layer 0 writes NCHW64c rows of 112, a max pool halves them; layer 1's
  // best reads NCHW4c, its near-best NCHW64c.
  const std::vector<std::vector<LayoutOption>> options = {
      {{3, 224, 64, 112, 1e-3}}, {Option(4, 32, 56, 1.00), Option(64, 32, 56, 1.01)}};
  const std::vector<LayoutEdge> edges = {{0, 1, false, 64 * 56 * 56, /*block_only=*/true}};
  EXPECT_EQ(ChooseLayoutOptions(options, edges), (std::vector<int>{0, 1}));
}

TEST(LayoutChoiceTest, AbsurdOrForgedCostsAreNeverCandidates) {
  EXPECT_TRUE(UsableCandidateCost(1.02e-3, 1e-3));
  EXPECT_FALSE(UsableCandidateCost(1e-3 * 1000, 1e-3));  // far slower: no relayout pays for it
  EXPECT_FALSE(UsableCandidateCost(0, 1e-3));
  EXPECT_FALSE(UsableCandidateCost(-1e-3, 1e-3));
  EXPECT_FALSE(UsableCandidateCost(NAN, 1e-3));
  EXPECT_FALSE(UsableCandidateCost(INFINITY, 1e-3));
  EXPECT_FALSE(UsableCandidateCost(1e-3, 0));  // a best of no cost: nothing to compare with
}

}  // namespace
}  // namespace tunefleet
