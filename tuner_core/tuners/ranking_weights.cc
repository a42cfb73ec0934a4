#include "tuner_core/tuners/ranking_weights.h"

#include <algorithm>
#include <numeric>
#include <random>

#include "common/check.h"
#include "tuner_core/tuners/search_util.h"

namespace tunefleet {
namespace {

// Mistakes of one model over the pairs of `points` with different measured
// values: 1 for a pair ordered the wrong way, 0.5 for a tie in the
// prediction. Also counts those pairs.
double Mistakes(const std::vector<float>& predicted, const std::vector<double>& measured,
                const std::vector<size_t>& points, int64_t* pairs) {
  double mistakes = 0;
  int64_t counted = 0;
  for (size_t a = 0; a < points.size(); ++a) {
    for (size_t b = a + 1; b < points.size(); ++b) {
      const size_t i = points[a], j = points[b];
      if (measured[i] == measured[j]) continue;
      ++counted;
      const bool i_better = measured[i] > measured[j];
      if (predicted[i] == predicted[j]) {
        mistakes += 0.5;
      } else if ((predicted[i] > predicted[j]) != i_better) {
        mistakes += 1;
      }
    }
  }
  if (pairs != nullptr) *pairs = counted;
  return mistakes;
}

}  // namespace

RankingWeightsResult RankingWeights(const std::vector<std::vector<float>>& predictions,
                                    const std::vector<double>& measured, int bootstrap_samples,
                                    uint64_t seed, int max_points) {
  const size_t models = predictions.size();
  for (const std::vector<float>& p : predictions) TF_CHECK(p.size() == measured.size());
  RankingWeightsResult result;
  result.weights.assign(models, models > 0 ? 1.0 / static_cast<double>(models) : 0.0);
  result.accuracy.assign(models, 0.5);
  if (models == 0) return result;

  std::mt19937_64 engine(seed);
  std::vector<size_t> points(measured.size());
  std::iota(points.begin(), points.end(), 0);
  if (max_points > 0 && points.size() > static_cast<size_t>(max_points)) {
    // Partial Fisher-Yates with the portable draw: the first max_points.
    for (size_t i = 0; i < static_cast<size_t>(max_points); ++i) {
      std::swap(points[i], points[i + UniformBelow(engine, points.size() - i)]);
    }
    points.resize(static_cast<size_t>(max_points));
    std::sort(points.begin(), points.end());
  }
  std::vector<double> mistakes(models);
  for (size_t m = 0; m < models; ++m)
    mistakes[m] = Mistakes(predictions[m], measured, points, &result.pairs);
  if (result.pairs == 0) return result;  // no evidence: equal weights
  for (size_t m = 0; m < models; ++m)
    result.accuracy[m] = 1.0 - mistakes[m] / static_cast<double>(result.pairs);

  // Share of resamples in which each model makes the fewest mistakes
  // (a tie splits the resample).
  std::vector<double> wins(models, 0.0);
  std::vector<size_t> sample(points.size());
  for (int s = 0; s < bootstrap_samples; ++s) {
    for (size_t& p : sample) p = points[UniformBelow(engine, points.size())];
    std::vector<double> sample_mistakes(models);
    for (size_t m = 0; m < models; ++m)
      sample_mistakes[m] = Mistakes(predictions[m], measured, sample, nullptr);
    const double fewest = *std::min_element(sample_mistakes.begin(), sample_mistakes.end());
    const double winners =
        static_cast<double>(std::count(sample_mistakes.begin(), sample_mistakes.end(), fewest));
    for (size_t m = 0; m < models; ++m) {
      if (sample_mistakes[m] == fewest) wins[m] += 1.0 / winners;
    }
  }
  // Only models that order better than chance count.
  double eligible_wins = 0;
  size_t eligible = 0;
  for (size_t m = 0; m < models; ++m) {
    if (result.accuracy[m] > 0.5) {
      eligible_wins += wins[m];
      ++eligible;
    }
  }
  for (size_t m = 0; m < models; ++m) {
    if (result.accuracy[m] <= 0.5) {
      result.weights[m] = 0;
    } else if (eligible_wins > 0) {
      result.weights[m] = wins[m] / eligible_wins;
    } else {
      result.weights[m] =
          1.0 / static_cast<double>(eligible);  // no resample: only better-than-chance ones share
    }
  }
  return result;
}

}  // namespace tunefleet
