// Internal to the config_space library: builds one knob with its full,
// ordered list of choices for each Define* of ConfigSpace (split-factor
// enumeration, reorder permutations, annotation combinations, explicit
// candidates), in AutoTVM's order so config indices carry over.
// InvalidArgument (naming the knob) for bad parameters; ConfigSpace then
// checks the name against the space and appends the knob.
#ifndef TUNEFLEET_TUNER_CORE_SPACE_KNOB_CHOICES_H_
#define TUNEFLEET_TUNER_CORE_SPACE_KNOB_CHOICES_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tuner_core/space/config_space.h"
#include "tuner_core/space/knob.h"

namespace tunefleet {
namespace config_space_internal {

[[nodiscard]] absl::StatusOr<std::shared_ptr<const Knob>> MakeIntKnob(
    const std::string& name, std::vector<int64_t> candidates);
[[nodiscard]] absl::StatusOr<std::shared_ptr<const Knob>> MakeStringKnob(
    const std::string& name, std::vector<std::string> candidates);
[[nodiscard]] absl::StatusOr<std::shared_ptr<const Knob>> MakeSplitKnob(
    const std::string& name, int64_t extent, const SplitOptions& options);
[[nodiscard]] absl::StatusOr<std::shared_ptr<const Knob>> MakeReorderKnob(
    const std::string& name, int num_axes, const std::string& policy,
    std::vector<std::vector<int>> candidates);
[[nodiscard]] absl::StatusOr<std::shared_ptr<const Knob>> MakeAnnotateKnob(
    const std::string& name, int num_axes, const std::string& policy);

}  // namespace config_space_internal
}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_SPACE_KNOB_CHOICES_H_
