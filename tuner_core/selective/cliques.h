// All maximal cliques of an undirected graph (Bron–Kerbosch with Tomita's
// pivoting), for clustering similar tasks in selective tuning.
//
//   std::vector<std::vector<int>> cliques = MaximalCliques(adjacency);
//
// `adjacency` is a symmetric n x n matrix (the diagonal is ignored). Each
// clique is sorted; the cliques come sorted by their first differing vertex.
// A vertex with no edges is a clique of one.
#ifndef TUNEFLEET_TUNER_CORE_SELECTIVE_CLIQUES_H_
#define TUNEFLEET_TUNER_CORE_SELECTIVE_CLIQUES_H_

#include <vector>

namespace tunefleet {

std::vector<std::vector<int>> MaximalCliques(const std::vector<std::vector<bool>>& adjacency);

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_SELECTIVE_CLIQUES_H_
