#include "tuner_core/tuners/grid_tuner.h"

#include <utility>

namespace tunefleet {

GridTuner::GridTuner(const ConfigSpace& space) : Tuner(space) {}

bool GridTuner::HasNext() const { return num_unvisited() > 0; }

std::vector<Config> GridTuner::ProposeBatch(int batch_size) {
  std::vector<Config> batch;
  while (static_cast<int>(batch.size()) < batch_size && next_index_ < space().size()) {
    const int64_t index = next_index_++;
    if (IsVisited(index)) continue;
    batch.push_back(Propose(index));
  }
  return batch;
}

}  // namespace tunefleet
