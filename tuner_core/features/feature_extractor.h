// FeatureExtractor: turns configs of one task into fixed-length rows of
// floats for the cost model. `itervar` and `curve` instantiate the config into
// its loop nest (the template's IR) and analyse it (loop_nest_analysis.h);
// `knob` reads the config's values alone.
//
//   TF_ASSIGN_OR_RETURN(FeatureExtractor extractor, FeatureExtractor::Create(FeatureKind::kItervar,
//   task)); TF_ASSIGN_OR_RETURN(std::vector<float> row, extractor.Extract(config));
//
// Stateless after construction: Extract may run on several threads at once.
// The Task must outlive the extractor.
#ifndef TUNEFLEET_TUNER_CORE_FEATURES_FEATURE_EXTRACTOR_H_
#define TUNEFLEET_TUNER_CORE_FEATURES_FEATURE_EXTRACTOR_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tuner_core/space/config_space.h"
#include "tuner_core/templates/task.h"

namespace tunefleet {

enum class FeatureKind { kItervar, kKnob, kCurve };

// "itervar" | "knob" | "curve"; InvalidArgument otherwise.
[[nodiscard]] absl::StatusOr<FeatureKind> ParseFeatureKind(absl::string_view name);
const char* FeatureKindName(FeatureKind kind);

class FeatureExtractor {
 public:
  // InvalidArgument when the task's space is empty or its knobs cannot be read.
  [[nodiscard]] static absl::StatusOr<FeatureExtractor> Create(FeatureKind kind, const Task& task);

  FeatureKind kind() const { return kind_; }
  // Length of every row: kItervarFeatureLength or kCurveFeatureLength (the
  // same for every task), or the space's knob value count.
  int num_features() const { return num_features_; }

  // The row of one config of the task's space. The template's error (e.g.
  // InvalidArgument for a config it cannot apply) when instantiation fails.
  [[nodiscard]] absl::StatusOr<std::vector<float>> Extract(const Config& config) const;
  [[nodiscard]] absl::StatusOr<std::vector<float>> Extract(int64_t index) const;

 private:
  FeatureExtractor(FeatureKind kind, const Task* task, int num_features)
      : kind_(kind), task_(task), num_features_(num_features) {}

  FeatureKind kind_;
  const Task* task_;
  int num_features_;
};

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_FEATURES_FEATURE_EXTRACTOR_H_
