// `knob` features: the config's own values, no loop nest needed. Per knob in
// definition order: an "ot" int knob gives its value, an "ot" string knob the
// position of its choice, a split all its loop sizes (outer first), a reorder
// its permutation, an annotation 0 none / 1 unroll / 2 vec per axis. The
// length depends on the space only (KnobFeatureLength).
#ifndef TUNEFLEET_TUNER_CORE_FEATURES_KNOB_FEATURES_H_
#define TUNEFLEET_TUNER_CORE_FEATURES_KNOB_FEATURES_H_

#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tuner_core/space/config_space.h"

namespace tunefleet::features {

// Appends the knob values of `config`, a config of `space`. InvalidArgument
// (or NotFound, naming the knob) when the config is of another space.
[[nodiscard]] absl::Status AppendKnobFeatures(const ConfigSpace& space, const Config& config,
                                              std::vector<float>& out);

// Number of values AppendKnobFeatures appends for configs of `space`.
[[nodiscard]] absl::StatusOr<int> KnobFeatureLength(const ConfigSpace& space);

}  // namespace tunefleet::features

#endif  // TUNEFLEET_TUNER_CORE_FEATURES_KNOB_FEATURES_H_
