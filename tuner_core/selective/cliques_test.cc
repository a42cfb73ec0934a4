#include "tuner_core/selective/cliques.h"

#include "gtest/gtest.h"

namespace tunefleet {
namespace {

std::vector<std::vector<bool>> Graph(int n, std::vector<std::pair<int, int>> edges) {
  std::vector<std::vector<bool>> a(n, std::vector<bool>(n, false));
  for (auto [u, v] : edges) a[u][v] = a[v][u] = true;
  return a;
}

TEST(MaximalCliquesTest, TwoTrianglesSharingAVertexAndAnIsolatedOne) {
  // 0-1-2 triangle, 2-3-4 triangle, 5 alone.
  auto cliques = MaximalCliques(Graph(6, {{0, 1}, {1, 2}, {0, 2}, {2, 3}, {3, 4}, {2, 4}}));
  EXPECT_EQ(cliques, (std::vector<std::vector<int>>{{0, 1, 2}, {2, 3, 4}, {5}}));
}

TEST(MaximalCliquesTest, CompleteGraphIsOneClique) {
  std::vector<std::pair<int, int>> edges;
  for (int i = 0; i < 5; ++i)
    for (int j = i + 1; j < 5; ++j) edges.push_back({i, j});
  EXPECT_EQ(MaximalCliques(Graph(5, edges)), (std::vector<std::vector<int>>{{0, 1, 2, 3, 4}}));
}

TEST(MaximalCliquesTest, PathGivesItsEdges) {
  EXPECT_EQ(MaximalCliques(Graph(4, {{0, 1}, {1, 2}, {2, 3}})),
            (std::vector<std::vector<int>>{{0, 1}, {1, 2}, {2, 3}}));
}

TEST(MaximalCliquesTest, EmptyGraph) { EXPECT_TRUE(MaximalCliques({}).empty()); }

// Moon–Moser graph K(3,3,3) complement style: 3 disjoint triples, every
// vertex linked to every vertex outside its triple -> 3^3 = 27 cliques.
TEST(MaximalCliquesTest, MoonMoserGraphHasAllItsCliques) {
  std::vector<std::pair<int, int>> edges;
  for (int i = 0; i < 9; ++i)
    for (int j = i + 1; j < 9; ++j)
      if (i / 3 != j / 3) edges.push_back({i, j});
  EXPECT_EQ(MaximalCliques(Graph(9, edges)).size(), 27u);
}

}  // namespace
}  // namespace tunefleet
