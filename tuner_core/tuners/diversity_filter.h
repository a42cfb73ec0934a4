// DiversePick: keeps `num` of a list of candidate configs, trading predicted
// score against knob coverage (AutoTVM's submodular_pick): each pick maximises
// score + knob_weight x (number of knobs whose value no earlier pick has).
// The model-based tuner applies it to SA's top candidates so a plan does not
// spend all its trials on near-copies of one config.
#ifndef TUNEFLEET_TUNER_CORE_TUNERS_DIVERSITY_FILTER_H_
#define TUNEFLEET_TUNER_CORE_TUNERS_DIVERSITY_FILTER_H_

#include <cstdint>
#include <vector>

namespace tunefleet {

// `points[i]` is candidate i's per-knob choices, all of one length, and
// `scores[i]` its score. Returns positions into the candidates, in pick
// order (ties: the earlier candidate). At most min(num, candidates).
std::vector<int> DiversePick(const std::vector<float>& scores,
                             const std::vector<std::vector<int64_t>>& points, int num,
                             double knob_weight = 1.0);

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_TUNERS_DIVERSITY_FILTER_H_
