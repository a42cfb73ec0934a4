// RankingWeights: how far to trust each of several models that predict the
// same measurements, judged by how well each one *orders* the measurements
// made so far. This is the weighting of RGPE (Feurer, Letham, Bakshy,
// "Scalable Meta-Learning for Bayesian Optimization using Ranking-Weighted
// Gaussian Process Ensembles", 2018): resample the measured points with
// replacement many times, count in each resample the pairs every model
// orders wrongly, and give each model the share of resamples in which it
// made the fewest mistakes. Ranking, not error, is what a tuner needs: a
// model trained on another shape may be off in scale and still pick the
// right configs.
//
// The xgb tuner uses it to weigh its history shapes' base models against
// its own results: a shape whose model orders this task's configs well
// takes over the history's weight, one that orders them no better than
// chance gets none.
//
//   RankingWeightsResult w = RankingWeights({base1_predictions, base2_predictions}, measured, 32,
//   seed);
//   // w.weights sum to 1 (or are all 0: no model beats chance)
#ifndef TUNEFLEET_TUNER_CORE_TUNERS_RANKING_WEIGHTS_H_
#define TUNEFLEET_TUNER_CORE_TUNERS_RANKING_WEIGHTS_H_

#include <cstdint>
#include <vector>

namespace tunefleet {

struct RankingWeightsResult {
  // One per model. Sum to 1 over the models that order better than chance
  // (accuracy > 0.5); all 0 when none does. Equal when there is no evidence
  // (fewer than two distinct measured values).
  std::vector<double> weights;
  // One per model: the fraction of pairs of measured points with different
  // values that the model orders like the measurements (a tie in the
  // predictions counts half); 0.5 without evidence.
  std::vector<double> accuracy;
  int64_t pairs = 0;  // pairs with different measured values (of the points used)
};

// predictions[m][i]: model m's prediction for point i; measured[i]: its
// measured value (higher is better for both). Every predictions[m] has
// measured.size() entries (checked). More than `max_points` points: a
// random subset of that many is used. Deterministic for a seed.
RankingWeightsResult RankingWeights(const std::vector<std::vector<float>>& predictions,
                                    const std::vector<double>& measured, int bootstrap_samples,
                                    uint64_t seed, int max_points = 256);

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_TUNERS_RANKING_WEIGHTS_H_
