#include "tuner_core/tuners/random_tuner.h"

#include <utility>

#include "common/check.h"
#include "tuner_core/tuners/search_util.h"

namespace tunefleet {

RandomTuner::RandomTuner(const ConfigSpace& space, uint64_t seed) : Tuner(space), engine_(seed) {}

bool RandomTuner::HasNext() const { return num_unvisited() > 0; }

int64_t RandomTuner::DrawUnvisited() {
  TF_CHECK(num_unvisited() > 0);
  const int64_t size = space().size();
  if (!listed_remaining_ && num_visited() >= size - num_visited()) {
    // At least half visited: rejection sampling would need two or more draws
    // per index and degrade towards the end. List the rest once instead.
    for (int64_t index = 0; index < size; ++index) {
      if (!IsVisited(index)) remaining_.push_back(index);
    }
    for (size_t i = remaining_.size(); i > 1; --i) {  // Fisher-Yates
      std::swap(remaining_[i - 1], remaining_[UniformBelow(engine_, i)]);
    }
    listed_remaining_ = true;
  }
  if (listed_remaining_) {
    while (true) {
      TF_CHECK(!remaining_.empty());  // num_unvisited() > 0
      const int64_t index = remaining_.back();
      remaining_.pop_back();
      if (!IsVisited(index)) return index;
    }
  }
  while (true) {
    const int64_t index = static_cast<int64_t>(UniformBelow(engine_, static_cast<uint64_t>(size)));
    if (!IsVisited(index)) return index;
  }
}

std::vector<Config> RandomTuner::ProposeBatch(int batch_size) {
  std::vector<Config> batch;
  while (static_cast<int>(batch.size()) < batch_size && HasNext()) {
    const int64_t index = DrawUnvisited();
    batch.push_back(Propose(index));
  }
  return batch;
}

}  // namespace tunefleet
