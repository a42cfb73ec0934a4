#include "tuner_core/features/feature_extractor.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "tuner_core/features/curve_features.h"
#include "tuner_core/features/itervar_features.h"
#include "tuner_core/features/knob_features.h"
#include "tuner_core/features/loop_nest_analysis.h"

namespace tunefleet {

[[nodiscard]] absl::StatusOr<FeatureKind> ParseFeatureKind(absl::string_view name) {
  if (name == "itervar") return FeatureKind::kItervar;
  if (name == "knob") return FeatureKind::kKnob;
  if (name == "curve") return FeatureKind::kCurve;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown feature type \"", name, "\" (known: itervar, knob, curve)"));
}

const char* FeatureKindName(FeatureKind kind) {
  switch (kind) {
    case FeatureKind::kItervar:
      return "itervar";
    case FeatureKind::kKnob:
      return "knob";
    case FeatureKind::kCurve:
      return "curve";
  }
  return "itervar";
}

absl::StatusOr<FeatureExtractor> FeatureExtractor::Create(FeatureKind kind, const Task& task) {
  if (task.space().size() < 1)
    return absl::InvalidArgumentError("the task's config space is empty");
  int num_features = 0;
  switch (kind) {
    case FeatureKind::kItervar:
      num_features = features::kItervarFeatureLength;
      break;
    case FeatureKind::kCurve:
      num_features = features::kCurveFeatureLength;
      break;
    case FeatureKind::kKnob: {
      TF_ASSIGN_OR_RETURN(num_features, features::KnobFeatureLength(task.space()));
      break;
    }
  }
  return FeatureExtractor(kind, &task, num_features);
}

absl::StatusOr<std::vector<float>> FeatureExtractor::Extract(const Config& config) const {
  std::vector<float> row;
  row.reserve(num_features_);
  if (kind_ == FeatureKind::kKnob) {
    TF_RETURN_IF_ERROR(features::AppendKnobFeatures(task_->space(), config, row));
  } else {
    TF_ASSIGN_OR_RETURN(ir::LoweredFunc func, task_->tmpl().Instantiate(task_->workload(), config));
    TF_ASSIGN_OR_RETURN(features::LoopNestAnalysis nest, features::AnalyzeLoopNest(func));
    if (kind_ == FeatureKind::kItervar) {
      features::AppendItervarFeatures(nest, row);
    } else {
      features::AppendCurveFeatures(nest, row);
    }
  }
  if (static_cast<int>(row.size()) != num_features_) {
    return absl::InvalidArgumentError(absl::StrCat("config ", config.index(), " gives ", row.size(),
                                                   " features, the task ", num_features_));
  }
  return row;
}

absl::StatusOr<std::vector<float>> FeatureExtractor::Extract(int64_t index) const {
  TF_ASSIGN_OR_RETURN(Config config, task_->space().Get(index));
  return Extract(config);
}

}  // namespace tunefleet
