#include "tuner_core/tuners/diversity_filter.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"

namespace tunefleet {

std::vector<int> DiversePick(const std::vector<float>& scores,
                             const std::vector<std::vector<int64_t>>& points, int num,
                             double knob_weight) {
  const int n = static_cast<int>(std::min(scores.size(), points.size()));
  const size_t num_knobs = n > 0 ? points[0].size() : 0;
  std::vector<absl::flat_hash_set<int64_t>> covered(num_knobs);
  std::vector<char> taken(n, 0);
  std::vector<int> picked;
  while (static_cast<int>(picked.size()) < std::min(num, n)) {
    int best = -1;
    double best_gain = 0;
    for (int x = 0; x < n; ++x) {
      if (taken[x]) continue;
      double gain = scores[x];
      for (size_t k = 0; k < num_knobs; ++k) {
        if (!covered[k].contains(points[x][k])) gain += knob_weight;
      }
      if (best < 0 || gain > best_gain) {
        best = x;
        best_gain = gain;
      }
    }
    taken[best] = 1;
    picked.push_back(best);
    for (size_t k = 0; k < num_knobs; ++k) covered[k].insert(points[best][k]);
  }
  return picked;
}

}  // namespace tunefleet
