// Selective tuning's plan for a model's tasks (AutoTVM's selective-tuning
// RFC, `mark_depend`): the pairwise similarity matrix, a graph with an edge
// where similarity >= threshold, its maximal cliques as clusters, and per
// cluster a representative, the member with the largest similarity sum to
// the others. Representatives are tuned first; every other task measures its
// representative's top-k configs mapped into its own space, and may tune on.
//
//   SelectivePlan plan = PlanSelectiveTuning(spaces, {.threshold = 0.01});
//   for (int t = 0; t < n; ++t) if (plan.IsRepresentative(t)) ... tune t ...
//   absl::StatusOr<TopK> top = ParseTopK("top3");   // or "5%"
#ifndef TUNEFLEET_TUNER_CORE_SELECTIVE_SELECTIVE_PLAN_H_
#define TUNEFLEET_TUNER_CORE_SELECTIVE_SELECTIVE_PLAN_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tuner_core/space/config_space.h"

namespace tunefleet {

struct SelectiveOptions {
  double threshold = 0.01;  // the RFC's edge threshold
};

struct TaskCluster {
  std::vector<int> members;  // sorted task indices, two or more
  int representative = -1;
};

struct SelectivePlan {
  std::vector<std::vector<double>> similarity;  // n x n, 1 on the diagonal
  std::vector<TaskCluster> clusters;            // maximal cliques of two or more
  // For each task: the task whose configs it starts from; itself for a
  // representative and for a task similar to no other.
  std::vector<int> depends_on;

  bool IsRepresentative(int task) const { return depends_on[task] == task; }
};

// `spaces[i]` is task i's space; tasks of different templates must have
// different knob lists or be given as separate calls (the similarity of
// spaces that differ in any knob name is 0).
SelectivePlan PlanSelectiveTuning(const std::vector<const ConfigSpace*>& spaces,
                                  const SelectiveOptions& options);

// How many of a representative's best configs a dependent task measures:
// "topN" (N configs) or "P%" (P percent of the representative's successful
// measurements, at least one).
struct TopK {
  int count = 3;
  double percent = 0;  // > 0 for the "P%" form
  // The number of configs to take from `measured` successful ones.
  int Of(int measured) const;
};

// "top3", "top10", "5%"; InvalidArgument naming the text otherwise.
[[nodiscard]] absl::StatusOr<TopK> ParseTopK(const std::string& text);

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_SELECTIVE_SELECTIVE_PLAN_H_
