#include "tuner_core/measure/validation.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace tunefleet {

MeasureOptions ValidationMeasureOptions(const MeasureOptions& search) {
  MeasureOptions v = search;
  v.repeat = std::min(kMaxRepeat, std::max(6, 2 * search.repeat));
  v.max_repeat = std::min(kMaxRepeat, std::max(3 * v.repeat, search.EffectiveMaxRepeat()));
  v.target_rel_ci = search.target_rel_ci > 0
                        ? std::min(search.target_rel_ci, kValidationTargetRelCi)
                        : kValidationTargetRelCi;
  const double scale = static_cast<double>(v.max_repeat) / search.EffectiveMaxRepeat();
  v.timeout_s = std::min(kMaxMeasureTimeoutS, search.timeout_s * std::max(1.0, scale));
  v.check_correctness = false;
  return v;
}

std::vector<int> TopKByCost(const std::vector<double>& costs, int k) {
  std::vector<int> order;
  for (int i = 0; i < static_cast<int>(costs.size()); ++i) {
    if (std::isfinite(costs[i]) && costs[i] > 0) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return costs[a] < costs[b]; });
  if (k >= 0 && static_cast<int>(order.size()) > k) order.resize(k);
  return order;
}

std::vector<std::pair<int, int>> ValidationOrder(int candidates, int passes) {
  std::vector<std::pair<int, int>> order;
  for (int pass = 0; pass < passes; ++pass) {
    for (int i = 0; i < candidates; ++i) {
      order.emplace_back(pass % 2 == 0 ? i : candidates - 1 - i, pass);
    }
  }
  return order;
}

void Validation::Add(const MeasureResult& pass) {
  if (!pass.ok() || pass.costs.empty()) {
    ++failed_passes;
    return;
  }
  pass_costs.push_back(pass.MeanCost());
  timed_repeats += pass.timed_repeats;
  if (pass.cost_rel_ci.has_value()) {
    max_rel_ci = std::max(max_rel_ci.value_or(0.0), *pass.cost_rel_ci);
  }
}

double Validation::cost_s() const {
  if (pass_costs.empty()) return 0;
  std::vector<double> sorted = pass_costs;
  std::sort(sorted.begin(), sorted.end());
  const size_t n = sorted.size();
  return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

double Validation::rel_spread() const {
  if (pass_costs.size() < 2) return 0;
  const auto [lo, hi] = std::minmax_element(pass_costs.begin(), pass_costs.end());
  return (*hi - *lo) / cost_s();
}

std::optional<int> BestValidated(const std::vector<Validation>& validations) {
  std::optional<int> best;
  for (int i = 0; i < static_cast<int>(validations.size()); ++i) {
    if (!validations[i].ok()) continue;
    if (!best || validations[i].cost_s() < validations[*best].cost_s()) best = i;
  }
  return best;
}

}  // namespace tunefleet
