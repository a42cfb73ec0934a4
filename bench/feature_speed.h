// Feature extraction speed of one task, for the tuner benchmarks: configs per
// second on the calling thread, per feature kind.
#ifndef TUNEFLEET_BENCH_FEATURE_SPEED_H_
#define TUNEFLEET_BENCH_FEATURE_SPEED_H_

#include <cstdint>
#include <map>
#include <string>

#include "tuner_core/templates/task.h"

namespace tunefleet {

// itervar, curve and knob rows of `n` configs spread over the space (a
// stride co-prime to typical space sizes); keyed by FeatureKindName. A kind
// that cannot be built for the task is left out.
std::map<std::string, double> FeatureConfigsPerSecond(const Task& task, int64_t n);

}  // namespace tunefleet

#endif  // TUNEFLEET_BENCH_FEATURE_SPEED_H_
