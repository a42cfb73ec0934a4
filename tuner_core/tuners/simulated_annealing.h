// SimulatedAnnealing: finds configs with the highest predicted score in a
// config space too large to score exhaustively (AutoTVM's
// SimulatedAnnealingOptimizer). `parallel_size` chains walk the space in
// lockstep, each step changing one knob of each chain's point to another
// choice; a move is accepted with probability exp(min((new - old) / T, 1)),
// the temperature falling linearly from temp_start to temp_end over n_iter
// steps. Every scored point competes for a top-`num` list; the run ends after
// n_iter steps, or early_stop steps without a change to that list. With
// `persistent`, the next run starts the chains where this one left them.
//
//   SimulatedAnnealing sa(space.KnobDims(), options);
//   TF_ASSIGN_OR_RETURN(std::vector<int64_t> best,
//                       sa.FindMaximums(score, 64, [&](int64_t i) { return visited(i); }, engine));
//
// Scores come a batch (one point per chain) at a time, so a cost model
// predicts all chains in one call.
#ifndef TUNEFLEET_TUNER_CORE_TUNERS_SIMULATED_ANNEALING_H_
#define TUNEFLEET_TUNER_CORE_TUNERS_SIMULATED_ANNEALING_H_

#include <cstdint>
#include <functional>
#include <random>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tunefleet {

struct SimulatedAnnealingOptions {
  // AutoTVM runs 500 steps. With chains seeded at the best measured configs
  // (XgbTunerOptions::sa_seeds) 200 find plans as good, at 2/5 of the cost
  // (bench/tuner_bench).
  int n_iter = 200;
  int parallel_size = 128;
  int early_stop = 50;
  double temp_start = 1.0;
  double temp_end = 0.0;
  bool persistent = true;

  // InvalidArgument naming the first bad field.
  [[nodiscard]] absl::Status Validate() const;
};

class SimulatedAnnealing {
 public:
  // Higher is better; one score per index, same order.
  using ScoreFunction =
      std::function<absl::StatusOr<std::vector<float>>(const std::vector<int64_t>& indices)>;
  // Indices that may be walked through but never returned (e.g. measured).
  using ExcludeFunction = std::function<bool(int64_t index)>;

  // `dims`: the number of choices of each knob (ConfigSpace::KnobDims()).
  SimulatedAnnealing(std::vector<int64_t> dims, SimulatedAnnealingOptions options);

  // Up to `num` distinct, non-excluded indices with the highest scores seen,
  // best first (ties: the earlier seen). Fewer only when fewer distinct
  // non-excluded points were scored. InvalidArgument for bad options or
  // num < 0; the score function's error if it fails.
  [[nodiscard]] absl::StatusOr<std::vector<int64_t>> FindMaximums(const ScoreFunction& score,
                                                                  int num,
                                                                  const ExcludeFunction& exclude,
                                                                  std::mt19937_64& engine);

  // The next run (only) starts chains at these points: the first
  // min(size, parallel_size) chains, in order; the others start where they
  // would have. Indices outside the space are dropped.
  void SeedPoints(const std::vector<int64_t>& points);

  // Steps of the last run (<= n_iter) and points it scored.
  int last_steps() const { return last_steps_; }
  int64_t last_scored() const { return last_scored_; }

 private:
  int64_t RandomWalk(int64_t index, std::mt19937_64& engine) const;

  const std::vector<int64_t> dims_;
  const SimulatedAnnealingOptions options_;
  int64_t space_size_ = 1;
  std::vector<int64_t> points_;  // chain states kept between runs (persistent)
  std::vector<int64_t> seeds_;   // starting points of the next run
  int last_steps_ = 0;
  int64_t last_scored_ = 0;
};

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_TUNERS_SIMULATED_ANNEALING_H_
