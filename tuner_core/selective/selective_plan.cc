#include "tuner_core/selective/selective_plan.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "tuner_core/selective/cliques.h"
#include "tuner_core/selective/similarity.h"

namespace tunefleet {

SelectivePlan PlanSelectiveTuning(const std::vector<const ConfigSpace*>& spaces,
                                  const SelectiveOptions& options) {
  const int n = static_cast<int>(spaces.size());
  SelectivePlan plan;
  plan.similarity.assign(n, std::vector<double>(n, 0.0));
  std::vector<std::vector<bool>> adjacency(n, std::vector<bool>(n, false));
  for (int i = 0; i < n; ++i) {
    plan.similarity[i][i] = 1.0;
    for (int j = i + 1; j < n; ++j) {
      const double s = SpaceSimilarity(*spaces[i], *spaces[j]);
      plan.similarity[i][j] = plan.similarity[j][i] = s;
      adjacency[i][j] = adjacency[j][i] = s > 0 && s >= options.threshold;
    }
  }
  plan.depends_on.resize(n);
  for (int i = 0; i < n; ++i) plan.depends_on[i] = i;

  std::vector<bool> is_representative(n, false);
  for (std::vector<int>& clique : MaximalCliques(adjacency)) {
    if (clique.size() < 2) continue;
    TaskCluster cluster;
    double best_sum = -1;
    for (int member : clique) {
      double sum = 0;
      for (int other : clique) {
        if (other != member) sum += plan.similarity[member][other];
      }
      if (sum > best_sum) {  // ties: the lower task index
        best_sum = sum;
        cluster.representative = member;
      }
    }
    cluster.members = std::move(clique);
    is_representative[cluster.representative] = true;
    plan.clusters.push_back(std::move(cluster));
  }
  // A task in several cliques follows the representative most like it; a
  // task that represents any clique is tuned itself.
  for (int t = 0; t < n; ++t) {
    if (is_representative[t]) continue;
    double best = -1;
    for (const TaskCluster& cluster : plan.clusters) {
      if (!std::binary_search(cluster.members.begin(), cluster.members.end(), t)) continue;
      const double s = plan.similarity[t][cluster.representative];
      if (s > best) {
        best = s;
        plan.depends_on[t] = cluster.representative;
      }
    }
  }
  return plan;
}

int TopK::Of(int measured) const {
  if (measured <= 0) return 0;
  if (percent > 0) {
    return std::clamp(static_cast<int>(std::ceil(measured * percent / 100.0)), 1, measured);
  }
  return std::min(count, measured);
}

[[nodiscard]] absl::StatusOr<TopK> ParseTopK(const std::string& text) {
  absl::string_view rest = text;
  TopK top;
  if (absl::ConsumePrefix(&rest, "top")) {
    int count = 0;
    if (absl::SimpleAtoi(rest, &count) && count > 0) {
      top.count = count;
      return top;
    }
  } else if (absl::ConsumeSuffix(&rest, "%")) {
    double percent = 0;
    if (absl::SimpleAtod(rest, &percent) && percent > 0 && percent <= 100) {
      top.percent = percent;
      return top;
    }
  }
  return absl::InvalidArgumentError(
      absl::StrCat("selective top-k '", text,
                   "' is neither topN (N > 0, e.g. top3) nor P% (0 < P <= 100, e.g. 5%)"));
}

}  // namespace tunefleet
