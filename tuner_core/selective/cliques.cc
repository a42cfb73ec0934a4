#include "tuner_core/selective/cliques.h"

#include <algorithm>
#include <set>

namespace tunefleet {
namespace {

class BronKerbosch {
 public:
  explicit BronKerbosch(const std::vector<std::vector<bool>>& adjacency) : adjacency_(adjacency) {}

  void Run(std::vector<int>& r, std::set<int> p, std::set<int> x) {
    if (p.empty() && x.empty()) {
      std::vector<int> clique = r;
      std::sort(clique.begin(), clique.end());
      cliques_.push_back(clique);
      return;
    }
    // Pivot: the vertex of P u X with the most neighbours in P; only
    // vertices not adjacent to it need to start a branch.
    int pivot = -1;
    size_t best = 0;
    for (const std::set<int>* set : {&p, &x}) {
      for (int u : *set) {
        size_t n = 0;
        for (int v : p) n += Adjacent(u, v);
        if (pivot < 0 || n > best) {
          pivot = u;
          best = n;
        }
      }
    }
    std::vector<int> candidates;
    for (int v : p) {
      if (!Adjacent(pivot, v)) candidates.push_back(v);
    }
    for (int v : candidates) {
      std::set<int> p_next, x_next;
      for (int w : p) {
        if (Adjacent(v, w)) p_next.insert(w);
      }
      for (int w : x) {
        if (Adjacent(v, w)) x_next.insert(w);
      }
      r.push_back(v);
      Run(r, std::move(p_next), std::move(x_next));
      r.pop_back();
      p.erase(v);
      x.insert(v);
    }
  }

  std::vector<std::vector<int>> TakeCliques() { return std::move(cliques_); }

 private:
  bool Adjacent(int u, int v) const { return u != v && adjacency_[u][v]; }

  const std::vector<std::vector<bool>>& adjacency_;
  std::vector<std::vector<int>> cliques_;
};

}  // namespace

std::vector<std::vector<int>> MaximalCliques(const std::vector<std::vector<bool>>& adjacency) {
  if (adjacency.empty()) return {};
  std::set<int> all;
  for (int i = 0; i < static_cast<int>(adjacency.size()); ++i) all.insert(i);
  BronKerbosch search(adjacency);
  std::vector<int> r;
  search.Run(r, all, {});
  std::vector<std::vector<int>> cliques = search.TakeCliques();
  std::sort(cliques.begin(), cliques.end());
  return cliques;
}

}  // namespace tunefleet
