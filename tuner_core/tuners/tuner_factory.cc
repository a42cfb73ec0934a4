#include "tuner_core/tuners/tuner_factory.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tuner_core/tuners/grid_tuner.h"
#include "tuner_core/tuners/random_tuner.h"

namespace tunefleet {

std::vector<std::string> TunerNames() { return {"grid", "random"}; }

absl::StatusOr<std::unique_ptr<Tuner>> MakeTuner(const std::string& name, const ConfigSpace& space,
                                                 uint64_t seed) {
  if (name == "grid") return std::make_unique<GridTuner>(space);
  if (name == "random") return std::make_unique<RandomTuner>(space, seed);
  return absl::InvalidArgumentError(absl::StrCat("unknown tuner '", name, "' (known: ",
                                                 absl::StrJoin(TunerNames(), ", "), ")"));
}

}  // namespace tunefleet
