// GridTuner: proposes every config of the space in index order (AutoTVM's
// GridSearchTuner), skipping indices marked visited. Deterministic; useful
// for small spaces and as the baseline that other strategies must beat.
#ifndef TUNEFLEET_TUNER_CORE_TUNERS_GRID_TUNER_H_
#define TUNEFLEET_TUNER_CORE_TUNERS_GRID_TUNER_H_

#include <cstdint>
#include <vector>

#include "tuner_core/space/config_space.h"
#include "tuner_core/tuners/tuner.h"

namespace tunefleet {

class GridTuner : public Tuner {
 public:
  explicit GridTuner(const ConfigSpace& space);

  bool HasNext() const override;

 protected:
  std::vector<Config> ProposeBatch(int batch_size) override;

 private:
  int64_t next_index_ = 0;  // every index below this was proposed or skipped
};

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_TUNERS_GRID_TUNER_H_
