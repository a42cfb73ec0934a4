#include "tuner_core/features/knob_features.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace tunefleet::features {

[[nodiscard]] absl::Status AppendKnobFeatures(const ConfigSpace& space, const Config& config,
                                              std::vector<float>& out) {
  const std::vector<int64_t> choices = config.choice_indices();
  if (static_cast<int>(choices.size()) != space.num_knobs()) {
    return absl::InvalidArgumentError(
        absl::StrCat("config has ", choices.size(), " knobs, the space ", space.num_knobs()));
  }
  for (int i = 0; i < space.num_knobs(); ++i) {
    const std::string& name = space.knob_name(i);
    switch (space.knob_kind(i)) {
      case KnobKind::kOther: {
        absl::StatusOr<int64_t> value = config.GetInt(name);
        if (value.ok()) {
          out.push_back(static_cast<float>(*value));
        } else {
          // String candidates: their position is all a tree model needs.
          TF_RETURN_IF_ERROR(config.GetString(name).status());
          out.push_back(static_cast<float>(choices[i]));
        }
        break;
      }
      case KnobKind::kSplit: {
        TF_ASSIGN_OR_RETURN(std::vector<int64_t> sizes, config.GetSplit(name));
        for (int64_t s : sizes) out.push_back(static_cast<float>(s));
        break;
      }
      case KnobKind::kReorder: {
        TF_ASSIGN_OR_RETURN(std::vector<int> order, config.GetReorder(name));
        for (int axis : order) out.push_back(static_cast<float>(axis));
        break;
      }
      case KnobKind::kAnnotate: {
        TF_ASSIGN_OR_RETURN(std::vector<std::string> annotations, config.GetAnnotate(name));
        for (const std::string& a : annotations)
          out.push_back(a == "vec" ? 2.0f : a == "unroll" ? 1.0f : 0.0f);
        break;
      }
    }
  }
  return absl::OkStatus();
}

[[nodiscard]] absl::StatusOr<int> KnobFeatureLength(const ConfigSpace& space) {
  TF_ASSIGN_OR_RETURN(Config first, space.Get(0));
  std::vector<float> values;
  TF_RETURN_IF_ERROR(AppendKnobFeatures(space, first, values));
  return static_cast<int>(values.size());
}

}  // namespace tunefleet::features
