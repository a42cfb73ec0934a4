// MakeTuner: builds a search strategy by name, for command lines and job
// specs ("grid", "random"; "ga" and "xgb" will join them).
#ifndef TUNEFLEET_TUNER_CORE_TUNERS_TUNER_FACTORY_H_
#define TUNEFLEET_TUNER_CORE_TUNERS_TUNER_FACTORY_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tuner_core/space/config_space.h"
#include "tuner_core/tuners/tuner.h"

namespace tunefleet {

// The names MakeTuner accepts, in a stable order.
std::vector<std::string> TunerNames();

// `seed` feeds every random choice the tuner makes (ignored by "grid").
// InvalidArgument for an unknown name.
absl::StatusOr<std::unique_ptr<Tuner>> MakeTuner(const std::string& name, const ConfigSpace& space,
                                                 uint64_t seed);

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_TUNERS_TUNER_FACTORY_H_
