// RandomTuner: proposes configs uniformly at random without replacement
// (AutoTVM's RandomTuner), never repeating one and never proposing an index
// marked visited; it runs out once the whole space has been proposed.
//
// Works for spaces far larger than memory: nothing proportional to the space
// is stored, only the visited indices. Draws are rejection-sampled against
// the visited set while at most half the space is visited; past that point
// (the space is then at most twice the visited set, so small) the remaining
// indices are listed once and shuffled, so the tail costs no retries.
//
// Randomness comes only from a std::mt19937_64 seeded by the caller, with
// hand-written bounded draws and shuffle (the standard distributions differ
// between libraries), so a seed replays the same sequence everywhere.
#ifndef TUNEFLEET_TUNER_CORE_TUNERS_RANDOM_TUNER_H_
#define TUNEFLEET_TUNER_CORE_TUNERS_RANDOM_TUNER_H_

#include <cstdint>
#include <random>
#include <vector>

#include "tuner_core/space/config_space.h"
#include "tuner_core/tuners/tuner.h"

namespace tunefleet {

class RandomTuner : public Tuner {
 public:
  RandomTuner(const ConfigSpace& space, uint64_t seed);

  bool HasNext() const override;

 protected:
  std::vector<Config> ProposeBatch(int batch_size) override;

 private:
  // An unvisited index, uniformly. Requires HasNext().
  int64_t DrawUnvisited();

  std::mt19937_64 engine_;
  bool listed_remaining_ = false;
  // Once listed: the not-yet-visited indices in random order, consumed from
  // the back (entries marked visited since are skipped).
  std::vector<int64_t> remaining_;
};

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_TUNERS_RANDOM_TUNER_H_
