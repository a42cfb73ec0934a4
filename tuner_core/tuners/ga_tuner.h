// GaTuner: genetic search (AutoTVM's GATuner). A generation of pop_size
// configs is proposed; the next one is bred from the results received so
// far: the elite_num best configs ever seen survive as parents, parents are
// drawn with probability proportional to their throughput, a child takes the
// knobs of one parent up to a random cut and the other's after it, and each
// knob mutates to a random choice with mutation_prob. Children are never
// configs already visited. The first generation is random.
//
//   GaTunerOptions options;           // pop_size 100, elite_num 3, mutation_prob 0.1
//   options.seed = 1;
//   TF_ASSIGN_OR_RETURN(auto tuner, GaTuner::Create(space, options));
//
// Asynchronous use: NextBatch(k) with any k and Update() with any results in
// any order (also of configs it never proposed) are fine. A new generation is
// bred when NextBatch has proposed all of the current one, from the results
// that have arrived by then (results still in flight join the next
// breeding), so NextBatch never waits for results.
#ifndef TUNEFLEET_TUNER_CORE_TUNERS_GA_TUNER_H_
#define TUNEFLEET_TUNER_CORE_TUNERS_GA_TUNER_H_

#include <cstdint>
#include <memory>
#include <random>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tuner_core/space/config_space.h"
#include "tuner_core/tuners/tuner.h"

namespace tunefleet {

struct GaTunerOptions {
  int pop_size = 100;
  int elite_num = 3;
  double mutation_prob = 0.1;
  uint64_t seed = 0;

  // InvalidArgument naming the first bad field.
  [[nodiscard]] absl::Status Validate() const;
};

class GaTuner : public Tuner {
 public:
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<GaTuner>> Create(
      const ConfigSpace& space, const GaTunerOptions& options);

  bool HasNext() const override;
  void Update(const std::vector<TrialResult>& results) override;

  // (config index, throughput = 1 / mean cost) of the elites, best first.
  const std::vector<std::pair<int64_t, double>>& elites() const { return elites_; }
  // Generations bred so far (the random first one is generation 0).
  int generation() const { return generation_; }

 protected:
  std::vector<Config> ProposeBatch(int batch_size) override;

 private:
  GaTuner(const ConfigSpace& space, const GaTunerOptions& options);

  void Breed();

  const GaTunerOptions options_;
  const std::vector<int64_t> dims_;
  std::mt19937_64 engine_;
  std::vector<int64_t> genes_;  // the current generation, in proposal order
  size_t next_gene_ = 0;
  int generation_ = 0;
  // Results received since the last breeding: the next breeding's parents.
  std::vector<std::pair<int64_t, double>> pool_;
  std::vector<std::pair<int64_t, double>> elites_;
};

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_TUNERS_GA_TUNER_H_
