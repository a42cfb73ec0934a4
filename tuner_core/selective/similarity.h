// Task similarity for selective tuning (AutoTVM's selective-tuning RFC): how
// much two tuning spaces overlap, and a config of one space carried into the
// other.
//
//   double s = SpaceSimilarity(task_a.space(), task_b.space());   // in [0, 1]
//   absl::StatusOr<Config> c = MapConfig(best_of_a, task_b.space());
//
// SpaceSimilarity is the Jaccard index of the two sets of configs, each config
// taken as its list of entities (knob name, kind, value), so two configs are
// the same when every knob has the same value. The spaces are products of
// their knobs' candidate sets, so it is computed per knob without enumerating:
// |A n B| = prod |A_k n B_k|, |A u B| = |A| + |B| - |A n B|. Spaces whose
// knobs differ in name, kind or order share nothing (0), as in the RFC. The
// RFC's own rate, the product of the per-knob Jaccard indices, is
// KnobwiseSimilarity.
#ifndef TUNEFLEET_TUNER_CORE_SELECTIVE_SIMILARITY_H_
#define TUNEFLEET_TUNER_CORE_SELECTIVE_SIMILARITY_H_

#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "tuner_core/space/config_space.h"

namespace tunefleet {

// Each knob's candidate entity values, in choice order (the "value" of the
// knob's AutoTVM entity for every choice).
std::vector<std::vector<nlohmann::json>> KnobCandidates(const ConfigSpace& space);

double SpaceSimilarity(const ConfigSpace& a, const ConfigSpace& b);
double KnobwiseSimilarity(const ConfigSpace& a, const ConfigSpace& b);

// The config of `to` whose every knob has `from`'s value; InvalidArgument
// naming the knob when a value is not among `to`'s candidates.
[[nodiscard]] absl::StatusOr<Config> MapConfig(const Config& from, const ConfigSpace& to);

// The config of `to` closest to `from`, knob by knob: a value `to` has is
// kept; otherwise the candidate nearest to it (integers and split factors by
// log ratio, other values: equal or not); a knob `from` lacks takes its
// first choice. Equals MapConfig whenever that succeeds. How a schedule
// carries into a space whose tile factors differ (e.g. other channel counts).
Config MapConfigNearest(const Config& from, const ConfigSpace& to);
// The same from a config's JSON (Config::ToJson(): its "entity" list), e.g.
// a record of another workload whose space is not at hand; a JSON without
// entities gives every knob its first choice.
Config MapConfigJsonNearest(const nlohmann::json& from, const ConfigSpace& to);

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_SELECTIVE_SIMILARITY_H_
